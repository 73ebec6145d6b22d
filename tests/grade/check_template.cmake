# The compiled assignment, as a teacher and a student use it: install this build into a scratch
# prefix, copy apps/assignment/template/, build it with find_package(xencoder), run ./grade.
#   1. on the stubs as committed: grade exits 1 and reports failures (✘, "not implemented");
#   2. with tests/grade/solutions/*.cpp copied over the stubs: grade exits 0, every check passes;
#   3. the command line the student README documents;
#   4. the test-writing exercises (the student writes a check, run against the correct function and
#      the museum's exhibits, each in a fresh sandboxed process): a weak test catches some and the
#      report names the missed mistake, an empty test catches none, a test that aborts on what it
#      dislikes gives no verdict there and catches nothing;
#   5. the sandboxed compile uses the precompiled exercises.hpp (GCC -H prints its .gch).
# Inputs: BUILD_DIR, TEMPLATE_DIR, SOLUTIONS_DIR, WORK_DIR.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install into ${WORK_DIR}/prefix failed: ${rc}")
endif()

# Builds (incrementally) and runs the copy in ${dir}; sets grade_rc and grade_out in the caller.
function(build_and_grade dir)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${dir}/build
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc)
    message(FATAL_ERROR "building ${dir} failed:\n${out}")
  endif()
  execute_process(COMMAND ${dir}/build/grade RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  set(grade_rc ${rc} PARENT_SCOPE)
  set(grade_out "${out}" PARENT_SCOPE)
endfunction()

# 1. the stubs, as handed out
set(copy ${WORK_DIR}/assignment)
file(COPY ${TEMPLATE_DIR}/ DESTINATION ${copy})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${copy} -B ${copy}/build
                        -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "configuring the template's copy failed:\n${out}")
endif()
build_and_grade(${copy})
if(NOT grade_rc EQUAL 1)
  message(FATAL_ERROR "grade on the stubs exited with ${grade_rc}, expected 1:\n${grade_out}")
endif()
# the stub report is short: one line per unimplemented exercise, then the total
set(expected "")
foreach(name sinusoidal_table softmax layer_norm_forward layer_norm_backward attention split_heads
             merge_heads linear_backward cross_entropy rope alibi_slopes online_softmax_tile
             relative_shift test_softmax test_layer_norm_forward test_attention)
  string(APPEND expected "✘ ${name}: not implemented yet (the stub throws) (0 of 1 points)\n")
endforeach()
string(APPEND expected "0 of 16 exercises passed, 0 of 16 points\n")
if(NOT grade_out STREQUAL expected)
  message(FATAL_ERROR "grade on the stubs printed:\n${grade_out}\nexpected:\n${expected}")
endif()
message(STATUS "stubs: grade exited 1 and reported the failures")

