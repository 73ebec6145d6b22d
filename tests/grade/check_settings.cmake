# The teacher's settings (grading.json) and the report formats, on compiled student code:
#   - "library_calls": false: a softmax that wraps xenc::softmax_forward does not compile (its
#     header is not on the tensors-only include path), with the policy message naming the
#     header; code that calls nothing passes the policy;
#   - "hidden_seed": hidden checks run, and a failed one shows no input and no values; student
#     code cannot read the seed (split_heads_reads_seed aborts if the variable or
#     /proc/self/environ shows it, so it passes only when the seed is out of sight);
#   - "hints": "brief": the known mistake's title instead of the full hint;
#   - "exercises" with points: 2 + 3, in the report and in Gradescope's results.json, which
#     validates against the documented fields (score, tests[]: name, score, max_score, status,
#     output, visibility); JUnit XML has one testcase per check.
include(${CMAKE_CURRENT_LIST_DIR}/scratch.cmake)
install_scratch()
set(copy ${WORK_DIR}/assignment)
prepare_copy(${copy}
  KEEP softmax merge_heads split_heads
  BAD softmax=softmax_library_call.cpp merge_heads=merge_heads_without_transpose.cpp
      split_heads=split_heads_reads_seed.cpp
  SETTINGS "{\"exercises\": {\"softmax\": 2, \"merge_heads\": 3, \"split_heads\": 1}, \"library_calls\": false,
             \"hidden_seed\": 7, \"hints\": \"brief\", \"time_limit_seconds\": 3}")

execute_process(COMMAND ${copy}/build/grade RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "grade exited ${rc}, expected 1:\n${text}\n${err}")
endif()
expect_in("${text}" "the text report"
  "✘ softmax: library calls are not allowed in this assignment (grading.json: \"library_calls\": false): exercises/softmax.cpp includes xenc/ops/softmax.hpp, which is not provided"
  "✘ merge_heads: "
  "✘ hidden: reference values on the teacher's inputs\n      a hidden check (inputs drawn from the teacher's seed; not shown)\n      hint: a known mistake: "
  " of 3 points)" "✔ split_heads: " "1 of 3 exercises passed")
# brief hints: no full hint text ("Fix: ..."), and the hidden check shows no values
expect_not_in("${text}" "the text report" "Fix:")
string(REGEX MATCH "✘ hidden: [^\n]*\n([^✘✔]*)" hidden_block "${text}")
expect_not_in("${hidden_block}" "the hidden check's lines" "input:" "expected:" "computed:")
message(STATUS "library calls refused, hidden checks silent, brief hints:\n${text}")

# Gradescope results.json
execute_process(COMMAND ${copy}/build/grade --format gradescope --output ${copy}/results.json RESULT_VARIABLE rc)
file(READ ${copy}/results.json gs)
string(JSON score TYPE "${gs}" score)
string(JSON n LENGTH "${gs}" tests)
if(NOT score STREQUAL "NUMBER" OR n LESS 2)
  message(FATAL_ERROR "results.json: score is ${score}, ${n} tests:\n${gs}")
endif()
math(EXPR last "${n} - 1")
set(hidden_tests 0)
foreach(i RANGE ${last})
  foreach(key name output status visibility)
    string(JSON type TYPE "${gs}" tests ${i} ${key})
    if(NOT type STREQUAL "STRING")
      message(FATAL_ERROR "results.json: tests[${i}].${key} is ${type}, expected a string:\n${gs}")
    endif()
  endforeach()
  foreach(key score max_score)
    string(JSON type TYPE "${gs}" tests ${i} ${key})
    if(NOT type STREQUAL "NUMBER")
      message(FATAL_ERROR "results.json: tests[${i}].${key} is ${type}, expected a number:\n${gs}")
    endif()
  endforeach()
  string(JSON status GET "${gs}" tests ${i} status)
  string(JSON visibility GET "${gs}" tests ${i} visibility)
  if(NOT status MATCHES "^(passed|failed)$" OR NOT visibility MATCHES "^(visible|hidden|after_due_date|after_published)$")
    message(FATAL_ERROR "results.json: tests[${i}] has status '${status}', visibility '${visibility}'")
  endif()
  if(visibility STREQUAL "hidden")
    math(EXPR hidden_tests "${hidden_tests} + 1")
    string(JSON output GET "${gs}" tests ${i} output)
    expect_not_in("${output}" "a hidden test's output" "input:" "computed:")
  endif()
endforeach()
if(hidden_tests EQUAL 0)
  message(FATAL_ERROR "results.json has no hidden test:\n${gs}")
endif()
message(STATUS "results.json: ${n} tests, ${hidden_tests} hidden, the documented fields and values")

execute_process(COMMAND ${copy}/build/grade --format junit RESULT_VARIABLE rc OUTPUT_VARIABLE junit)
expect_in("${junit}" "the JUnit report" "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"xencoder grade\""
          "<testsuite name=\"softmax\" tests=\"1\" failures=\"1\">" "<testcase classname=\"merge_heads\"")
