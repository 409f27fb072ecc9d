# sf_dist_suite (dist_suite.cc): every collective and P2P form of symmflow::dist,
# checked bit for bit against a rank-order reference; prints a digest per rank
# that must be equal for a world size whatever backend runs it. Here: the shm
# backend under `symmflow launch` at 2, 3 and 4 ranks (4 are oversubscribed on
# small machines, so the sizes stay at 1-2 MiB).
add_executable(sf_dist_suite ${CMAKE_CURRENT_SOURCE_DIR}/dist_suite.cc)
target_link_libraries(sf_dist_suite PRIVATE symmflow fmt::fmt)
# Beside the `symmflow` launcher: build/<preset>/sf_dist_suite.
set_target_properties(sf_dist_suite PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

foreach(nproc 2 3 4)
  add_test(NAME dist_suite_shm_${nproc}
           COMMAND $<TARGET_FILE:symmflow_cli> launch --nproc ${nproc} --timeout 120 --
                   $<TARGET_FILE:sf_dist_suite>)
  set_tests_properties(dist_suite_shm_${nproc} PROPERTIES
                       LABELS e2e TIMEOUT 150
                       PASS_REGULAR_EXPRESSION "PASS [0-9]+ checks"
                       FAIL_REGULAR_EXPRESSION "MISMATCH")
endforeach()