# 2. the reference solutions copied over the stubs (as the teacher's README says), rebuilt
file(GLOB solutions ${SOLUTIONS_DIR}/*.cpp)
foreach(s ${solutions})
  get_filename_component(name ${s} NAME)
  if(NOT EXISTS ${copy}/exercises/${name})
    message(FATAL_ERROR "solution ${name} has no stub in the template's exercises/")
  endif()
  # a fresh timestamp, so that the build sees the change even within the stub's second
  file(READ ${s} text)
  file(WRITE ${copy}/exercises/${name} "${text}")
endforeach()
file(GLOB stubs ${TEMPLATE_DIR}/exercises/*.cpp)
list(LENGTH stubs n_stubs)
list(LENGTH solutions n_solutions)
if(NOT n_stubs EQUAL n_solutions)
  message(FATAL_ERROR "${n_stubs} stubs but ${n_solutions} solutions")
endif()
build_and_grade(${copy})
if(NOT grade_rc EQUAL 0)
  message(FATAL_ERROR "grade on the solutions exited with ${grade_rc}, expected 0:\n${grade_out}")
endif()
string(FIND "${grade_out}" "✘" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "grade on the solutions reports a failed check:\n${grade_out}")
endif()
string(FIND "${grade_out}" "16 of 16 exercises passed, 16 of 16 points" at)
if(at EQUAL -1)
  message(FATAL_ERROR "grade on the solutions does not report 16 of 16 exercises passed:\n${grade_out}")
endif()
message(STATUS "solutions: grade exited 0 and every check passed\n${grade_out}")

# 3. the command line the student README documents
execute_process(COMMAND ${copy}/build/grade softmax RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(FIND "${out}" "1 of 1 exercises passed, 1 of 1 points" at)
string(FIND "${out}" "attention" other)
if(NOT rc EQUAL 0 OR at EQUAL -1 OR NOT other EQUAL -1)
  message(FATAL_ERROR "grade softmax (exit ${rc}) does not grade softmax alone:\n${out}")
endif()
execute_process(COMMAND ${copy}/build/grade --list RESULT_VARIABLE rc OUTPUT_VARIABLE out)
set(names "sinusoidal_table\nsoftmax\nlayer_norm_forward\nlayer_norm_backward\nattention\nsplit_heads\n")
string(APPEND names "merge_heads\nlinear_backward\ncross_entropy\nrope\nalibi_slopes\nonline_softmax_tile\n")
string(APPEND names "relative_shift\ntest_softmax\ntest_layer_norm_forward\ntest_attention\n")
if(NOT rc EQUAL 0 OR NOT out STREQUAL names)
  message(FATAL_ERROR "grade --list (exit ${rc}) printed:\n${out}")
endif()
execute_process(COMMAND ${copy}/build/grade --help RESULT_VARIABLE rc OUTPUT_VARIABLE out)
string(FIND "${out}" "usage: grade [--format text|json|gradescope|junit|both]" at)
if(NOT rc EQUAL 0 OR NOT at EQUAL 0)
  message(FATAL_ERROR "grade --help (exit ${rc}) printed:\n${out}")
endif()
execute_process(COMMAND ${copy}/build/grade rotary RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err STREQUAL "grade: unknown exercise 'rotary' (grade --list shows the names)\n")
  message(FATAL_ERROR "grade rotary exited ${rc} with '${err}', expected 2 and the unknown-exercise message")
endif()
message(STATUS "grade softmax, grade --list, grade --help and grade <unknown> behave as the READMEs say")

# 4. the test-writing exercises, through grade (each candidate a fresh process of grade-<name>)
# A weak test of softmax: rows sum to 1 (catches the wrong axis, misses the overflow).
file(WRITE ${copy}/exercises/test_softmax.cpp [=[
#include "exercises.hpp"
#include <cmath>
namespace assignment {
bool test_softmax(const SoftmaxFn& softmax) {
  const Tensor2 y = softmax(Tensor2{{1, 2, 3}, {0, 5, 1}});
  for (std::size_t r = 0; r < 2; ++r)
    if (std::fabs(y(r, 0) + y(r, 1) + y(r, 2) - 1.0f) > 1e-5f) return false;
  return true;
}
}  // namespace assignment
]=])
# An empty test of attention: accepts everything.
file(WRITE ${copy}/exercises/test_attention.cpp [=[
#include "exercises.hpp"
namespace assignment {
bool test_attention(const AttentionFn&) { return true; }
}  // namespace assignment
]=])
# A test of layer norm that aborts (as assert would) on a function it rejects: no verdict there.
file(WRITE ${copy}/exercises/test_layer_norm_forward.cpp [=[
#include "exercises.hpp"
#include <cmath>
#include <cstdlib>
namespace assignment {
bool test_layer_norm_forward(const LayerNormForwardFn& f) {
  const Tensor2 y = f(Tensor2{{1, 3}}, Tensor1{1, 1}, Tensor1{0, 0}, 0.0f);
  if (std::fabs(y(0, 0) + 1) > 1e-5f) std::abort();
  return true;
}
}  // namespace assignment
]=])
build_and_grade(${copy})
foreach(want
    "✘ test_softmax: 2 of 3 checks passed (0.5 of 1 points)"
    "✔ the correct softmax passes your check"
    "✘ catches: softmax without the max subtraction\n      input:    your check, run on a softmax with this published mistake (the museum's exhibit; its code is not shown)\n      expected: your check rejects it (returns false or throws)\n      computed: your check returned true: it missed this mistake"
    "✔ catches: softmax over the wrong axis"
    "✘ test_attention: 1 of 5 checks passed (0 of 1 points)"
    "✘ test_layer_norm_forward: 1 of 4 checks passed (0 of 1 points)"
    "computed: no verdict: your program crashed with SIGABRT"
    "(a run without a verdict catches nothing)"
    "13 of 16 exercises passed, 13.5 of 16 points")
  string(FIND "${grade_out}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "grade on the test-writing exercises does not say '${want}':\n${grade_out}")
  endif()
endforeach()
string(FIND "${grade_out}" "softmax_without_max" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "the report shows an exhibit's code name:\n${grade_out}")
endif()
message(STATUS "test-writing exercises: a weak test 0.5, an empty test 0, an aborting test 0 with no verdict where it aborts")

# 5. the precompiled exercises.hpp is used inside the sandbox. GCC skips a .gch it cannot read or
# use (not bound into the sandbox, built with other flags) silently and compiles the headers
# instead, so only the compiler can say: one exercise compiled by grade, in its sandbox, with -H
# added to the build's compile command (GCC then prints "! FILE.gch" for a precompiled header it
# uses, and -Winvalid-pch, already there, "FILE.gch: not used because ..." for one it refuses).
# The file ends with an #error, so that grade keeps the compile's log (--logs).
set(db ${copy}/build/compile_commands.json)
file(READ ${db} db_text)
string(REPLACE "-Winvalid-pch" "-Winvalid-pch -H" probe_text "${db_text}")
if(probe_text STREQUAL db_text)
  message(FATAL_ERROR "${db} has no -Winvalid-pch: the exercises are not compiled with a precompiled header")
endif()
file(WRITE ${db} "${probe_text}")
file(WRITE ${WORK_DIR}/pch-probe/exercises/softmax.cpp
     "#include \"exercises.hpp\"\n#error the precompiled header probe ends here\n")
execute_process(COMMAND ${copy}/build/grade --submission ${WORK_DIR}/pch-probe
                        --logs ${WORK_DIR}/pch-probe-logs softmax
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
file(WRITE ${db} "${db_text}")
set(log_file ${WORK_DIR}/pch-probe-logs/softmax.log)
if(NOT EXISTS ${log_file})
  message(FATAL_ERROR "grade (exit ${rc}) kept no compile log ${log_file}:\n${out}")
endif()
file(READ ${log_file} log)
set(gch "${copy}/build/CMakeFiles/exercise_pch_xencoder.dir/cmake_pch.hxx.gch")
string(FIND "${log}" "\n! ${gch}\n" used)
if(used EQUAL -1)
  string(FIND "${log}" "! ${gch}\n" used)  # the log's first line
  if(NOT used EQUAL 0)
    set(used -1)
  endif()
endif()
string(FIND "${log}" "not used because" refused)
string(FIND "${log}" "the precompiled header probe ends here" reached)
if(used EQUAL -1 OR NOT refused EQUAL -1 OR reached EQUAL -1)
  string(SUBSTRING "${log}" 0 3000 head)
  message(FATAL_ERROR "the sandboxed compile did not use ${gch} (GCC -H prints '! ${gch}' when it "
                      "does); its log ${log_file} begins:\n${head}")
endif()
message(STATUS "the sandboxed compile used the precompiled exercises.hpp (${gch})")
