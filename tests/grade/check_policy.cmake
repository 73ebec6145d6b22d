# The library-calls policy (issue 27, point 4), with the installed xenc-grade-all, as a teacher
# grades a class whose grading.json says "library_calls": false. Needs bubblewrap.
# Four students go around the policy (tests/grade/hostile/softmax_*.cpp.in, the paths and the
# mangled name written in here, and softmax_copies_header.cpp): dlsym of xencoder's
# softmax_forward<2>, dlopen of the installed library by path and soname, #include of
# ops/softmax.hpp by its installed path, and an inline copy of that header's declaration.
# Expected: dlsym and dlopen find nothing (grade-softmax is linked against xencoder::tensors
# alone; the library is not mounted in the sandbox), so both score what the plain zeros softmax
# scores, and their note says they called dlsym/dlopen, which find nothing; the include does not compile and the copy is refused by the symbol check, and each
# note says why; the correct student's and b_zeros's rows equal a run without the four. The control: with "library_calls": true the dlsym and dlopen students get
# softmax's full points, so the attacks work where the policy is off. The class graded twice into
# the same folder, the second time from the build cache, gives the same CSV.
include(${CMAKE_CURRENT_LIST_DIR}/scratch.cmake)
install_scratch()
set(prefix ${WORK_DIR}/prefix)
set(grade_all ${prefix}/bin/xenc-grade-all)

# what the hostile students reach for: the library's real file, its softmax_forward<2>, its header
file(GLOB LIBRARY ${prefix}/lib/libxencoder.so.*.*)
list(GET LIBRARY 0 LIBRARY)
execute_process(COMMAND nm -D --defined-only ${LIBRARY} OUTPUT_VARIABLE symbols)
string(REGEX MATCH "_ZN4xenc15softmax_forwardILm2EEE[A-Za-z0-9_]*" SYMBOL "${symbols}")
if(NOT SYMBOL)
  message(FATAL_ERROR "no softmax_forward<2> in ${LIBRARY}")
endif()
set(HEADER ${prefix}/include/xenc/ops/softmax.hpp)
if(NOT EXISTS ${HEADER})
  message(FATAL_ERROR "no ${HEADER} in the scratch install")
endif()

function(student class name softmax)
  if(softmax STREQUAL "solution")
    configure_file(${SOLUTIONS_DIR}/softmax.cpp ${class}/${name}/exercises/softmax.cpp COPYONLY)
  elseif(softmax MATCHES "\\.in$")
    configure_file(${HOSTILE_DIR}/${softmax} ${class}/${name}/exercises/softmax.cpp @ONLY)
  else()
    configure_file(${HOSTILE_DIR}/${softmax} ${class}/${name}/exercises/softmax.cpp COPYONLY)
  endif()
  configure_file(${SOLUTIONS_DIR}/merge_heads.cpp ${class}/${name}/exercises/merge_heads.cpp COPYONLY)
endfunction()

foreach(class ref hostile)
  student(${WORK_DIR}/${class} a_correct solution)
  student(${WORK_DIR}/${class} b_zeros softmax_zeros.cpp)
endforeach()
# the hostile students (@LOAD@ empty), and the control's, where the policy is off: there the
# dlsym student also uses the library (a global holding softmax_forward's address), as an
# exercise allowed to call it would. A program whose code uses nothing of the library is linked
# without it (the toolchain links --as-needed), and dlsym would find nothing there either.
set(LOAD "")
foreach(h dlsym dlopen)
  student(${WORK_DIR}/hostile h_${h} softmax_${h}.cpp.in)
endforeach()
student(${WORK_DIR}/hostile h_includes_ops softmax_includes_ops.cpp.in)
student(${WORK_DIR}/hostile h_copies_header softmax_copies_header.cpp)
set(LOAD "#include <xenc/ops/softmax.hpp>\nauto* xenc_policy_loaded = &xenc::softmax_forward<2>;")
foreach(h dlsym dlopen)
  student(${WORK_DIR}/allowed h_${h} softmax_${h}.cpp.in)
endforeach()
foreach(calls false true)
  file(WRITE ${WORK_DIR}/grading-${calls}.json
       "{\"exercises\": {\"softmax\": 2, \"merge_heads\": 3}, \"library_calls\": ${calls},
         \"time_limit_seconds\": 20, \"compile_time_limit_seconds\": 60}")
endforeach()

