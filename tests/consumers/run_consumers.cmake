# cmake -D ... -P run_consumers.cmake: the consumer tests (see CMakeLists.txt). Each
# installs the build PGROUPS_BINARY_DIR into WORK_DIR/prefix first, then by CASE:
#  both          find_package/ against that prefix (CMAKE_PREFIX_PATH), built and run;
#                then add_subdirectory/ over PGROUPS_SOURCE_DIR, only the consumer and
#                the libraries it links, built and run.
#  without_cuda  find_package/ as a consumer of pgroups::layout only, with CUDA and NCCL
#                hidden from find_package; then the pgroups::context consumer the same
#                way, which must work where the installed libraries are shared or have
#                no NCCL, and otherwise fail to configure with the config file's message.
#  pkg_config    a program compiled and linked with `pkg-config --cflags --libs pgroups`
#                (and pgroups-context), then run; with NCCL, the installed `pgroups info`
#                runs without LD_LIBRARY_PATH and names NCCL's version.
#  export_paths  the installed export files name no absolute library path.
# Each step stops the test with its output when it fails. WORK_DIR is emptied first, so
# nothing of an earlier run is reused.
cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS PGROUPS_SOURCE_DIR PGROUPS_BINARY_DIR CONSUMERS_DIR WORK_DIR GENERATOR CXX_COMPILER CASE)
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
# The consumers compile with the launcher (ccache) of the build they test, if any.
if(CXX_COMPILER_LAUNCHER)
  list(APPEND common_args "-DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_COMPILER_LAUNCHER}")
endif()

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

# run_consumer(<label> <build dir> [<exe name>]): runs the consumer it built and checks
# what it prints.
function(run_consumer label build_dir)
  set(name consumer)
  if(ARGC GREATER 2)
    set(name "${ARGV2}")
  endif()
  set(exe "${build_dir}/${name}")
  if(NOT EXISTS "${exe}" AND CONFIG)
    set(exe "${build_dir}/${CONFIG}/${name}")
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
if(NOT package_config OR NOT EXISTS "${prefix}/include/pgroups/pgroups.hpp")
  message(FATAL_ERROR "the install into ${prefix} lacks pgroupsConfig.cmake or the headers:\n${step_output}")
endif()
get_filename_component(package_dir "${package_config}" DIRECTORY)
get_filename_component(libdir "${package_dir}/../.." ABSOLUTE)
file(GLOB shared_libraries "${libdir}/libpgroups_layout.so*" "${libdir}/libpgroups_layout*.dylib")
file(GLOB nccl_library "${libdir}/libpgroups_nccl.*")
if(EXISTS "${prefix}/include/pgroups/context/parallel_context.hpp" AND EXISTS "${package_dir}/pgroupsTargets.cmake")
  file(STRINGS "${package_dir}/pgroupsTargets.cmake" context_lines REGEX "pgroups::mpi")
endif()

if(CASE STREQUAL "both")
  set(fp_build "${WORK_DIR}/find_package")
  run_step("find_package: configure" ${CMAKE_COMMAND} -S ${CONSUMERS_DIR}/find_package -B ${fp_build} ${common_args}
    "-DCMAKE_PREFIX_PATH=${prefix};${PREFIX_PATH}")
  run_step("find_package: build" ${CMAKE_COMMAND} --build ${fp_build} -j2 ${config_args})
  run_consumer("find_package" ${fp_build})
  # The seed's classes from the installed headers, on 8 ranks.
  find_program(consumer_mpiexec NAMES mpiexec mpirun REQUIRED)
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
  run_step("find_package: seed consumer on 8 ranks" ${consumer_mpiexec} --oversubscribe --mca mpi_yield_when_idle 1
    -np 8 ${fp_build}/seed_consumer)
  if(NOT step_output MATCHES "seed consumer OK")
    message(FATAL_ERROR "the seed consumer did not print 'seed consumer OK':\n${step_output}")
  endif()

  # NCCL is off here: it would only compile its backend again, and the find_package
  # consumer above already links the installed one when this build has it.
  set(as_build "${WORK_DIR}/add_subdirectory")
  run_step("add_subdirectory: configure" ${CMAKE_COMMAND} -S ${CONSUMERS_DIR}/add_subdirectory -B ${as_build}
    ${common_args} -DPGROUPS_SOURCE_DIR=${PGROUPS_SOURCE_DIR} -DPGROUPS_WITH_NCCL=OFF
    "-DPGROUPS_SANITIZE=${SANITIZE}" "-DCMAKE_PREFIX_PATH=${PREFIX_PATH}")
  run_step("add_subdirectory: build" ${CMAKE_COMMAND} --build ${as_build} -j2 --target consumer ${config_args})
  run_consumer("add_subdirectory" ${as_build})
  message(STATUS "both consumers OK")

