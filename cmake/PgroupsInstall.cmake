# Install rules: headers, the libraries that were built, and a package config so that
# consumers can find_package(pgroups) and link pgroups::layout, pgroups::mpi, ...
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_pgroups_targets pgroups_layout pgroups_config)
foreach(target IN ITEMS pgroups_mpi pgroups_context pgroups_nccl)
  if(TARGET ${target})
    list(APPEND _pgroups_targets ${target})
  endif()
endforeach()

install(TARGETS ${_pgroups_targets} EXPORT pgroupsTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/pgroups DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET pgroups)
  install(TARGETS pgroups RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(EXPORT pgroupsTargets NAMESPACE pgroups:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pgroups)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pgroupsConfig.cmake.in
  ${PROJECT_BINARY_DIR}/pgroupsConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pgroups)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pgroupsConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pgroupsConfig.cmake ${PROJECT_BINARY_DIR}/pgroupsConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pgroups)