function(grade class calls)
  execute_process(COMMAND ${grade_all} ${WORK_DIR}/${class} ${grade_cache} --settings ${WORK_DIR}/grading-${calls}.json
                          --output ${WORK_DIR}/grades-${class}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "xenc-grade-all ${class} exited ${rc}:\n${out}\n${err}")
  endif()
  expect_not_in("${out}" "xenc-grade-all's output" "Sandbox:")
  file(READ ${WORK_DIR}/grades-${class}/grades.csv csv)
  message(STATUS "${class}, \"library_calls\": ${calls}:\n${csv}")
  set(csv "${csv}" PARENT_SCOPE)
endfunction()

# A student's CSV row, set as `row`.
function(row_of csv who)
  string(REGEX MATCH "\n${who},[^\n]*" line "${csv}")
  string(STRIP "${line}" line)
  # when the row was graded differs from run to run and student to student (check_class.cmake
  # checks the column)
  string(REGEX REPLACE ",20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z,"
                       ",<when>," line "${line}")
  set(row "${line}" PARENT_SCOPE)
endfunction()

grade(ref false)
set(ref "${csv}")
grade(hostile false)
set(hostile "${csv}")
foreach(who a_correct b_zeros)
  row_of("${ref}" ${who})
  set(want "${row}")
  row_of("${hostile}" ${who})
  if(NOT row STREQUAL want)
    message(FATAL_ERROR "${who}: '${row}' with the hostile students, '${want}' without")
  endif()
endforeach()
row_of("${hostile}" a_correct)
expect_in("${row}" "a_correct's row" "a_correct,5,5,2,3,")
# dlsym and dlopen: nothing found, the zeros' score (3.25 of 5: merge_heads's 3, and 0.25 of softmax's 2 for one of its 8 checks), and a note that
# says why (the zeros' own note is a plain "softmax: failed")
row_of("${hostile}" b_zeros)
expect_in("${row}" "b_zeros's row" "b_zeros,3.25,5,0.25,3,softmax: failed")
foreach(pair "dlsym|dlsym" "dlopen|dlopen and dlsym")
  string(REPLACE "|" ";" pair "${pair}")
  list(GET pair 0 h)
  list(GET pair 1 calls)
  set(why "exercises/softmax.cpp calls ${calls}, which find nothing of xencoder here: library calls are not allowed in this assignment (grading.json: ")
  row_of("${hostile}" h_${h})
  expect_in("${row}" "h_${h}'s row" "h_${h},3.25,5,0.25,3,\"softmax: failed: ${why}")
  file(READ ${WORK_DIR}/grades-hostile/h_${h}.txt report)
  expect_in("${report}" "h_${h}'s report"
            "${why}\"library_calls\": false), and the library is neither linked nor visible when your code runs")
endforeach()
row_of("${hostile}" h_includes_ops)
expect_in("${row}" "h_includes_ops's row" "h_includes_ops,3,5,0,3,"
          "softmax: failed: library calls are not allowed in this assignment (grading.json: \"\"library_calls\"\": false): exercises/softmax.cpp includes xenc/ops/softmax.hpp")
file(READ ${WORK_DIR}/grades-hostile/h_includes_ops.txt report)
expect_in("${report}" "h_includes_ops's report"
          "✘ softmax: library calls are not allowed in this assignment (grading.json: \"library_calls\": false): exercises/softmax.cpp includes xenc/ops/softmax.hpp, which is not provided. Write it with your own loops on the tensors")

row_of("${hostile}" h_copies_header)
expect_in("${row}" "h_copies_header's row" "h_copies_header,3,5,0,3,"
          "softmax: failed: library calls are not allowed in this assignment")
file(READ ${WORK_DIR}/grades-hostile/h_copies_header.txt report)
expect_in("${report}" "h_copies_header's report"
          "✘ softmax: library calls are not allowed in this assignment (grading.json: \"library_calls\": false): exercises/softmax.cpp calls xenc::softmax_forward. Write it with your own loops on the tensors")

# graded again into the same folder, now from the build cache (nothing is compiled again): the
# same CSV, the dlsym and dlopen notes too (they are read from the object, kept in the cache)
string(REGEX REPLACE ",20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z,"
                     ",<when>," first "${hostile}")
grade(hostile false)
string(REGEX REPLACE ",20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z,"
                     ",<when>," again "${csv}")
if(NOT again STREQUAL first)
  message(FATAL_ERROR "grading the class again gave another CSV:\n${again}\nthe first:\n${first}")
endif()

# the control: where the policy is off, the same dlsym and dlopen find softmax_forward
grade(allowed true)
foreach(h dlsym dlopen)
  row_of("${csv}" h_${h})
  expect_in("${row}" "h_${h}'s row with \"library_calls\": true" "h_${h},5,5,2,3,")
endforeach()
message(STATUS "the policy holds against dlsym, dlopen and the library's headers")
