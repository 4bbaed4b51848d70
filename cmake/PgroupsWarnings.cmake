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
