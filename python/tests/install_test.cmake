# Installs the python component of BUILD_DIR under PREFIX and imports pgroups from
# PREFIX/INSTALL_DIR with a clean PYTHONPATH, checking a layout.
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}" --component python
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install --component python failed: ${rc}")
endif()
if(IS_ABSOLUTE "${INSTALL_DIR}")
  set(site "${INSTALL_DIR}")
else()
  set(site "${PREFIX}/${INSTALL_DIR}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${site}" ${PYTHON} -c
  "import pgroups, os; assert os.path.dirname(pgroups.__file__) == os.path.join(r'${site}', 'pgroups'), pgroups.__file__; print(pgroups.Plan(8, pipeline=2, tensor=4, mode='2d').group_of(5, '2d_col'))"
  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\\[5, 7\\]")
  message(FATAL_ERROR "import from ${site} failed (${rc}): ${out}")
endif()
message(STATUS "pgroups imported from ${site}: ${out}")
