# symmflow used from another project, the two ways README.md ("Use from another
# project") gives, with examples/consumer as the other project:
#   MODE=install           `cmake --install BUILD --prefix WORK/prefix`; the consumer
#                          built with find_package(symmflow), and again with the flags
#                          of `pkg-config --cflags --libs symmflow`; each run under the
#                          installed `symmflow launch --nproc 2`
#   MODE=add_subdirectory  the consumer configured with symmflow's source tree added
#                          by add_subdirectory: configured and generated (not built),
#                          with symmflow's tests off
# cmake -DMODE=... -DSRC=<source> -DBUILD=<build> -DWORK=<scratch> -DCXX=<compiler>
#       -DGENERATOR=<generator> [-DLAUNCHER=ccache] [-DLINK_FLAGS=<exe linker flags>] -P tests/package/package_test.cmake

# Runs ARGN; stops the test with its output when it fails. Its stdout: run_out.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "${what} failed (exit ${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

# The consumer under the installed launcher: every rank says it got the sum.
function(expect_consumer_runs exe)
  run("the consumer (${exe}) under symmflow launch" ${WORK}/prefix/bin/symmflow launch --nproc 2 --timeout 120 -- ${exe})
  foreach(r 0 1)
    if(NOT run_out MATCHES "\\[rank ${r}\\] consumer \\(symmflow [0-9]+\\.[0-9]+\\.[0-9]+\\): rank ${r} of 2: all_reduce_ gave 3 everywhere")
      message(FATAL_ERROR "${exe}: no line from rank ${r}:\n${run_out}")
    endif()
  endforeach()
endfunction()

file(REMOVE_RECURSE ${WORK})
set(configure ${CMAKE_COMMAND} -S ${SRC}/examples/consumer -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
              -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if(LAUNCHER)
  list(APPEND configure -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
# An installed sanitized symmflow (the asan preset) needs its runtime linked
# first into the consumer too: the consumer links with the flags symmflow's own
# executables link with. (add_subdirectory builds symmflow with the consumer's
# own flags.)
if(LINK_FLAGS AND MODE STREQUAL "install")
  list(APPEND configure "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}")
endif()

if(MODE STREQUAL "install")
  run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
  run("the installed symmflow --version" ${WORK}/prefix/bin/symmflow --version)
  if(NOT run_out MATCHES "^symmflow [0-9]+\\.[0-9]+\\.[0-9]+")
    message(FATAL_ERROR "symmflow --version printed: ${run_out}")
  endif()
  # find_package(symmflow) -> symmflow::symmflow, fmt found by the package.
  run("configuring the consumer (find_package)" ${configure} -B ${WORK}/cmake -DCMAKE_PREFIX_PATH=${WORK}/prefix)
  run("building the consumer (find_package)" ${CMAKE_COMMAND} --build ${WORK}/cmake)
  expect_consumer_runs(${WORK}/cmake/consumer)
  # pkg-config, with the .pc file where the install put it.
  find_program(PKG_CONFIG pkg-config REQUIRED)
  file(GLOB_RECURSE pc ${WORK}/prefix/*/symmflow.pc)
  get_filename_component(pc_dir "${pc}" DIRECTORY)
  run("pkg-config" ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir} ${PKG_CONFIG} --cflags --libs symmflow)
  separate_arguments(flags UNIX_COMMAND "${run_out}")
  run("pkg-config libdir" ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir} ${PKG_CONFIG} --variable=libdir symmflow)
  string(STRIP "${run_out}" libdir)
  file(MAKE_DIRECTORY ${WORK}/pkgconfig)
  separate_arguments(link_flags UNIX_COMMAND "${LINK_FLAGS}")  # a sanitized install: see above
  run("compiling the consumer (pkg-config)" ${LAUNCHER} ${CXX} ${SRC}/examples/consumer/consumer.cc
      -o ${WORK}/pkgconfig/consumer ${link_flags} ${flags} -Wl,-rpath,${libdir})
  expect_consumer_runs(${WORK}/pkgconfig/consumer)
elseif(MODE STREQUAL "add_subdirectory")
  run("configuring the consumer (add_subdirectory)" ${configure} -B ${WORK}/sub -DSYMMFLOW_SOURCE_DIR=${SRC})
  file(READ ${WORK}/sub/CMakeCache.txt cache)
  if(NOT cache MATCHES "SYMMFLOW_BUILD_TESTS:BOOL=OFF")
    message(FATAL_ERROR "symmflow's tests are not off under add_subdirectory")
  endif()
  if(GENERATOR STREQUAL "Ninja")  # what the build holds: the consumer and symmflow, no tests
    file(READ ${WORK}/sub/build.ninja ninja)
    foreach(target "build consumer:" "build symmflow/symmflow:")
      string(FIND "${ninja}" "${target}" at)
      if(at EQUAL -1)
        message(FATAL_ERROR "no `${target}` rule in the generated build.ninja")
      endif()
    endforeach()
    string(FIND "${ninja}" "e2e_tests" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "symmflow's tests are in the consumer's build")
    endif()
  endif()
else()
  message(FATAL_ERROR "MODE must be install or add_subdirectory, found '${MODE}'")
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "symmflow used from another project (${MODE}): ok")