elseif(CASE STREQUAL "without_cuda")
  # As on a machine without the CUDA toolkit: find_package(CUDAToolkit) finds nothing,
  # and no NCCL_ROOT points anywhere.
  set(no_cuda -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON -DCUDAToolkit_ROOT=/nonexistent -DNCCL_ROOT=/nonexistent)
  set(ENV{NCCL_ROOT} "")
  set(ENV{NCCL_HOME} "")
  set(ENV{CUDA_PATH} "")
  set(layout_build "${WORK_DIR}/layout_only")
  run_step("layout consumer without CUDA: configure" ${CMAKE_COMMAND} -S ${CONSUMERS_DIR}/find_package -B ${layout_build}
    ${common_args} -DCONSUMER_LINKS_CONTEXT=OFF ${no_cuda} "-DCMAKE_PREFIX_PATH=${prefix};${PREFIX_PATH}")
  if(step_output MATCHES "Found CUDAToolkit")
    message(FATAL_ERROR "the CUDA toolkit was found although hidden:\n${step_output}")
  endif()
  run_step("layout consumer without CUDA: build" ${CMAKE_COMMAND} --build ${layout_build} -j2 ${config_args})
  run_consumer("layout consumer without CUDA" ${layout_build})

  if(context_lines)
    set(context_build "${WORK_DIR}/context")
    set(context_configure ${CMAKE_COMMAND} -S ${CONSUMERS_DIR}/find_package -B ${context_build} ${common_args}
      -DCONSUMER_LINKS_CONTEXT=ON ${no_cuda} "-DCMAKE_PREFIX_PATH=${prefix};${PREFIX_PATH}")
    if(shared_libraries OR NOT nccl_library)
      run_step("context consumer without CUDA: configure" ${context_configure})
      run_step("context consumer without CUDA: build" ${CMAKE_COMMAND} --build ${context_build} -j2 ${config_args})
      run_consumer("context consumer without CUDA" ${context_build})
    else()
      # A static pgroups with NCCL: the context links libnccl and cudart, so it cannot
      # be used here, and find_package says why instead of failing at link time.
      execute_process(COMMAND ${context_configure} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
      string(REGEX REPLACE "[ \t\r\n]+" " " flat "${out}")
      if(rc EQUAL 0 OR NOT flat MATCHES "so pgroups::nccl and pgroups::context, which link them, cannot be used")
        message(FATAL_ERROR "a static pgroups with NCCL, CUDA hidden: find_package(pgroups COMPONENTS context) "
                            "should fail naming CUDA and NCCL (exit ${rc}):\n${out}")
      endif()
      message(STATUS "context consumer without CUDA: refused as expected (static libraries with NCCL)")
    endif()
  endif()
  message(STATUS "consumers without CUDA OK")

elseif(CASE STREQUAL "pkg_config")
  find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
  set(ENV{PKG_CONFIG_PATH} "${libdir}/pkgconfig")
  # pkg_config_build(<name> <module> <source>): compile and link with the module's flags.
  function(pkg_config_build name module source)
    run_step("pkg-config ${module}" ${PKG_CONFIG} --cflags --libs ${module})
    string(STRIP "${step_output}" flags)
    separate_arguments(flags UNIX_COMMAND "${flags}")
    message(STATUS "pkg-config --cflags --libs ${module}: ${flags}")
    run_step("${name}: compile and link" ${CXX_COMPILER} -std=c++20 -o ${WORK_DIR}/${name} ${source} ${flags}
      -Wl,-rpath,${libdir})
  endfunction()
  pkg_config_build(layout_consumer pgroups ${CONSUMERS_DIR}/layout_main.cpp)
  run_consumer("pkg-config pgroups" ${WORK_DIR} layout_consumer)
  if(context_lines)
    if(NOT EXISTS "${libdir}/pkgconfig/pgroups-context.pc")
      message(FATAL_ERROR "pgroups::context was installed without pgroups-context.pc")
    endif()
    pkg_config_build(context_consumer pgroups-context ${CONSUMERS_DIR}/main.cpp)
    run_consumer("pkg-config pgroups-context" ${WORK_DIR} context_consumer)
  endif()
  # The installed CLI finds libnccl by its own run path (no LD_LIBRARY_PATH), also where
  # libnccl lies inside the source tree (.deps/nccl, scripts/install-nccl.sh), and names
  # NCCL's version.
  if(nccl_library AND EXISTS "${prefix}/bin/pgroups")
    run_step("installed pgroups info" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${prefix}/bin/pgroups info)
    if(NOT step_output MATCHES "nccl: +[0-9]+\\.[0-9]+\\.[0-9]+")
      message(FATAL_ERROR "the installed pgroups info names no NCCL version:\n${step_output}")
    endif()
    message(STATUS "installed pgroups info names NCCL's version")
  endif()
  message(STATUS "pkg-config consumers OK")

elseif(CASE STREQUAL "export_paths")
  # The link interfaces of what is exported: imported targets and flags only, no path
  # of this machine (a path to a pgroups library inside the prefix is relative to it).
  file(GLOB export_files "${package_dir}/pgroupsTargets*.cmake")
  set(offending "")
  foreach(file IN LISTS export_files)
    file(STRINGS "${file}" lines REGEX "INTERFACE_LINK_LIBRARIES|IMPORTED_LINK_INTERFACE_LIBRARIES|IMPORTED_LINK_DEPENDENT_LIBRARIES|INTERFACE_INCLUDE_DIRECTORIES")
    foreach(line IN LISTS lines)
      if(line MATCHES "\"/|;/|:/")
        string(APPEND offending "${file}: ${line}\n")
      endif()
    endforeach()
  endforeach()
  if(NOT export_files)
    message(FATAL_ERROR "no pgroupsTargets*.cmake in ${package_dir}")
  endif()
  if(offending)
    message(FATAL_ERROR "absolute paths in the exported targets:\n${offending}")
  endif()
  list(LENGTH export_files count)
  message(STATUS "${count} export files, no absolute path in their link interfaces: export paths OK")

else()
  message(FATAL_ERROR "run_consumers.cmake: unknown CASE '${CASE}'")
endif()
