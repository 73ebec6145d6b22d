# xenc-grade-all on a class of five made-up submissions (softmax for 2 points, merge_heads for 3,
# time limit 5 s, so that a correct exercise is not killed on a loaded CI machine): correct, a crash, a hang, a wrong answer, a file that does not compile. The
# CSV must hold what a teacher expects: each student's points per exercise, the total, a note
# naming each failure (a note with a comma is quoted) and the museum exhibit when grade named one,
# when (UTC) and with which settings each row was graded; one report per student; the Canvas and
# Moodle gradebooks beside it.
# Then the class report beside it (class.json, class.html): the distributions, the check failed
# most, the known mistake, the students who need a look and the identical pairs, by construction.
# Then a student with misnamed work (f_misnamed, graded alone); then --exercises with the settings
# in a teacher's folder of two exercises and no "exercises" key lists those two. Last, Gradescope's
# bundle, run in a fake /autograder tree on d_wrong's files (check_gradescope_bundle.sh).
include(${CMAKE_CURRENT_LIST_DIR}/scratch.cmake)
set(SIMILARITY_NOTICE "This report flags, it does not judge: a flagged pair shares much of its code once the template's stub is removed, and two correct solutions of a short exercise can be alike. Read each pair side by side before drawing any conclusion.")
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
expect_in("${out}" "xenc-grade-all's output" "wrote ${WORK_DIR}/grades/class.html and ${WORK_DIR}/grades/class.json (the class report)" "wrote ${WORK_DIR}/grades/grades.csv (5 students graded), their reports (${WORK_DIR}/grades/<student>.txt), ${WORK_DIR}/grades/canvas.csv and ${WORK_DIR}/grades/moodle.csv")


# The class report (class.json, class.html), against what each made-up student does by
# construction. A value of class.json: json_is(<expected> <path...>).
file(READ ${WORK_DIR}/grades/class.json report)
# (a path ending in LENGTH: the length of the array there)
function(json_is expected)
  set(path ${ARGN})
  list(GET path -1 last)
  if(last STREQUAL "LENGTH")
    list(POP_BACK path)
    string(JSON got ERROR_VARIABLE error LENGTH "${report}" ${path})
  else()
    string(JSON got ERROR_VARIABLE error GET "${report}" ${path})
  endif()
  string(REGEX REPLACE "^(-?[0-9]+)\\.0+$" "\\1" got "${got}")  # 2.0 is 2
  if(error OR NOT got STREQUAL "${expected}")
    message(FATAL_ERROR "class.json's ${ARGN} is '${got}' ${error}, expected '${expected}':\n${report}")
  endif()
endfunction()
json_is(5 students)
json_is(5 graded)
# softmax, 2 points over its 8 checks: a_correct and b_crash 2, d_wrong 1.5 (6 of 8), c_hang and
# e_no_compile 0; one bar per score a check's points allow (0, 0.25, ..., 2)
json_is(softmax exercises 0 name)
json_is(2 exercises 0 passed)
json_is(9 exercises 0 distribution LENGTH)
foreach(bin "0|0|2" "6|1.5|1" "8|2|2" "1|0.25|0" "4|1|0")
  string(REPLACE "|" ";" bin "${bin}")
  list(GET bin 0 i)
  list(GET bin 1 points)
  list(GET bin 2 students)
  json_is(${points} exercises 0 distribution ${i} points)
  json_is(${students} exercises 0 distribution ${i} students)
endforeach()
# merge_heads: b_crash 0 (crashed), the four others 3
json_is(merge_heads exercises 1 name)
json_is(4 exercises 1 passed)
json_is(0 exercises 1 distribution 0 points)
json_is(1 exercises 1 distribution 0 students)
string(JSON last LENGTH "${report}" exercises 1 distribution)
math(EXPR last "${last} - 1")
json_is(3 exercises 1 distribution ${last} points)
json_is(4 exercises 1 distribution ${last} students)
# softmax's checks ran for a_correct, b_crash and d_wrong (c_hang and e_no_compile have no
# verdict); d_wrong fails large logits and the fully masked row: the first is the check failed most
json_is(3 exercises 0 checks 0 ran)
json_is("edge case: large logits (stability)" most_failed_check check)
json_is(softmax most_failed_check exercise)
json_is(1 most_failed_check failed)
json_is(3 most_failed_check ran)
# the one known mistake: d_wrong's softmax without the max
json_is(1 exhibits LENGTH)
json_is("softmax without the max subtraction" exhibits 0 title)
json_is(softmax exhibits 0 exercise)
json_is(1 exhibits 0 count)
json_is(d_wrong exhibits 0 students 0)
# need a look: b_crash's merge_heads crashed, c_hang's softmax timed out, e_no_compile's softmax
# did not compile (a_correct and d_wrong ran everything)
json_is(3 need_a_look LENGTH)
foreach(look "0|b_crash|merge_heads|crashed" "1|c_hang|softmax|timed out"
             "2|e_no_compile|softmax|did not compile")
  string(REPLACE "|" ";" look "${look}")
  list(GET look 0 i)
  list(GET look 1 student)
  list(GET look 2 exercise)
  list(GET look 3 kind)
  json_is(${student} need_a_look ${i} student)
  json_is(${exercise} need_a_look ${i} exercise)
  json_is("${kind}" need_a_look ${i} kind)
