# cmake -D ... -P run_consumers.cmake: the consumer test (see CMakeLists.txt).
#  1. install the build PGROUPS_BINARY_DIR into WORK_DIR/prefix;
#  2. configure and build find_package/ against that prefix (CMAKE_PREFIX_PATH), run it;
#  3. configure and build add_subdirectory/ over PGROUPS_SOURCE_DIR, only the consumer
#     and the libraries it links, run it.
# Each step stops the test with its output when it fails. WORK_DIR is emptied first,
# so nothing of an earlier run is reused.
cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS PGROUPS_SOURCE_DIR PGROUPS_BINARY_DIR CONSUMERS_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumers.cmake: -D ${var}=... is required")
  endif()
endforeach()
string(REPLACE "|" ";" PREFIX_PATH "${PREFIX_PATH}")
set(prefix "${WORK_DIR}/prefix")
set(config_args "")
set(build_config_args "")
if(CONFIG)
  set(config_args --config ${CONFIG})
  set(build_config_args -DCMAKE_BUILD_TYPE=${CONFIG})
endif()
set(common_args -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${build_config_args})

# run_step(<what> COMMAND...): runs the command, reports how long it took, and fails the
# test with the command's output when it exits non-zero. The output is in step_output.
function(run_step what)
  string(TIMESTAMP start "%s")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(TIMESTAMP end "%s")
  math(EXPR seconds "${end} - ${start}")
  if(NOT rc EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "${what} failed (${rc}) after ${seconds} s: ${command}\n${out}")
  endif()
  message(STATUS "${what}: done in ${seconds} s")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

# run_consumer(<build dir>): runs the consumer it built and checks what it prints.
function(run_consumer label build_dir)
  set(exe "${build_dir}/consumer")
  if(NOT EXISTS "${exe}" AND CONFIG)
    set(exe "${build_dir}/${CONFIG}/consumer")
  endif()
  run_step("${label}: run" "${exe}")
  if(NOT step_output MATCHES "consumer OK")
    message(FATAL_ERROR "${label}: the consumer did not print 'consumer OK':\n${step_output}")
  endif()
  message(STATUS "${label}: ${step_output}")
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

run_step("install into ${prefix}" ${CMAKE_COMMAND} --install ${PGROUPS_BINARY_DIR} --prefix ${prefix} ${config_args})
file(GLOB package_config "${prefix}/lib*/cmake/pgroups/pgroupsConfig.cmake")
if(NOT package_config OR NOT EXISTS "${prefix}/include/pgroups/parallel_context.hpp")
  message(FATAL_ERROR "the install into ${prefix} lacks pgroupsConfig.cmake or the headers:\n${step_output}")
endif()

set(fp_build "${WORK_DIR}/find_package")
run_step("find_package: configure" ${CMAKE_COMMAND} -S ${CONSUMERS_DIR}/find_package -B ${fp_build} ${common_args}
  "-DCMAKE_PREFIX_PATH=${prefix};${PREFIX_PATH}")
run_step("find_package: build" ${CMAKE_COMMAND} --build ${fp_build} -j2 ${config_args})
run_consumer("find_package" ${fp_build})

# NCCL is off here: it would only compile its backend again, and the find_package
# consumer above already links the installed one when this build has it.
set(as_build "${WORK_DIR}/add_subdirectory")
run_step("add_subdirectory: configure" ${CMAKE_COMMAND} -S ${CONSUMERS_DIR}/add_subdirectory -B ${as_build}
  ${common_args} -DPGROUPS_SOURCE_DIR=${PGROUPS_SOURCE_DIR} -DPGROUPS_WITH_NCCL=OFF
  "-DPGROUPS_SANITIZE=${SANITIZE}" "-DCMAKE_PREFIX_PATH=${PREFIX_PATH}")
run_step("add_subdirectory: build" ${CMAKE_COMMAND} --build ${as_build} -j2 --target consumer ${config_args})
run_consumer("add_subdirectory" ${as_build})

message(STATUS "both consumers OK")
