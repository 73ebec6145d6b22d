# Hostile students (issue 27), with the installed xenc-grade-all, as a teacher grades a class. Needs
# bubblewrap (scripts/setup.sh installs it): every compile and run is in its own sandbox.
# Each hostile submission's softmax returns zeros (tests/grade/hostile/) and attacks the grading:
# a forged verdict from a global constructor and from a /proc/self/fd scan (on the answer channel
# too, which fails the exercise: "sent the grader something that is not an answer"); a self-written report
# and killing every process it sees; a setsid daemon that rewrites grades.csv later; writing other
# students' files and the shared build; a fork bomb; memory outside its
# address space (another process, a memory file, a shared segment, a file in its folder or /dev:
# it earns the softmax's points where any worked); reading the seed and grading.json; `#include "/etc/shadow"`, `#include </dev/zero>` and a compile-time bomb.
# Expected, for the others: the score of the plain zeros softmax (b_zeros) or, for the ones that cannot
# compile, 0 for softmax with "does not compile"; merge_heads (a correct file) keeps its 3 points;
# the correct student's and b_zeros's rows equal a run without any hostile student; grading the
# class twice into the same folder gives the same CSV; the daemon changes nothing after the run;
# the shadow file's first token is in no report. Then the fallback: with the namespaces turned off
# (XENC_GRADE_NO_NAMESPACES), the same scores for a correct, a zeros, a forging, a
# memory-escaping, a secret-reading, an other-students-writing and a daemon-starting student
# (Landlock keeps each to its box's files), and one line saying the sandbox had no namespaces;
# with Landlock turned off too, the secret reader scores its leak (as root's nobody, it reads
# grading.json) and its report says Landlock was off.
include(${CMAKE_CURRENT_LIST_DIR}/scratch.cmake)
install_scratch()
set(grade_all ${WORK_DIR}/prefix/bin/xenc-grade-all)

function(student class name softmax)
  if(softmax STREQUAL "solution")
    set(file ${SOLUTIONS_DIR}/softmax.cpp)
  else()
    set(file ${HOSTILE_DIR}/${softmax})
  endif()
  configure_file(${file} ${class}/${name}/exercises/softmax.cpp COPYONLY)
  configure_file(${SOLUTIONS_DIR}/merge_heads.cpp ${class}/${name}/exercises/merge_heads.cpp COPYONLY)
endfunction()

set(hostile kills_grader daemon writes_others fork_bomb reads_secrets escapes_memory)
set(no_compile include_shadow include_dev_zero template_bomb)
foreach(class ref hostile)
  student(${WORK_DIR}/${class} a_correct solution)
  student(${WORK_DIR}/${class} b_zeros softmax_zeros.cpp)
endforeach()
foreach(h forged_verdict ${hostile} ${no_compile})
  student(${WORK_DIR}/hostile h_${h} softmax_${h}.cpp)
endforeach()
file(WRITE ${WORK_DIR}/grading.json
     "{\"exercises\": {\"softmax\": 2, \"merge_heads\": 3}, \"time_limit_seconds\": 20,
       \"compile_time_limit_seconds\": 60, \"memory_limit_mib\": 512, \"hidden_seed\": 918273645,
       \"process_limit\": 16}")

