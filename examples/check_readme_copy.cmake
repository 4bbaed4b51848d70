# cmake -D README=... -D SOURCE=... -P check_readme_copy.cmake: fails unless README
# holds SOURCE verbatim as the fenced block right after the line
# "<!-- <name of SOURCE relative to the repository, e.g. examples/quickstart.cpp> -->",
# so that the program the README shows is the one the tests build and run.
cmake_minimum_required(VERSION 3.25)
file(READ "${README}" readme)
file(READ "${SOURCE}" source)
cmake_path(GET SOURCE FILENAME name)
set(marker "<!-- examples/${name} -->\n```cpp\n")
string(FIND "${readme}" "${marker}" start)
if(start EQUAL -1)
  message(FATAL_ERROR "${README} has no line '<!-- examples/${name} -->' followed by a ```cpp block")
endif()
string(LENGTH "${marker}" marker_length)
math(EXPR start "${start} + ${marker_length}")
string(SUBSTRING "${readme}" ${start} -1 rest)
string(FIND "${rest}" "\n```\n" end)
if(end EQUAL -1)
  message(FATAL_ERROR "${README}: the block of examples/${name} is not closed")
endif()
math(EXPR end "${end} + 1")
string(SUBSTRING "${rest}" 0 ${end} shown)
if(NOT shown STREQUAL source)
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/readme_copy_of_${name}" "${shown}")
  message(FATAL_ERROR "${README} shows a different examples/${name}; what it shows is in "
                      "${CMAKE_CURRENT_BINARY_DIR}/readme_copy_of_${name} (diff it against ${SOURCE}) ")
endif()
message(STATUS "README shows examples/${name} as it is")
