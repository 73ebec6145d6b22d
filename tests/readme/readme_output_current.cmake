# A README's copy of a program's output must be what the program prints now: the first fenced
# block (```text or ```) after MARKER in README is compared with the output of COMMAND (a ;-list) by
# `nbtool same-text` (decimals up to one unit in the last digit; NOISE and ABS as a notebook
# cell's tolerance).
#   cmake -DNBTOOL=... -DREADME=... -DMARKER=... "-DCOMMAND=prog;args" [-DNOISE=n] [-DABS=a]
#         -DWORK=dir -P readme_output_current.cmake
include(${CMAKE_CURRENT_LIST_DIR}/readme_block.cmake)
xenc_readme_block("${README}" "${MARKER}" expected)
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/expected.txt" "${expected}")
execute_process(COMMAND ${COMMAND} WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE rc
                OUTPUT_FILE "${WORK}/actual.txt" ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${COMMAND} failed (${rc}): ${err}")
endif()
set(options "")
if(DEFINED NOISE)
  list(APPEND options --noise ${NOISE})
endif()
if(DEFINED ABS)
  list(APPEND options --abs ${ABS})
endif()
execute_process(COMMAND ${NBTOOL} same-text "${WORK}/expected.txt" "${WORK}/actual.txt" ${options}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${README}'s output block after \"${MARKER}\" is not what the program "
                      "prints now; paste the new output (${WORK}/actual.txt) into the README")
endif()
