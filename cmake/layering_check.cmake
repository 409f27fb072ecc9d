cmake_minimum_required(VERSION 3.20)
# The layering rule (DESIGN.md §2), checked on the sources: a layer's code
# (src/symmflow/NAME, tests excluded) includes only headers of the layers it
# depends on. The link does not catch a header-only use, and the executor
# including a pass is exactly what the executable plan is there to prevent.
#   cmake -DSRC=<source dir> -DLAYERS_FILE=<build>/sf_layers.txt -P layering_check.cmake
# LAYERS_FILE: one line per layer, "name: dep dep ..." (its closure, itself included).
file(STRINGS ${LAYERS_FILE} lines)
set(bad "")
foreach(line IN LISTS lines)
  string(REGEX MATCH "^([a-z_]+):(.*)$" _ "${line}")
  set(layer ${CMAKE_MATCH_1})
  separate_arguments(allowed UNIX_COMMAND "${CMAKE_MATCH_2}")
  file(GLOB_RECURSE srcs ${SRC}/src/symmflow/${layer}/*.cc ${SRC}/src/symmflow/${layer}/*.h)
  list(FILTER srcs EXCLUDE REGEX "_test\\.cc$|_testing\\.h$|test_util\\.h$")
  foreach(f IN LISTS srcs)
    file(STRINGS ${f} incs REGEX "^#include \"symmflow/[a-z_]+/")
    foreach(inc IN LISTS incs)
      string(REGEX MATCH "symmflow/([a-z_]+)/" _ "${inc}")
      if(NOT CMAKE_MATCH_1 IN_LIST allowed)
        file(RELATIVE_PATH rel ${SRC} ${f})
        string(APPEND bad "  ${rel}: ${inc} (layer ${layer} may use: ${allowed})\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "layering: a layer includes a header of a layer it does not depend on:\n${bad}")
endif()
message(STATUS "layering: every layer includes only the layers it depends on")
