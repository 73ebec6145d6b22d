# xenc-grade-all on a class of five made-up submissions (softmax for 2 points, merge_heads for 3,
# time limit 5 s, so that a correct exercise is not killed on a loaded CI machine): correct, a crash, a hang, a wrong answer, a file that does not compile. The
# CSV must hold what a teacher expects: each student's points per exercise, the total, and a
# note naming each failure (a note with a comma is quoted); one report per student.
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

execute_process(COMMAND ${WORK_DIR}/prefix/bin/xenc-grade-all ${class} ${grade_cache} --settings ${WORK_DIR}/grading.json
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
foreach(s a_correct b_crash c_hang d_wrong e_no_compile)
  if(NOT EXISTS ${WORK_DIR}/grades/${s}.txt OR NOT EXISTS ${WORK_DIR}/grades/${s}.json)
    message(FATAL_ERROR "no report for ${s} in ${WORK_DIR}/grades")
  endif()
endforeach()
file(READ ${WORK_DIR}/grades/d_wrong.txt wrong)
expect_in("${wrong}" "d_wrong's report" "✘ softmax: 6 of 8 checks passed (1.5 of 2 points)"
          "hint: this is a known mistake, softmax without the max subtraction")
message(STATUS "grades.csv:\n${csv}\n${out}")

# The build cache (with SHARED_DIR, the fixture's; else DIR/cache): grading the same class again
# gives the same CSV and stores no new program (no file was compiled again); after a one-line
# comment is added to d_wrong's softmax.cpp, a regrade stores exactly one new program (that file,
# compiled again) and gives the same CSV (a comment changes no verdict).
if(SHARED_DIR)
  set(programs ${SHARED_DIR}/cache/programs)
else()
  set(programs ${WORK_DIR}/grades/cache/programs)
endif()
function(count_programs var)
  file(GLOB entries LIST_DIRECTORIES true RELATIVE ${programs} ${programs}/*)
  list(FILTER entries INCLUDE REGEX "^[0-9a-f]+$")
  list(LENGTH entries n)
  set(${var} ${n} PARENT_SCOPE)
endfunction()
function(regrade what)
  execute_process(COMMAND ${WORK_DIR}/prefix/bin/xenc-grade-all ${class} ${grade_cache}
                          --settings ${WORK_DIR}/grading.json --output ${WORK_DIR}/grades
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  file(READ ${WORK_DIR}/grades/grades.csv again)
  if(NOT rc EQUAL 0 OR NOT again STREQUAL csv)
    message(FATAL_ERROR "${what}: xenc-grade-all exited ${rc}, grades.csv is:\n${again}\n"
                        "expected the first run's:\n${csv}\n${err}")
  endif()
endfunction()
count_programs(first)
if(first LESS 1)
  message(FATAL_ERROR "no program in the cache ${programs} after grading the class")
endif()
regrade("the same class again")
count_programs(second)
if(NOT second EQUAL first)
  message(FATAL_ERROR "grading the same class again stored ${second} programs, not ${first}")
endif()
file(APPEND ${class}/d_wrong/exercises/softmax.cpp "\n// a comment: a new file for the cache\n")
regrade("d_wrong's softmax with a comment")
count_programs(third)
math(EXPR expected "${first} + 1")
if(NOT third EQUAL expected)
  message(FATAL_ERROR "after one file changed, the cache holds ${third} programs, not ${expected}")
endif()
message(STATUS "the cache: ${first} programs; the same class again: the same CSV, no new program; one changed file: one new program")
