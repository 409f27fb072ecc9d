# sf_dist_suite as a real MPI job (the mpi backend), driven by mpi_tests.sh:
#   dist_suite_mpi_simulated   mpirun -np 4 / -np 2 with SYMMFLOW_RANKS_PER_NODE
#                              (simulated nodes); digests == `symmflow launch`'s
#   dist_suite_mpi_kill        rank 3 SIGKILLs itself under mpirun: non-zero exit
#                              within 10 s, rank 3 named, no /dev/shm/sf-* left
#   dist_suite_mpi_netns       2 hosts as network namespaces (netns_hosts.sh),
#                              mpirun over TCP; digests == shm's (root only)
#   dist_suite_mpi_kill_netns  the kill test across the 2 namespaces
# Each exits 77 (skipped) when it cannot run here (no mpirun, not root, ...).
if(MPI_CXX_FOUND AND TARGET sf_dist_suite)
  # Node numbering, peer_ptr and node groups as the mpi backend promises them.
  add_executable(sf_topology_check ${CMAKE_CURRENT_SOURCE_DIR}/topology_check.cc)
  target_link_libraries(sf_topology_check PRIVATE symmflow)
  set(_sf_mpi_driver ${CMAKE_CURRENT_SOURCE_DIR}/mpi_tests.sh)
  set(_sf_mpi_args --suite $<TARGET_FILE:sf_dist_suite> --cli $<TARGET_FILE:symmflow_cli>
                   --topology $<TARGET_FILE:sf_topology_check>)
  if(MPIEXEC_EXECUTABLE)
    list(APPEND _sf_mpi_args --mpirun ${MPIEXEC_EXECUTABLE})
  endif()
  foreach(_mode simulated kill netns kill-netns)
    string(REPLACE "-" "_" _name ${_mode})
    add_test(NAME dist_suite_mpi_${_name}
             COMMAND bash ${_sf_mpi_driver} ${_mode} ${_sf_mpi_args})
    set_tests_properties(dist_suite_mpi_${_name} PROPERTIES
                         SKIP_RETURN_CODE 77 LABELS multinode TIMEOUT 300)
  endforeach()
  # The namespace runs are heavy (and mpirun across namespaces dislikes a busy
  # machine); the kill test measures a deadline. Neither shares the machine.
  set_tests_properties(dist_suite_mpi_netns dist_suite_mpi_kill_netns dist_suite_mpi_kill
                       PROPERTIES RUN_SERIAL TRUE)
elseif(MPI_CXX_FOUND)
  message(STATUS "symmflow: sf_dist_suite not defined, the mpirun tests are not registered")
endif()
