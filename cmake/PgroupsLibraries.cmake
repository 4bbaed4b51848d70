# What every pgroups library gets once all of them are defined: a version and an ABI
# version for shared builds (BUILD_SHARED_LIBS=ON), and a run path that finds its
# siblings and the external libraries it was linked with once installed. Within the
# build tree CMake's own build run path already lets the tools and tests run.
#
# The ABI version is major.minor: before 1.0 a minor release may break it, which is
# also what pgroupsConfigVersion.cmake's SameMinorVersion promises.
#
# Symbols stay visible by default: the public headers carry no export macros yet, so
# hiding by default would hide the API. Internal code that several libraries share
# (pgroups_common) is hidden instead, so that it is no part of any library's ABI.
include(GNUInstallDirs)
# .deps/nccl when the NCCL of scripts/install-nccl.sh was used (see src/nccl/CMakeLists.txt).
set(_pgroups_nccl_rpath "")
if(PGROUPS_NCCL_INSTALL_RPATH)
  set(_pgroups_nccl_rpath ";${PGROUPS_NCCL_INSTALL_RPATH}")
endif()
foreach(_pgroups_library IN ITEMS pgroups_launch pgroups_gloo pgroups_layout pgroups_cost pgroups_emulation pgroups_config pgroups_report pgroups_mpi pgroups_nccl pgroups_context)
  if(TARGET ${_pgroups_library})
    set_target_properties(${_pgroups_library} PROPERTIES
      VERSION ${PROJECT_VERSION}
      SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
      INSTALL_RPATH "$ORIGIN${_pgroups_nccl_rpath}"
      INSTALL_RPATH_USE_LINK_PATH ON)
  endif()
endforeach()
unset(_pgroups_library)