function(grade class output)
  execute_process(COMMAND ${grade_all} ${WORK_DIR}/${class} ${grade_cache} --settings ${WORK_DIR}/grading.json
                          --output ${output}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "xenc-grade-all ${class} exited ${rc}:\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# The CSV row of a student, set as `row`; its four numbers (points, max, softmax, merge_heads),
# set as `points`.
function(row_of csv who)
  string(REGEX MATCH "\n${who},[^\n]*" line "${csv}")
  string(STRIP "${line}" line)
  # when the row was graded differs from run to run and student to student (check_class.cmake
  # checks the column)
  string(REGEX REPLACE ",20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z,"
                       ",<when>," line "${line}")
  set(row "${line}" PARENT_SCOPE)
endfunction()
function(points_of csv who)
  row_of("${csv}" ${who})
  string(REGEX MATCH "^[^,]*,[^,]*,[^,]*,[^,]*,[^,]*" p "${row}")
  # (not REGEX REPLACE "^[^,]*,": CMake applies a ^ anchor again after each match)
  string(FIND "${p}" "," comma)
  math(EXPR comma "${comma} + 1")
  string(SUBSTRING "${p}" ${comma} -1 p)
  set(points "${p}" PARENT_SCOPE)
endfunction()

grade(ref ${WORK_DIR}/grades-ref)
file(READ ${WORK_DIR}/grades-ref/grades.csv ref)
grade(hostile ${WORK_DIR}/grades)
file(READ ${WORK_DIR}/grades/grades.csv first)
message(STATUS "first run:\n${first}")
expect_not_in("${out}" "xenc-grade-all's output" "Sandbox:")

# the correct and the plain students: as without the hostile ones
foreach(who a_correct b_zeros)
  row_of("${ref}" ${who})
  set(want "${row}")
  row_of("${first}" ${who})
  if(NOT row STREQUAL want)
    message(FATAL_ERROR "${who}: '${row}' with the hostile students, '${want}' without")
  endif()
endforeach()
points_of("${first}" a_correct)
if(NOT points STREQUAL "5,5,2,3")
  message(FATAL_ERROR "a_correct has '${points}', expected 5,5,2,3:\n${first}")
endif()
# each hostile student: the zeros' score
points_of("${first}" b_zeros)
set(zeros "${points}")
foreach(h ${hostile})
  points_of("${first}" h_${h})
  if(NOT points STREQUAL zeros)
    message(FATAL_ERROR "h_${h} has '${points}', the plain zeros softmax '${zeros}':\n${first}")
  endif()
endforeach()
# the forger writes its verdict on the answer channel too: an answer that is not one fails the
# exercise, whatever its function returns
row_of("${first}" h_forged_verdict)
expect_in("${row}" "h_forged_verdict's row" "h_forged_verdict,3,5,0,3,"
          "softmax: failed: sent the grader something that is not an answer")
foreach(h ${no_compile})
  row_of("${first}" h_${h})
  expect_in("${row}" "h_${h}'s row" "h_${h},3,5,0,3," "softmax: failed: does not compile: ")
endforeach()
# the forgers' reports are grade's, not theirs
file(READ ${WORK_DIR}/grades/h_kills_grader.json report)
string(JSON total GET "${report}" points)
if(total GREATER 5)
  message(FATAL_ERROR "h_kills_grader's report says ${total} points, of 5")
endif()
file(READ ${WORK_DIR}/grades/h_forged_verdict.txt report)
expect_in("${report}" "h_forged_verdict's report"
          "✘ softmax: sent the grader something that is not an answer (0 of 2 points)"
          "1 of 2 exercises passed, 3 of 5 points")
# no secret in any report or in the CSV
file(GLOB reports ${WORK_DIR}/grades/*.txt ${WORK_DIR}/grades/*.json)
execute_process(COMMAND head -n 1 /etc/shadow OUTPUT_VARIABLE shadow ERROR_QUIET)
string(REGEX MATCH "^[^:]*:[^:]*" shadow_token "${shadow}")
if(NOT shadow_token)
  set(shadow_token "root:")
endif()
foreach(r ${reports} ${WORK_DIR}/grades/grades.csv)
  file(READ ${r} text)
  expect_not_in("${text}" "${r}" "${shadow_token}" "918273645")
endforeach()
# per-student logs
if(NOT EXISTS ${WORK_DIR}/grades/grade-logs/h_include_shadow/softmax.log)
  message(FATAL_ERROR "no per-student log grade-logs/h_include_shadow/softmax.log")
endif()

# the daemon had 8 s to rewrite grades.csv: wait them out
execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 10)
file(READ ${WORK_DIR}/grades/grades.csv later)
if(NOT later STREQUAL first)
  message(FATAL_ERROR "grades.csv changed after the run:\n${later}")
endif()

# a second run into the same folder: the same CSV
grade(hostile ${WORK_DIR}/grades)
file(READ ${WORK_DIR}/grades/grades.csv second)
# (but when each row was graded)
set(when_re ",20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z,")
string(REGEX REPLACE "${when_re}" ",<when>," second "${second}")
string(REGEX REPLACE "${when_re}" ",<when>," first "${first}")
if(NOT second STREQUAL first)
  message(FATAL_ERROR "the second run's CSV differs:\n${second}\nfirst:\n${first}")
endif()

# the fallback: no namespaces, the process sandbox and grade's verdicts, said in one line
set(fallback ${WORK_DIR}/fallback)
student(${fallback} a_correct solution)
student(${fallback} b_zeros softmax_zeros.cpp)
student(${fallback} h_forged_verdict softmax_forged_verdict.cpp)
foreach(h escapes_memory reads_secrets writes_others daemon)
  student(${fallback} h_${h} softmax_${h}.cpp)
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E env XENC_GRADE_NO_NAMESPACES=1
                        ${grade_all} ${fallback} ${grade_cache} --settings ${WORK_DIR}/grading.json
                        --output ${WORK_DIR}/grades-fallback
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xenc-grade-all without namespaces exited ${rc}:\n${out}\n${err}")
endif()
expect_in("${out}" "xenc-grade-all's output without namespaces"
          "Sandbox: namespaces turned off (XENC_GRADE_NO_NAMESPACES is set); each exercise ran in a process with limits and Landlock's file rules, without namespaces.")
file(READ ${WORK_DIR}/grades-fallback/a_correct.txt report)
expect_in("${report}" "a_correct's report without namespaces" "Sandbox: namespaces turned off")
file(READ ${WORK_DIR}/grades-fallback/grades.csv fb)
foreach(who a_correct b_zeros h_forged_verdict h_escapes_memory h_reads_secrets h_writes_others
            h_daemon)
  points_of("${fb}" ${who})
  set(got "${points}")
  points_of("${first}" ${who})
  if(NOT got STREQUAL points)
    message(FATAL_ERROR "${who} has '${got}' without namespaces, '${points}' with them")
  endif()
endforeach()
# and with Landlock turned off as well (as on a kernel without it), the secret reader, root's
# nobody, reads grading.json and scores its leak: what Landlock stops above
set(off ${WORK_DIR}/fallback-off)
student(${off} h_reads_secrets softmax_reads_secrets.cpp)
execute_process(COMMAND ${CMAKE_COMMAND} -E env XENC_GRADE_NO_NAMESPACES=1 XENC_GRADE_NO_LANDLOCK=1
                        ${grade_all} ${off} ${grade_cache} --settings ${WORK_DIR}/grading.json
                        --output ${WORK_DIR}/grades-fallback-off
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xenc-grade-all without namespaces and Landlock exited ${rc}:\n${out}\n${err}")
endif()
file(READ ${WORK_DIR}/grades-fallback-off/h_reads_secrets.txt report)
expect_in("${report}" "the secret reader's report without Landlock"
          "Sandbox: Landlock turned off (XENC_GRADE_NO_LANDLOCK is set)")
file(READ ${WORK_DIR}/grades-fallback-off/grades.csv leaked)
points_of("${leaked}" h_reads_secrets)
set(got "${points}")
points_of("${fb}" h_reads_secrets)
if(got STREQUAL points)
  message(FATAL_ERROR "without Landlock the secret reader scored as with it (${got}): it found no "
                      "secret, so the class above does not show that Landlock stops it")
endif()
message(STATUS "every hostile student got the honest score:\n${first}")
