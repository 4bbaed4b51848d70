# cmake -D CXX_COMPILER=... -D INCLUDE_DIR=... -D POISONED_DIR=... -D "HEADERS=a.hpp|b.hpp"
#       [-D "DEFINES=NAME=VALUE|..."] -P check_pure_headers.cmake
# Compiles each header on its own, as a consumer's translation unit would include it,
# with no MPI, CUDA or NCCL include path and with <mpi.h>, <nccl.h> and the CUDA headers
# replaced by ones that fail (POISONED_DIR): a header that needs none of them must not
# include them, directly or through another pgroups header.
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" HEADERS "${HEADERS}")
string(REPLACE "|" ";" DEFINES "${DEFINES}")
list(TRANSFORM DEFINES PREPEND "-D")
set(failures "")
set(count 0)
foreach(header IN LISTS HEADERS)
  execute_process(
    COMMAND ${CXX_COMPILER} -std=c++20 -fsyntax-only ${DEFINES} -I${POISONED_DIR} -I${INCLUDE_DIR}
            -x c++ -include ${header} /dev/null
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  math(EXPR count "${count} + 1")
  if(NOT rc EQUAL 0)
    string(APPEND failures "${header}:\n${out}\n")
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "no headers given")
endif()
if(failures)
  message(FATAL_ERROR "headers that need MPI, CUDA or NCCL although they should not:\n${failures}")
endif()
message(STATUS "${count} pure headers compile without MPI, CUDA and NCCL")
