# The teacher README's worked example, "Adding an exercise (three files)", followed as written:
# its three blocks (the declarations for exercises.hpp, the exercise file, the template's stub) are
# taken out of apps/assignment/README.md, built against a scratch install of this build (the
# exercise file with the grader's internal headers of this source tree, as it would be inside
# lib/), and the assignment template grades `relu` with nothing else edited: the stub fails as a
# stub, a correct relu passes, and grade --list names it. The README cannot rot.
# Inputs: BUILD_DIR, README, SOURCE_DIR, TEMPLATE_DIR, WORK_DIR.
include(${CMAKE_CURRENT_LIST_DIR}/scratch.cmake)
install_scratch()

readme_block("worked-example: declarations" declarations DEDENT)
readme_block("worked-example: exercise" exercise DEDENT)
readme_block("worked-example: stub" stub DEDENT)

# 1. the declarations, as exercises.hpp would hold them (force-included where the library's
#    header would declare them)
file(WRITE ${WORK_DIR}/relu_declarations.hpp
     "#pragma once\n#include <xenc/grade/exercises.hpp>\nnamespace xenc::grade {\n${declarations}}\n")
# 2. the exercise file, where lib/ keeps it: "../exercise_support.hpp" is the source tree's
file(WRITE ${WORK_DIR}/relu.cpp "${exercise}")
# 3. the template, with the stub as exercises/relu.cpp and only that exercise
set(copy ${WORK_DIR}/assignment)
file(COPY ${TEMPLATE_DIR}/ DESTINATION ${copy})
file(GLOB stubs ${copy}/exercises/*.cpp)
file(REMOVE ${stubs})
file(WRITE ${copy}/exercises/relu.cpp "${stub}")
# what lib/ would hold, built into this copy's programs instead of the installed library
file(APPEND ${copy}/CMakeLists.txt "
add_library(relu_exercise OBJECT ${WORK_DIR}/relu.cpp)
target_include_directories(relu_exercise PRIVATE ${SOURCE_DIR}/lib/src/grade/exercises)
target_link_libraries(relu_exercise PRIVATE xencoder::xencoder)
# grade runs the checks; child_relu, the trusted half of grade-relu, declares the student's
# function from signature::relu (the library's header would hold both)
foreach(t relu_exercise grade child_relu)
  target_compile_options(\${t} PRIVATE -include ${WORK_DIR}/relu_declarations.hpp)
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
  message(FATAL_ERROR "grade on the README's stub exited ${rc} and printed:\n${out}${err}\nexpected:\n${expected}")
endif()
file(WRITE ${copy}/exercises/relu.cpp "#include \"exercises.hpp\"
namespace assignment {
Tensor2 relu(const Tensor2& x) {
  Tensor2 y = x;
  for (float& v : y) v = v > 0 ? v : 0.0f;
  return y;
}
}  // namespace assignment
")
execute_process(COMMAND ${copy}/build/grade RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_in("${out}" "grade on a correct relu" "✔ relu: 1 of 1 checks passed" "1 of 1 exercises passed, 1 of 1 points")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "grade on a correct relu exited ${rc}:\n${out}${err}")
endif()
message(STATUS "the README's worked example: grade lists relu, fails its stub, passes a solution:\n${out}")
