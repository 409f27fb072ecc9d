# `cmake --install <build> [--prefix P]`: the headers, libsymmflow, the
# `symmflow` command and the CMake package (find_package(symmflow) gives
# symmflow::symmflow and symmflow::cli), plus symmflow.pc for pkg-config.
# tests/package/ builds examples/consumer against the installed result.
include(CMakePackageConfigHelpers)
set(SF_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/symmflow)

install(TARGETS symmflow symmflow_cli EXPORT symmflowTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Every layer's headers (the public ones include their neighbours'), not the
# command line's nor the tests' helpers.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/symmflow DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h"
        PATTERN "tools" EXCLUDE PATTERN "*_testing.h" EXCLUDE PATTERN "test_util.h" EXCLUDE)
install(FILES ${SF_GENERATED_INCLUDE}/symmflow/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/symmflow)

install(EXPORT symmflowTargets NAMESPACE symmflow:: DESTINATION ${SF_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/symmflowConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/symmflowConfig.cmake INSTALL_DESTINATION ${SF_CMAKE_DIR})
# 0.x: a minor version may change the API, so only the same minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/symmflowConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/symmflowConfig.cmake ${PROJECT_BINARY_DIR}/symmflowConfigVersion.cmake
        DESTINATION ${SF_CMAKE_DIR})

# symmflow.pc finds the prefix from its own place: the way up from its folder.
file(RELATIVE_PATH SF_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${PROJECT_SOURCE_DIR}/cmake/symmflow.pc.in ${PROJECT_BINARY_DIR}/symmflow.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/symmflow.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
