# `ctest -R public_header_hides_internals`: a user who includes only
# symmflow/symmflow.h cannot reach the runtime's internals. Each case below is
# one translation unit compiled with -fsyntax-only; case 0 (the public API)
# must compile, every other case must fail, so a failure means the access is
# refused and not that the flags are wrong.
#   cmake -DCXX=<compiler> -DSRC=<source dir> -P tests/public_header_check.cmake
set(cases
  # 0: the public API (commas, not semicolons: this is a CMake list)
  "(void)g.rank(), (void)g.heap().bytes_in_use(), (void)g.node_group(), (void)&g.signals()"
  "(void)g.segment()"                                   # the group segment
  "(void)g.extension<int>()"                            # per-layer state
  "(void)g.liveness()"
  "(void)g.net()"                                       # the network link
  "(void)sizeof(sf::runtime::GroupSegment)"
  "(void)sizeof(sf::dist::SignalPad)"                   # runtime/runtime.h only
  "(void)sf::dist::detail::GroupAccess::net(g)"
)
set(tu ${CMAKE_CURRENT_BINARY_DIR}/public_header_case.cc)
file(WRITE ${tu} "#include \"symmflow/symmflow.h\"\nnamespace sf = symmflow;\nint main() {\n  auto& g = sf::dist::world();\n  CASE;\n}\n")
set(i 0)
set(bad "")
foreach(c IN LISTS cases)
  execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -I${SRC}/src "-DCASE=${c}" ${tu}
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(i EQUAL 0 AND NOT rc EQUAL 0)
    message(FATAL_ERROR "the public API does not compile with only symmflow/symmflow.h:\n${err}")
  elseif(NOT i EQUAL 0 AND rc EQUAL 0)
    list(APPEND bad "${c}")
  endif()
  math(EXPR i "${i} + 1")
endforeach()
file(REMOVE ${tu})
if(bad)
  message(FATAL_ERROR "reachable through symmflow/symmflow.h, expected a compile error: ${bad}")
endif()
list(LENGTH cases n)
math(EXPR n "${n} - 1")
message(STATUS "public API compiles; ${n} internal accesses refused")
