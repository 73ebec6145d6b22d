# Shared by the tests/install scripts.

# xenc_run(<what> COMMAND <command>... [WORKING_DIRECTORY dir] [OUTPUT var]): runs the command,
# stops with a message naming <what>, the command and its output when it fails.
function(xenc_run what)
  cmake_parse_arguments(RUN "" "WORKING_DIRECTORY;OUTPUT" "COMMAND" ${ARGN})
  if(NOT RUN_WORKING_DIRECTORY)
    set(RUN_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  execute_process(COMMAND ${RUN_COMMAND} WORKING_DIRECTORY ${RUN_WORKING_DIRECTORY}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${RUN_COMMAND}")
    message(FATAL_ERROR "${what} failed (exit ${rc}):\n  ${command}\n${out}\n${err}")
  endif()
  if(RUN_OUTPUT)
    set(${RUN_OUTPUT} "${out}" PARENT_SCOPE)
  endif()
endfunction()
