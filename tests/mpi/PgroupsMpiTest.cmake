# pgroups_add_mpi_test(<name> TARGET <exe> NP <n> [FILTER <gtest filter>] [TIMEOUT <s>]):
# one CTest case that runs <exe> on <n> ranks under mpirun. MPI jobs hold a common
# resource lock, so that `ctest -j` never runs two of them on the same cores at once.
if(NOT DEFINED PGROUPS_MPIEXEC_FLAGS)
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _pgroups_mpiexec_version ERROR_QUIET)
  if(_pgroups_mpiexec_version MATCHES "Open MPI|OpenRTE")
    # Open MPI: allow root (containers), more ranks than cores, and yielding while
    # waiting, without which oversubscribed ranks spin against each other.
    set(_pgroups_default_flags --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1)
  else()
    set(_pgroups_default_flags "")
  endif()
  set(PGROUPS_MPIEXEC_FLAGS "${_pgroups_default_flags}" CACHE STRING "Extra mpiexec flags for the MPI tests")
endif()

function(pgroups_add_mpi_test name)
  cmake_parse_arguments(ARG "" "TARGET;NP;FILTER;TIMEOUT" "" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  set(filter_args "")
  if(ARG_FILTER)
    set(filter_args "--gtest_filter=${ARG_FILTER}")
  endif()
  add_test(NAME ${name}
    COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${ARG_NP} ${MPIEXEC_PREFLAGS} ${PGROUPS_MPIEXEC_FLAGS}
            $<TARGET_FILE:${ARG_TARGET}> ${MPIEXEC_POSTFLAGS} ${filter_args})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS mpi RESOURCE_LOCK pgroups_mpi_ranks)
endfunction()
