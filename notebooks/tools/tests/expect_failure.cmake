# Runs COMMAND (a ;-list) and passes only if it fails AND its output contains every string in
# EXPECT (a ;-list): the negative tests of nbtool (a broken notebook must be reported, and why).
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
message("${all}")
if(rc EQUAL 0)
  message(FATAL_ERROR "expected a failure, but the command succeeded")
endif()
foreach(text IN LISTS EXPECT)
  string(FIND "${all}" "${text}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "expected the output to contain: ${text}")
  endif()
endforeach()
