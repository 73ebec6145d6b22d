# The teacher README's worked example, "Adding an exercise touches two files", followed as written:
# its two blocks (the exercise lib/src/grade/exercises/relu.cpp and its solution
# tests/grade/solutions/relu.cpp) are taken out of apps/assignment/README.md and written, and
# nothing else, into a scratch copy of the source tree. From that copy, as its build does, the
# library's declarations (exercise_types.hpp, exercise_specs.hpp) and the template's exercises.hpp
# and stubs are generated (cmake/XencExercises.cmake): the template changes by relu's declaration
# and stub only. The copy's template, built against a scratch install of this build with the
# exercise compiled into grade (as lib/ would hold it), grades `relu` with nothing else edited:
# grade --list names it, the stub fails as a stub, the solution passes, a wrong relu fails.
# Inputs: BUILD_DIR, CLANG_FORMAT, README, SOURCE_DIR, TEMPLATE_DIR, WORK_DIR.
include(${CMAKE_CURRENT_LIST_DIR}/scratch.cmake)
install_scratch()

readme_block("worked-example: exercise" exercise DEDENT)
readme_block("worked-example: solution" solution DEDENT)

# A scratch copy of the source tree (the folders the exercise, its solution and the generation
# touch; the build, .git and the notebooks' outputs stay out).
set(src ${WORK_DIR}/source)
foreach(dir cmake lib apps/assignment tests/grade/solutions notebooks/tools)
  file(COPY ${SOURCE_DIR}/${dir}/ DESTINATION ${src}/${dir})
endforeach()
file(COPY ${SOURCE_DIR}/.clang-format DESTINATION ${src})

# The two files.
file(WRITE ${src}/lib/src/grade/exercises/relu.cpp "${exercise}")
file(WRITE ${src}/tests/grade/solutions/relu.cpp "${solution}")

