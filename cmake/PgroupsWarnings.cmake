# pgroups_target_defaults(<target>): the warnings and language level every pgroups target
# is built with, set per target rather than globally so that consumers are unaffected.
function(pgroups_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
  endif()
  if(PGROUPS_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${PGROUPS_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_link_options(${target} PUBLIC -fsanitize=${PGROUPS_SANITIZE})
  endif()
endfunction()

# pgroups_add_library(<layer> <sources>...): the library of one layer, pgroups_<layer>,
# which consumers know as pgroups::<layer>, with the public headers of include/ and the
# defaults above. Each layer's CMakeLists adds only its sources and dependencies.
function(pgroups_add_library layer)
  set(target pgroups_${layer})
  add_library(${target} ${ARGN})
  add_library(pgroups::${layer} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${layer} OUTPUT_NAME ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  pgroups_target_defaults(${target})
endfunction()
