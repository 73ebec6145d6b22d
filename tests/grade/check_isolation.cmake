# Isolation, as a class breaks it: one exercise per sandbox, limits, verdicts computed by grade.
# A copy of the template holds one correct exercise and six broken ones: a segfault, an infinite
# loop, an abort, a memory hog, a file that does not compile and code that prints a fake perfect
# summary. grade (time limit 2 s, memory limit 256 MiB) must name each failure under its exercise,
# grade the correct one, give the real score and exit 1 (the fake summary's printout and its
# writes to every descriptor change nothing: grade computes the verdict from the returned values);
# a failed rebuild must not run the old binary; no build type given means Release.
include(${CMAKE_CURRENT_LIST_DIR}/scratch.cmake)
install_scratch()
set(copy ${WORK_DIR}/assignment)
prepare_copy(${copy}
  KEEP sinusoidal_table softmax layer_norm_backward attention split_heads merge_heads linear_backward
  SOLVED sinusoidal_table
  BAD merge_heads=merge_heads_segfault.cpp layer_norm_backward=layer_norm_backward_hang.cpp
      split_heads=split_heads_abort.cpp softmax=softmax_memory_hog.cpp
      attention=attention_no_compile.cpp linear_backward=linear_backward_fake_summary.cpp
  SETTINGS "{\"time_limit_seconds\": 2, \"memory_limit_mib\": 256}")

file(STRINGS ${copy}/build/CMakeCache.txt build_type REGEX "^CMAKE_BUILD_TYPE:")
if(NOT build_type STREQUAL "CMAKE_BUILD_TYPE:STRING=Release")
  message(FATAL_ERROR "no build type given: the template's cache says '${build_type}', expected Release")
endif()

# 1. first run: builds each exercise on its own, then grades
execute_process(COMMAND ${copy}/build/grade --format json --output ${copy}/r.json --text-output ${copy}/r.txt
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "grade exited ${rc}, expected 1:\n${out}\n${err}")
endif()
file(READ ${copy}/r.json report)
file(READ ${copy}/r.txt text)
foreach(case "merge_heads|crashed with SIGSEGV (segmentation fault"
             "layer_norm_backward|exceeded the time limit of 2 s"
             "split_heads|crashed with SIGABRT (abort"
             "softmax|exceeded the memory limit of 256 MiB"
             "attention|does not compile: "
             "attention|undeclared_attention_helper")
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 name)
  list(GET case 1 needle)
  json_exercise("${report}" ${name})
  string(JSON failure GET "${exercise}" failure)
  string(JSON points GET "${exercise}" points)
  expect_in("${failure}" "${name}'s failure" "${needle}")
  if(NOT points EQUAL 0)
    message(FATAL_ERROR "${name} failed (${failure}) but has ${points} points")
  endif()
  expect_in("${text}" "the text report" "✘ ${name}: ${failure}")
endforeach()
json_exercise("${report}" sinusoidal_table)
string(JSON status GET "${exercise}" status)
string(JSON points GET "${exercise}" points)
if(NOT status STREQUAL "passed" OR NOT points EQUAL 1)
  message(FATAL_ERROR "the correct sinusoidal_table is '${status}' with ${points} points:\n${text}")
endif()
# the fake summary: it prints a perfect report and writes a fake verdict on every descriptor up to
# 99, the answer channel (4) included: an answer that is not one fails the exercise, and its
# printout is not the report.
json_exercise("${report}" linear_backward)
string(JSON failure GET "${exercise}" failure)
string(JSON points GET "${exercise}" points)
if(NOT failure STREQUAL "sent the grader something that is not an answer" OR NOT points EQUAL 0)
  message(FATAL_ERROR "the fake summary got failure '${failure}', ${points} points")
endif()
expect_in("${text}" "the text report"
          "✘ linear_backward: sent the grader something that is not an answer (0 of 1 points)"
          "1 of 7 exercises passed, 1 of 7 points")
# (its printout is shown, indented, under "its output:"; no line of the report itself is it)
expect_not_in("${text}" "the text report" "\n11 of 11" "\n✔ linear_backward")
message(STATUS "each broken exercise named, the correct one graded:\n${text}")

# 2. a failed rebuild never runs the old binary: break the passing exercise
configure_file(${BAD_DIR}/attention_no_compile.cpp ${copy}/exercises/sinusoidal_table.cpp COPYONLY)
execute_process(COMMAND ${copy}/build/grade sinusoidal_table RESULT_VARIABLE rc OUTPUT_VARIABLE out)
expect_in("${out}" "grade sinusoidal_table after breaking it" "✘ sinusoidal_table: does not compile: "
          "0 of 1 exercises passed")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "grade sinusoidal_table exited ${rc} after breaking it, expected 1:\n${out}")
endif()
message(STATUS "a broken rebuild is reported, the old binary not run")