# What the copy's build generates from them: the library's headers ...
set(generated ${WORK_DIR}/generated)
file(WRITE ${WORK_DIR}/generate.cmake "include(${src}/cmake/XencExercises.cmake)
file(GLOB files ${src}/lib/src/grade/exercises/*.cpp)
list(SORT files)
xenc_generate_exercise_headers(${generated}/xenc/grade \"\${files}\")
")
execute_process(COMMAND ${CMAKE_COMMAND} -P ${WORK_DIR}/generate.cmake
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "generating the library's declarations from the copy failed:\n${out}")
endif()
file(READ ${generated}/xenc/grade/exercise_types.hpp types)
file(READ ${generated}/xenc/grade/exercise_specs.hpp specs)
expect_in("${types}" "the generated exercise_types.hpp"
          "using ReluFn = std::function<Tensor2(const Tensor2& x)>;"
          "ExerciseResult check_relu(const ReluFn& student);"
          "using relu = Tensor2(const Tensor2& x);\n"
          " X(relative_shift) X(relu) X(test_softmax)")
expect_in("${specs}" "the generated exercise_specs.hpp" "inline ExerciseInfo relu() {"
          "e.signature = R\"xenc(Tensor2 relu(const Tensor2& x))xenc\";" "e.order = 13;")

# ... and the template's exercises.hpp and stubs (exercises_update).
execute_process(COMMAND ${CMAKE_COMMAND} -DMODE=write -DCLANG_FORMAT=${CLANG_FORMAT}
                        -DEXERCISES_DIR=${src}/lib/src/grade/exercises
                        -DTEMPLATE_DIR=${src}/apps/assignment/template
                        -P ${src}/cmake/XencExercises.cmake
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "generating the template from the copy failed:\n${out}")
endif()
# every other file of the template is as committed; exercises.hpp gained relu's declaration
file(GLOB_RECURSE committed RELATIVE ${TEMPLATE_DIR} ${TEMPLATE_DIR}/*)
file(GLOB_RECURSE now RELATIVE ${src}/apps/assignment/template ${src}/apps/assignment/template/*)
list(REMOVE_ITEM now exercises/relu.cpp)
if(NOT committed STREQUAL now)
  message(FATAL_ERROR "the generated template's files are ${now}, expected ${committed} and exercises/relu.cpp")
endif()
foreach(f ${committed})
  if(NOT f STREQUAL "exercises.hpp")
    file(READ ${TEMPLATE_DIR}/${f} a)
    file(READ ${src}/apps/assignment/template/${f} b)
    if(NOT a STREQUAL b)
      message(FATAL_ERROR "generating the template with relu changed ${f}")
    endif()
  endif()
endforeach()
file(READ ${src}/apps/assignment/template/exercises.hpp header)
file(READ ${src}/apps/assignment/template/exercises/relu.cpp stub)
expect_in("${header}" "the generated exercises.hpp"
          "/// ReLU, entry by entry:  y = max(x, 0)\n/// Shapes:  x, y: [N, C]\nTensor2 relu(const Tensor2& x);\n")
expect_in("${stub}" "the generated stub exercises/relu.cpp" "//     y = max(x, 0), entry by entry\n"
          "Tensor2 relu(const Tensor2& x) {\n  // your code here\n  throw std::logic_error(\"relu: not implemented\");\n}\n")

# The copy's template with relu only, against the scratch install; the exercise is compiled into
# grade and the copy's generated declarations come first where the library's would be.
set(copy ${WORK_DIR}/assignment)
file(COPY ${src}/apps/assignment/template/ DESTINATION ${copy})
file(GLOB stubs ${copy}/exercises/*.cpp)
list(REMOVE_ITEM stubs ${copy}/exercises/relu.cpp)
file(REMOVE ${stubs})
file(APPEND ${copy}/CMakeLists.txt "
add_library(relu_exercise OBJECT ${src}/lib/src/grade/exercises/relu.cpp)
target_link_libraries(relu_exercise PRIVATE xencoder::xencoder)
# grade runs the checks; child_relu, the trusted half of grade-relu, declares the student's
# function from signature::relu
foreach(t relu_exercise grade child_relu)
  target_include_directories(\${t} BEFORE PRIVATE ${generated})
endforeach()
target_sources(grade PRIVATE $<TARGET_OBJECTS:relu_exercise>)
")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${copy} -B ${copy}/build -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "configuring the template with the worked example failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${copy}/build RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "building grade with the worked example failed:\n${out}")
endif()

execute_process(COMMAND ${copy}/build/grade --list RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "relu\n")
  message(FATAL_ERROR "grade --list (exit ${rc}) printed '${out}', expected 'relu'")
endif()
execute_process(COMMAND ${copy}/build/grade RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(expected "✘ relu: not implemented yet (the stub throws) (0 of 1 points)\n0 of 1 exercises passed, 0 of 1 points\n")
if(NOT rc EQUAL 1 OR NOT out STREQUAL expected)
  message(FATAL_ERROR "grade on the generated stub exited ${rc} and printed:\n${out}${err}\nexpected:\n${expected}")
endif()
# the solution, the second file, as the student's answer
configure_file(${src}/tests/grade/solutions/relu.cpp ${copy}/exercises/relu.cpp COPYONLY)
execute_process(COMMAND ${copy}/build/grade RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_in("${out}" "grade on the README's solution" "✔ relu: 2 of 2 checks passed" "1 of 1 exercises passed, 1 of 1 points")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "grade on the README's solution exited ${rc}:\n${out}${err}")
endif()
set(solved "${out}")
# a wrong relu (negative entries kept as their absolute value) fails the hand example
file(WRITE ${copy}/exercises/relu.cpp "#include \"exercises.hpp\"
namespace assignment {
Tensor2 relu(const Tensor2& x) {
  Tensor2 y = x;
  for (float& v : y) v = v > 0 ? v : -v;
  return y;
}
}  // namespace assignment
")
execute_process(COMMAND ${copy}/build/grade RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_in("${out}" "grade on a wrong relu" "✘ relu: 0 of 2 checks passed" "hand example: [[-1, 0, 2]]"
          "0 of 1 exercises passed, 0 of 1 points")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "grade on a wrong relu exited ${rc}:\n${out}${err}")
endif()
message(STATUS "the README's worked example: two files, grade lists relu, fails its stub, passes the solution, fails a wrong relu:\n${solved}")
