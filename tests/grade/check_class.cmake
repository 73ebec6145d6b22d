# xenc-grade-all on a class of five made-up submissions (softmax for 2 points, merge_heads for 3,
# time limit 5 s, so that a correct exercise is not killed on a loaded CI machine): correct, a crash, a hang, a wrong answer, a file that does not compile. The
# CSV must hold what a teacher expects: each student's points per exercise, the total, and a
# note naming each failure (a note with a comma is quoted); one report per student. A sixth,
# f_misnamed, renamed merge_heads (the note names the missing function) and handed softmax in as
# Softmax.cpp and softmax.cc (each named, with the closest exercise, in the output and report).
# Last, --exercises with the settings in a teacher's folder of two exercises and no "exercises"
# key lists those two.
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
configure_file(${BAD_DIR}/merge_heads_renamed.cpp ${class}/f_misnamed/exercises/merge_heads.cpp
               COPYONLY)
foreach(f Softmax.cpp softmax.cc)
  configure_file(${SOLUTIONS_DIR}/softmax.cpp ${class}/f_misnamed/exercises/${f} COPYONLY)
endforeach()
file(WRITE ${WORK_DIR}/grading.json
     "{\"exercises\": {\"softmax\": 2, \"merge_heads\": 3}, \"time_limit_seconds\": 5}")

execute_process(COMMAND ${WORK_DIR}/prefix/bin/xenc-grade-all ${class} --settings ${WORK_DIR}/grading.json
                        --output ${WORK_DIR}/grades
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xenc-grade-all exited ${rc}:\n${out}\n${err}")
endif()
file(READ ${WORK_DIR}/grades/grades.csv csv)
# d_wrong: softmax without the max passes 6 of its 8 checks (it fails the large logits and the
# fully masked row, both NaN), so 6/8 of 2 points = 1.5.
set(expected
"student,points,max_points,softmax,merge_heads,notes
a_correct,5,5,2,3,
b_crash,2,5,2,0,merge_heads: failed: crashed with SIGSEGV (segmentation fault: a read or write outside the memory of a tensor?)
c_hang,3,5,0,3,softmax: failed: exceeded the time limit of 5 s (an infinite loop?) and was killed
d_wrong,4.5,5,1.5,3,softmax: failed
e_no_compile,3,5,0,3,\"softmax: failed: does not compile: exercises/softmax.cpp:8:12: error: ")
string(FIND "${csv}" "${expected}" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "grades.csv is:\n${csv}\nexpected it to start with:\n${expected}")
endif()
foreach(s a_correct b_crash c_hang d_wrong e_no_compile f_misnamed)
  if(NOT EXISTS ${WORK_DIR}/grades/${s}.txt OR NOT EXISTS ${WORK_DIR}/grades/${s}.json)
    message(FATAL_ERROR "no report for ${s} in ${WORK_DIR}/grades")
  endif()
endforeach()
file(READ ${WORK_DIR}/grades/d_wrong.txt wrong)
expect_in("${wrong}" "d_wrong's report" "✘ softmax: 6 of 8 checks passed (1.5 of 2 points)"
          "hint: this is a known mistake, softmax without the max subtraction")
# the renamed function is named, not the linker's exit status; the misnamed files are reported
string(REGEX MATCH "\nf_misnamed,[^\n]*" row "${csv}")
expect_in("${row}" "f_misnamed's row" "f_misnamed,0,5,0,0,\"softmax: not implemented; merge_heads: failed: does not link: exercises/merge_heads.cpp does not define assignment::merge_heads, the function `Tensor3 merge_heads(const Tensor4& x)`")
expect_not_in("${row}" "f_misnamed's row" "ld returned")
set(stray "is not an exercise of this assignment and was not graded (did you mean exercises/softmax.cpp?)")
expect_in("${out}" "xenc-grade-all's output" "f_misnamed: 0 of 5 points
  f_misnamed: exercises/Softmax.cpp ${stray}
  f_misnamed: exercises/softmax.cc ${stray}")
file(READ ${WORK_DIR}/grades/f_misnamed.txt misnamed)
expect_in("${misnamed}" "f_misnamed's report" "exercises/Softmax.cpp ${stray}" "exercises/softmax.cc ${stray}")
message(STATUS "grades.csv:\n${csv}\n${out}")

# Without an "exercises" key the exercises are the teacher's folder's (where grading.json is, with
# a CMakeLists.txt and exercises/), not every registered one
file(MAKE_DIRECTORY ${WORK_DIR}/course/exercises)
file(COPY ${TEMPLATE_DIR}/CMakeLists.txt DESTINATION ${WORK_DIR}/course)
foreach(e softmax merge_heads)
  file(COPY ${TEMPLATE_DIR}/exercises/${e}.cpp DESTINATION ${WORK_DIR}/course/exercises)
endforeach()
file(WRITE ${WORK_DIR}/course/grading.json "{\"hints\": \"brief\"}")
execute_process(COMMAND ${WORK_DIR}/prefix/bin/xenc-grade-all --exercises
                        --settings ${WORK_DIR}/course/grading.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE registry ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xenc-grade-all --exercises exited ${rc}:\n${registry}\n${err}")
endif()
string(JSON n LENGTH "${registry}" exercises)
string(JSON first GET "${registry}" exercises 0 name)
string(JSON second GET "${registry}" exercises 1 name)
string(JSON left_out LENGTH "${registry}" not_selected)
if(NOT n EQUAL 2 OR NOT first STREQUAL "softmax" OR NOT second STREQUAL "merge_heads" OR NOT left_out EQUAL 11)
  message(FATAL_ERROR "the teacher's folder holds softmax and merge_heads; --exercises says:\n${registry}")
endif()
