# sf_dist_suite (dist_suite.cc): every collective and P2P form of symmflow::dist,
# checked bit for bit against a rank-order reference; prints a digest per rank
# that must be equal for a world size whatever backend runs it. Here: the shm
# backend under `symmflow launch` at 2, 3 and 4 ranks (4 are oversubscribed on
# small machines, so the sizes stay at 1-2 MiB), and a check that the digest
# does not depend on the protocol/algorithm thresholds.
add_executable(sf_dist_suite ${CMAKE_CURRENT_SOURCE_DIR}/dist_suite.cc)
target_link_libraries(sf_dist_suite PRIVATE symmflow fmt::fmt)
# Beside the `symmflow` launcher: build/<preset>/sf_dist_suite.
set_target_properties(sf_dist_suite PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})

foreach(nproc 2 3 4)
  add_test(NAME dist_suite_shm_${nproc}
           COMMAND $<TARGET_FILE:symmflow_cli> launch --nproc ${nproc} --timeout 120 --
                   $<TARGET_FILE:sf_dist_suite>)
  set_tests_properties(dist_suite_shm_${nproc} PROPERTIES
                       LABELS e2e TIMEOUT 150
                       PASS_REGULAR_EXPRESSION "PASS [0-9]+ checks"
                       FAIL_REGULAR_EXPRESSION "MISMATCH|peer failure|timeout after")
endforeach()

# The digests of a run with default thresholds and of one that forces the pull
# protocol, two-shot all_reduce, non-temporal stores and checked heaps must be
# equal: the digest depends on results only.
set(SF_DIST_SUITE_COMPARE ${CMAKE_CURRENT_BINARY_DIR}/dist_suite_compare.cmake)
file(WRITE ${SF_DIST_SUITE_COMPARE} [=[
# cmake -DLAUNCHER=... -DSUITE=... -DNPROC=... -P dist_suite_compare.cmake
function(run_suite out_var)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ARGN}
                          ${LAUNCHER} launch --nproc ${NPROC} --timeout 120 -- ${SUITE} --quick
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "sf_dist_suite with `${ARGN}` failed (${rc}):\n${out}\n${err}")
  endif()
  string(REGEX MATCHALL "digest rank=[0-9]+ world=[0-9]+ [0-9a-f]+" d "${out}")
  list(SORT d)
  list(LENGTH d n)
  if(NOT n EQUAL NPROC)
    message(FATAL_ERROR "expected ${NPROC} digest lines, got ${n}:\n${out}")
  endif()
  set(${out_var} "${d}" PARENT_SCOPE)
endfunction()
run_suite(a SYMMFLOW_CHECK_HEAP=0)
run_suite(b SYMMFLOW_CHECK_HEAP=1 SYMMFLOW_PUSH_MAX_BYTES=1 SYMMFLOW_ONE_SHOT_MAX_BYTES=1
          SYMMFLOW_NT_MIN_BYTES=4K)
run_suite(c SYMMFLOW_PUSH_MAX_BYTES=1M SYMMFLOW_ONE_SHOT_MAX_BYTES=64M)
if(NOT a STREQUAL b OR NOT a STREQUAL c)
  message(FATAL_ERROR "digests differ between thresholds:\n default: ${a}\n small:   ${b}\n large:   ${c}")
endif()
message(STATUS "digests equal across thresholds: ${a}")
]=])
add_test(NAME dist_suite_shm_3_thresholds
         COMMAND ${CMAKE_COMMAND} -DLAUNCHER=$<TARGET_FILE:symmflow_cli>
                 -DSUITE=$<TARGET_FILE:sf_dist_suite> -DNPROC=3 -P ${SF_DIST_SUITE_COMPARE})
set_tests_properties(dist_suite_shm_3_thresholds PROPERTIES LABELS e2e TIMEOUT 200)