endforeach()
# similar pairs: a_correct and b_crash handed in the same softmax (the solution), and a_correct,
# c_hang, d_wrong and e_no_compile the same merge_heads: 1 + 6 identical pairs, each 100% both
# ways, with its side-by-side page
json_is("${SIMILARITY_NOTICE}" similarity notice)
function(expect_pair exercise a b)
  string(JSON n LENGTH "${report}" similarity exercises)
  math(EXPR n "${n} - 1")
  foreach(i RANGE ${n})
    string(JSON name GET "${report}" similarity exercises ${i} exercise)
    if(NOT name STREQUAL exercise)
      continue()
    endif()
    string(JSON m LENGTH "${report}" similarity exercises ${i} pairs)
    math(EXPR m "${m} - 1")
    foreach(j RANGE ${m})
      string(JSON pa GET "${report}" similarity exercises ${i} pairs ${j} a)
      string(JSON pb GET "${report}" similarity exercises ${i} pairs ${j} b)
      if(pa STREQUAL a AND pb STREQUAL b)
        json_is(1 similarity exercises ${i} pairs ${j} overlap_a)
        json_is(1 similarity exercises ${i} pairs ${j} overlap_b)
        string(JSON page GET "${report}" similarity exercises ${i} pairs ${j} page)
        file(READ ${WORK_DIR}/grades/${page} side)
        expect_in("${side}" "${page}" "${a} and ${b}</h1>" "${SIMILARITY_NOTICE}")
        return()
      endif()
    endforeach()
  endforeach()
  message(FATAL_ERROR "class.json flags no ${exercise} pair ${a}, ${b}:\n${report}")
endfunction()
expect_pair(softmax a_correct b_crash)
foreach(pair "a_correct|c_hang" "a_correct|d_wrong" "a_correct|e_no_compile" "c_hang|d_wrong"
             "c_hang|e_no_compile" "d_wrong|e_no_compile")
  string(REPLACE "|" ";" pair "${pair}")
  expect_pair(merge_heads ${pair})
endforeach()
# (the mean, 1.1, is checked in the page's sentence: CMake prints a JSON real with 17 digits)
# the page: self-contained (inline SVG, one bar chart per exercise, nothing fetched), its
# sentences from the same numbers
file(READ ${WORK_DIR}/grades/class.html html)
expect_in("${html}" "class.html" "5 students, 5 graded."
          "5 graded students: 2 passed every check; the mean is 1.1 of 2 points."
          "failed by 1 of 3 students whose softmax ran"
          "<td>softmax without the max subtraction</td><td>softmax</td><td>1</td><td>d_wrong</td>"
          "3 students have an exercise that did not run to a verdict"
          "<td>c_hang</td><td>softmax</td><td>timed out</td>" "${SIMILARITY_NOTICE}"
          "href=\"pairs/softmax-1.html\"")
string(REGEX MATCHALL "<svg " svgs "${html}")
list(LENGTH svgs svgs)
if(NOT svgs EQUAL 2)
  message(FATAL_ERROR "class.html has ${svgs} figures, expected 2 (one per exercise)")
endif()
string(REGEX MATCHALL "https?://[^\"]*" urls "${html}")
list(REMOVE_ITEM urls "http://www.w3.org/2000/svg")
expect_not_in("${html}" "class.html" "<script" "<link" "<img" "<?xml")
if(urls)
  message(FATAL_ERROR "class.html refers to ${urls}: it must be self-contained")
endif()
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
  # the same rows, graded at another time
  string(REGEX REPLACE ",20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z,grading\\.json:[0-9a-f]+ template:[0-9a-f]+\n"
         ",<when>,<settings>\n" again_stamped "${again}")
  if(NOT rc EQUAL 0 OR NOT again_stamped STREQUAL stamped)
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

# A student with misnamed work, graded alone (its own class folder, the same settings, install and
# cache): f_misnamed renamed merge_heads (the note names the missing function) and handed softmax
# in as Softmax.cpp and softmax.cc (each named, with the closest exercise, in the output and the
# report).
set(misnamed_class ${WORK_DIR}/submissions-misnamed)
configure_file(${BAD_DIR}/merge_heads_renamed.cpp
               ${misnamed_class}/f_misnamed/exercises/merge_heads.cpp COPYONLY)
foreach(f Softmax.cpp softmax.cc)
  configure_file(${SOLUTIONS_DIR}/softmax.cpp ${misnamed_class}/f_misnamed/exercises/${f} COPYONLY)
endforeach()
execute_process(COMMAND ${WORK_DIR}/prefix/bin/xenc-grade-all ${misnamed_class} ${grade_cache}
                        --settings ${WORK_DIR}/grading.json --output ${WORK_DIR}/grades-misnamed
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(READ ${WORK_DIR}/grades-misnamed/grades.csv csv)
# the renamed function is named, not the linker's exit status; the misnamed files are reported
string(REGEX MATCH "\nf_misnamed,[^\n]*" row "${csv}")
expect_in("${row}" "f_misnamed's row" "f_misnamed,0,5,0,0,\"softmax: not implemented; merge_heads: failed: does not link: exercises/merge_heads.cpp does not define assignment::merge_heads, the function `Tensor3 merge_heads(const Tensor4& x)`")
expect_not_in("${row}" "f_misnamed's row" "ld returned")
set(stray "is not an exercise of this assignment and was not graded (did you mean exercises/softmax.cpp?)")
expect_in("${out}" "xenc-grade-all's output" "f_misnamed: 0 of 5 points
  f_misnamed: exercises/Softmax.cpp ${stray}
  f_misnamed: exercises/softmax.cc ${stray}")
file(READ ${WORK_DIR}/grades-misnamed/f_misnamed.txt misnamed)
expect_in("${misnamed}" "f_misnamed's report" "exercises/Softmax.cpp ${stray}" "exercises/softmax.cc ${stray}")

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
if(NOT n EQUAL 2 OR NOT first STREQUAL "softmax" OR NOT second STREQUAL "merge_heads" OR NOT left_out EQUAL 14)
  message(FATAL_ERROR "the teacher's folder holds softmax and merge_heads; --exercises says:\n${registry}")
endif()

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
