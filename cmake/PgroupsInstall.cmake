# Install rules: headers, the libraries that were built, a CMake package (consumers
# find_package(pgroups) and link pgroups::layout, pgroups::mpi, ...) and pkg-config files
# (pgroups.pc for the layout, pgroups-context.pc for the context and its backends).
#
# What is exported names its dependencies by imported target (fmt::fmt, MPI::MPI_CXX,
# CUDA::cudart, NCCL::nccl), never by this machine's paths; pgroupsConfig.cmake finds
# them again on the consumer's machine, CUDA and NCCL only for the targets that need them.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_pgroups_targets pgroups_common pgroups_launch pgroups_layout pgroups_cost pgroups_emulation pgroups_config pgroups_report)
foreach(target IN ITEMS pgroups_gloo pgroups_mpi pgroups_context pgroups_nccl)
  if(TARGET ${target})
    list(APPEND _pgroups_targets ${target})
  endif()
endforeach()
# pgroups_common is always installed (pgroups::common, the headers of
# include/pgroups/common); a static pgroups also needs it at the consumer's link, which a
# shared library has inside.
get_target_property(_pgroups_layout_type pgroups_layout TYPE)
if(_pgroups_layout_type STREQUAL "STATIC_LIBRARY")
  set(PGROUPS_STATIC_LIBRARIES TRUE)
else()
  set(PGROUPS_STATIC_LIBRARIES FALSE)
endif()
if(NOT DEFINED PGROUPS_HAVE_NCCL)
  set(PGROUPS_HAVE_NCCL FALSE)
endif()
if(NOT DEFINED PGROUPS_HAVE_GLOO)
  set(PGROUPS_HAVE_GLOO FALSE)
endif()

install(TARGETS ${_pgroups_targets} EXPORT pgroupsTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/pgroups DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET pgroups)
  # The installed tool finds the shared pgroups libraries beside it, in ../lib.
  file(RELATIVE_PATH _pgroups_bin_to_lib "/_/${CMAKE_INSTALL_BINDIR}" "/_/${CMAKE_INSTALL_LIBDIR}")
  # _pgroups_nccl_rpath: .deps/nccl (scripts/install-nccl.sh), see PgroupsLibraries.cmake.
  set_target_properties(pgroups PROPERTIES INSTALL_RPATH "$ORIGIN/${_pgroups_bin_to_lib}${_pgroups_nccl_rpath}"
                                           INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS pgroups RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT pgroupsTargets NAMESPACE pgroups:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pgroups)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pgroupsConfig.cmake.in
  ${PROJECT_BINARY_DIR}/pgroupsConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pgroups)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pgroupsConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pgroupsConfig.cmake ${PROJECT_BINARY_DIR}/pgroupsConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pgroups)

# pkg-config. The prefix is found from the .pc file's own place, so the install can move
# (cmake --install --prefix). Static libraries bring their private dependencies along.
file(RELATIVE_PATH PGROUPS_PC_TO_PREFIX "/_/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/_")
string(REGEX REPLACE "/$" "" PGROUPS_PC_TO_PREFIX "${PGROUPS_PC_TO_PREFIX}")
set(PGROUPS_PC_REQUIRES "")
set(PGROUPS_PC_LAYOUT_LIBS "-lpgroups_cost -lpgroups_layout -lpgroups_launch")
if(PGROUPS_STATIC_LIBRARIES)
  set(PGROUPS_PC_REQUIRES "fmt")
  if(PGROUPS_HAVE_PMIX)
    string(APPEND PGROUPS_PC_REQUIRES " pmix")
  endif()
  string(APPEND PGROUPS_PC_LAYOUT_LIBS " -lpgroups_common")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/pgroups.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/pgroups.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/pgroups.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(TARGET pgroups_context AND TARGET pgroups_mpi)
  # MPI by the flags FindMPI found (any MPI implementation, whatever its own .pc is called).
  set(PGROUPS_PC_CONTEXT_CFLAGS "")
  foreach(dir IN LISTS MPI_CXX_INCLUDE_DIRS)
    string(APPEND PGROUPS_PC_CONTEXT_CFLAGS " -I${dir}")
  endforeach()
  foreach(option IN LISTS MPI_CXX_COMPILE_OPTIONS)
    string(APPEND PGROUPS_PC_CONTEXT_CFLAGS " ${option}")
  endforeach()
  set(PGROUPS_PC_CONTEXT_LIBS "-lpgroups_context")
  if(PGROUPS_HAVE_NCCL)
    string(APPEND PGROUPS_PC_CONTEXT_LIBS " -lpgroups_nccl")
  endif()
  if(PGROUPS_HAVE_GLOO)
    string(APPEND PGROUPS_PC_CONTEXT_LIBS " -lpgroups_gloo")
  endif()
  string(APPEND PGROUPS_PC_CONTEXT_LIBS " -lpgroups_mpi")
  if(PGROUPS_STATIC_LIBRARIES)
    # pgroups_common again: the context and MPI libraries use it as well.
    string(APPEND PGROUPS_PC_CONTEXT_LIBS " -lpgroups_layout -lpgroups_launch -lpgroups_common -pthread")
    if(PGROUPS_HAVE_NCCL)
      get_filename_component(_pgroups_cudart_dir "${CUDA_cudart_LIBRARY}" DIRECTORY)
      # libnccl by the file name that was found (-l:NAME): the registry's wheel
      # (scripts/install-nccl.sh) has only libnccl.so.2, which a plain -lnccl does not
      # find. Its folder is no system one, hence the run path, so the consumer also runs.
      get_filename_component(_pgroups_nccl_file "${PGROUPS_NCCL_LIBRARY}" NAME)
      string(APPEND PGROUPS_PC_CONTEXT_LIBS " -L${PGROUPS_NCCL_LIBRARY_DIR} -l:${_pgroups_nccl_file}"
                                            " -Wl,-rpath,${PGROUPS_NCCL_LIBRARY_DIR}"
                                            " -L${_pgroups_cudart_dir} -lcudart")
    endif()
    if(PGROUPS_HAVE_GLOO)
      string(APPEND PGROUPS_PC_CONTEXT_LIBS " -lgloo")
    endif()
  endif()
  foreach(library IN LISTS MPI_CXX_LIBRARIES)
    string(APPEND PGROUPS_PC_CONTEXT_LIBS " ${library}")
  endforeach()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/pgroups-context.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/pgroups-context.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/pgroups-context.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
