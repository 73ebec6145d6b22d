# xenc-grade-all on a class of five made-up submissions (softmax for 2 points, merge_heads for 3,
# time limit 5 s, so that a correct exercise is not killed on a loaded CI machine): correct, a crash, a hang, a wrong answer, a file that does not compile. The
# CSV must hold what a teacher expects: each student's points per exercise, the total, a note
# naming each failure (a note with a comma is quoted) and the museum exhibit when grade named one,
# when (UTC) and with which settings each row was graded; one report per student; the Canvas and
# Moodle gradebooks beside it. Then Gradescope's bundle, run in a fake /autograder tree on
# d_wrong's files (check_gradescope_bundle.sh).
include(${CMAKE_CURRENT_LIST_DIR}/scratch.cmake)
install_scratch()
set(class ${WORK_DIR}/submissions)
function(student name softmax merge_heads)
  foreach(pair "softmax|${softmax}" "merge_heads|${merge_heads}")
    string(REPLACE "|" ";" pair "${pair}")
    list(GET pair 0 exercise)
    list(GET pair 1 file)
    if(file STREQUAL "solution")
      set(file ${SOLUTIONS_DIR}/${exercise}.cpp)
    else()
      set(file ${BAD_DIR}/${file})
    endif()
    configure_file(${file} ${class}/${name}/exercises/${exercise}.cpp COPYONLY)
  endforeach()
endfunction()
student(a_correct solution solution)
student(b_crash solution merge_heads_segfault.cpp)
student(c_hang softmax_hang.cpp solution)
student(d_wrong softmax_without_max.cpp solution)
student(e_no_compile softmax_no_compile.cpp solution)
file(WRITE ${WORK_DIR}/grading.json
     "{\"exercises\": {\"softmax\": 2, \"merge_heads\": 3}, \"time_limit_seconds\": 5}")

execute_process(COMMAND ${WORK_DIR}/prefix/bin/xenc-grade-all ${class} --settings ${WORK_DIR}/grading.json
                        --output ${WORK_DIR}/grades
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xenc-grade-all exited ${rc}:\n${out}\n${err}")
endif()
file(READ ${WORK_DIR}/grades/grades.csv csv)
# every row ends with when it was graded and the settings' stamp (their values: test_gradebook)
string(REGEX REPLACE ",20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z,grading\\.json:[0-9a-f]+ template:[0-9a-f]+\n"
       ",<when>,<settings>\n" stamped "${csv}")
# d_wrong: softmax without the max passes 6 of its 8 checks (it fails the large logits and the
# fully masked row, both NaN), so 6/8 of 2 points = 1.5.
set(expected
"student,points,max_points,softmax,merge_heads,notes,graded_at,settings
a_correct,5,5,2,3,,<when>,<settings>
b_crash,2,5,2,0,merge_heads: failed: crashed with SIGSEGV (segmentation fault: a read or write outside the memory of a tensor?),<when>,<settings>
c_hang,3,5,0,3,softmax: failed: exceeded the time limit of 5 s (an infinite loop?) and was killed,<when>,<settings>
d_wrong,4.5,5,1.5,3,softmax: failed (the known mistake: softmax without the max subtraction),<when>,<settings>
e_no_compile,3,5,0,3,\"softmax: failed: does not compile: exercises/softmax.cpp:8:12: error: ")
string(FIND "${stamped}" "${expected}" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "grades.csv is:\n${csv}\nexpected it to start with:\n${expected}")
endif()
foreach(s a_correct b_crash c_hang d_wrong e_no_compile)
  if(NOT EXISTS ${WORK_DIR}/grades/${s}.txt OR NOT EXISTS ${WORK_DIR}/grades/${s}.json)
    message(FATAL_ERROR "no report for ${s} in ${WORK_DIR}/grades")
  endif()
endforeach()
file(READ ${WORK_DIR}/grades/d_wrong.txt wrong)
expect_in("${wrong}" "d_wrong's report" "✘ softmax: 6 of 8 checks passed (1.5 of 2 points)"
          "hint: this is a known mistake, softmax without the max subtraction")
string(REGEX MATCHALL ",<when>,<settings>\n" stamps "${stamped}")
list(LENGTH stamps n)
if(NOT n EQUAL 5)
  message(FATAL_ERROR "${n} of 5 rows end with when and with which settings they were graded:\n${csv}")
endif()
file(READ ${WORK_DIR}/grades/canvas.csv canvas)
set(expected "Student,ID,SIS User ID,SIS Login ID,Section,xencoder assignment
a_correct,,,a_correct,,5
b_crash,,,b_crash,,2
c_hang,,,c_hang,,3
d_wrong,,,d_wrong,,4.5
e_no_compile,,,e_no_compile,,3
")
if(NOT canvas STREQUAL expected)
  message(FATAL_ERROR "canvas.csv is:\n${canvas}\nexpected:\n${expected}")
endif()
file(READ ${WORK_DIR}/grades/moodle.csv moodle)
set(expected "username,xencoder assignment\na_correct,5\nb_crash,2\nc_hang,3\nd_wrong,4.5\ne_no_compile,3\n")
if(NOT moodle STREQUAL expected)
  message(FATAL_ERROR "moodle.csv is:\n${moodle}\nexpected:\n${expected}")
endif()
expect_in("${out}" "xenc-grade-all's output" "wrote ${WORK_DIR}/grades/grades.csv (5 students graded), their reports (${WORK_DIR}/grades/<student>.txt), ${WORK_DIR}/grades/canvas.csv and ${WORK_DIR}/grades/moodle.csv")
message(STATUS "grades.csv:\n${csv}\n${out}")

# Gradescope: the bundle of a template holding this class's two exercises, run on d_wrong's files
file(COPY ${WORK_DIR}/prefix/share/xencoder/assignment/template/ DESTINATION ${WORK_DIR}/template)
file(GLOB stubs ${WORK_DIR}/template/exercises/*.cpp)
list(FILTER stubs EXCLUDE REGEX "/(softmax|merge_heads)\\.cpp$")
file(REMOVE ${stubs})
execute_process(COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check_gradescope_bundle.sh ${WORK_DIR}/gradescope
                        ${WORK_DIR}/prefix ${WORK_DIR}/template ${WORK_DIR}/grading.json
                        ${class}/d_wrong 4.5 5
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the Gradescope bundle:\n${out}\n${err}")
endif()
message(STATUS "${out}")
