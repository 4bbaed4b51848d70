# cmake -D INCLUDE_DIR=<repo>/include -P check_umbrellas.cmake
# The public headers directly in include/pgroups are of two sorts, and each must hold
# to its own rule, so that a header added to a layer cannot be forgotten by its umbrella:
# - pgroups/<layer>.hpp for every folder <layer>: includes every header of the folder and
#   no other pgroups header;
# - pgroups/pgroups.hpp: the pure umbrella, includes the layout layer's umbrella;
# - no other: the forwarding headers kept for the paths from before the layers were
#   removed in 0.3.0, and none may come back.
cmake_minimum_required(VERSION 3.25)
set(root "${INCLUDE_DIR}/pgroups")
if(NOT IS_DIRECTORY "${root}")
  message(FATAL_ERROR "INCLUDE_DIR=${INCLUDE_DIR} has no pgroups folder")
endif()

# pgroups_includes(<file> <out>): the "pgroups/..." headers the file includes, sorted.
function(pgroups_includes file out)
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"pgroups/")
  set(found "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" header "${line}")
    list(APPEND found "${header}")
  endforeach()
  list(SORT found)
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

set(failures "")
file(GLOB entries RELATIVE "${root}" "${root}/*")
set(layers "")
foreach(entry IN LISTS entries)
  if(IS_DIRECTORY "${root}/${entry}")
    list(APPEND layers "${entry}")
  endif()
endforeach()
list(SORT layers)

foreach(layer IN LISTS layers)
  set(umbrella "${root}/${layer}.hpp")
  if(NOT EXISTS "${umbrella}")
    string(APPEND failures "  pgroups/${layer}/ has no umbrella header pgroups/${layer}.hpp\n")
    continue()
  endif()
  file(GLOB members RELATIVE "${INCLUDE_DIR}" "${root}/${layer}/*.hpp")
  list(SORT members)
  pgroups_includes("${umbrella}" included)
  set(missing ${members})
  if(included)
    list(REMOVE_ITEM missing ${included})
  endif()
  set(foreign ${included})
  if(members)
    list(REMOVE_ITEM foreign ${members})
  endif()
  foreach(header IN LISTS missing)
    string(APPEND failures "  pgroups/${layer}.hpp does not include ${header} of its folder\n")
  endforeach()
  foreach(header IN LISTS foreign)
    string(APPEND failures "  pgroups/${layer}.hpp includes ${header}, not a header of pgroups/${layer}/\n")
  endforeach()
endforeach()

pgroups_includes("${root}/pgroups.hpp" included)
if(NOT "pgroups/layout.hpp" IN_LIST included)
  string(APPEND failures "  pgroups/pgroups.hpp does not include pgroups/layout.hpp, the pure layout layer\n")
endif()

file(GLOB tops RELATIVE "${root}" "${root}/*.hpp")
list(SORT tops)
foreach(top IN LISTS tops)
  string(REGEX REPLACE "\\.hpp$" "" name "${top}")
  if(NOT name IN_LIST layers AND NOT name STREQUAL "pgroups")
    string(APPEND failures "  pgroups/${top} is neither a layer's umbrella nor pgroups.hpp (the forwarding headers "
                           "of the paths from before the layers were removed in 0.3.0)\n")
  endif()
endforeach()

if(failures)
  message(FATAL_ERROR "umbrella headers out of step with include/pgroups:\n${failures}")
endif()
list(LENGTH layers layer_count)
message(STATUS "${layer_count} layer umbrellas include every header of their folder; no other header in include/pgroups")
