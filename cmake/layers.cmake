# sf_layer(NAME DEPS a b ... [TEST_DEPS c ...]): the sources of src/symmflow/NAME
# (and of its subfolders: runtime/shm, runtime/net, ...) as an object library
# sf_NAME, and its unit tests (NAME/*_test.cc) as the executable NAME_tests linked
# with the objects of NAME and of every layer it depends on, plus TEST_DEPS:
# layers only its tests use (exec's tests compile programs with passes, which the
# executor itself must not use). Each layer can be built
# and tested on its own, so a broken upper layer never blocks a lower one.
set(SF_LAYERS "")
file(WRITE ${PROJECT_BINARY_DIR}/sf_layers.txt "")
function(sf_layer name)
  cmake_parse_arguments(L "" "" "DEPS;TEST_DEPS" ${ARGN})
  set(dir ${PROJECT_SOURCE_DIR}/src/symmflow/${name})
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${dir}/*.cc)
  file(GLOB_RECURSE tests CONFIGURE_DEPENDS ${dir}/*_test.cc)
  list(FILTER srcs EXCLUDE REGEX "_test\\.cc$")
  if(NOT srcs)
    set(srcs ${PROJECT_SOURCE_DIR}/cmake/empty.cc)
  endif()
  add_library(sf_${name} OBJECT ${srcs})
  target_include_directories(sf_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  # Link-only interface target: what this layer's objects need at link time.
  add_library(sf_${name}_deps INTERFACE)
  target_link_libraries(sf_${name} PUBLIC sf_${name}_deps)
  set(closure ${name})
  foreach(d IN LISTS L_DEPS)
    target_link_libraries(sf_${name} PUBLIC sf_${d})
    list(APPEND closure ${SF_CLOSURE_${d}})
  endforeach()
  list(REMOVE_DUPLICATES closure)
  set(SF_CLOSURE_${name} ${closure} CACHE INTERNAL "")
  # For the layering test (cmake/layering_check.cmake): which headers it may include.
  string(REPLACE ";" " " deps_text "${closure}")
  file(APPEND ${PROJECT_BINARY_DIR}/sf_layers.txt "${name}: ${deps_text}\n")
  if(tests AND SYMMFLOW_BUILD_TESTS)
    add_executable(${name}_tests ${tests})
    # Linking an object library directly adds its objects, so every layer of the
    # closure is linked directly (objects do not propagate transitively).
    set(test_closure ${closure})
    foreach(d IN LISTS L_TEST_DEPS)
      list(APPEND test_closure ${SF_CLOSURE_${d}})
    endforeach()
    list(REMOVE_DUPLICATES test_closure)
    foreach(l IN LISTS test_closure)
      target_link_libraries(${name}_tests PRIVATE sf_${l})
    endforeach()
    target_link_libraries(${name}_tests PRIVATE GTest::gtest GTest::gtest_main)
    gtest_discover_tests(${name}_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit ENVIRONMENT SYMMFLOW_VERIFY=1)
  endif()
  set(SF_LAYERS ${SF_LAYERS} ${name} PARENT_SCOPE)
endfunction()
