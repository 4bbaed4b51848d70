# Runs a command and checks what a user would see: its exit status, what it printed and
# how long it took. Every check that fails is reported, then the script fails.
#
#   cmake -DEXIT=<status|nonzero|any> [-DWITHIN=<seconds>]
#         [-DERR_COUNT=<n> -DERR_1=<regex> ... -DERR_<n>=<regex>] [-DOUT=<regex>]
#         -P expect_run.cmake -- <command> <arguments...>
#
# ERR_i are matched against standard error, OUT against standard output.
cmake_minimum_required(VERSION 3.25)

set(command "")
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_separator)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "expect_run.cmake: no command after --")
endif()

string(TIMESTAMP start "%s%f")
execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(TIMESTAMP stop "%s%f")
math(EXPR elapsed_ms "(${stop} - ${start}) / 1000")

list(JOIN command " " command_text)
message("command: ${command_text}\nexit status: ${status}\nseconds: ${elapsed_ms} ms\n"
        "--- stdout ---\n${out}--- stderr ---\n${err}--------------")

set(failures "")
if(EXIT STREQUAL "any")
  # Only the messages and the time are checked (the launcher decides the status).
elseif(EXIT STREQUAL "nonzero")
  if(status STREQUAL "0" OR NOT status MATCHES "^[0-9]+$")
    string(APPEND failures "expected a non-zero exit status, got '${status}'\n")
  endif()
elseif(NOT status STREQUAL EXIT)
  string(APPEND failures "expected exit status ${EXIT}, got '${status}'\n")
endif()
if(DEFINED WITHIN)
  math(EXPR within_ms "${WITHIN} * 1000")
  if(elapsed_ms GREATER within_ms)
    string(APPEND failures "expected to end within ${WITHIN} s, took ${elapsed_ms} ms\n")
  endif()
endif()
if(DEFINED ERR_COUNT)
  foreach(i RANGE 1 ${ERR_COUNT})
    if(NOT err MATCHES "${ERR_${i}}")
      string(APPEND failures "standard error does not match: ${ERR_${i}}\n")
    endif()
  endforeach()
endif()
if(DEFINED OUT AND NOT out MATCHES "${OUT}")
  string(APPEND failures "standard output does not match: ${OUT}\n")
endif()
if(failures)
  message(FATAL_ERROR "${failures}")
endif()
