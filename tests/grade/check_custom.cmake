# The teacher README's "A check of your own" example, as a teacher runs it: the CMakeLists.txt and
# my_check.cpp blocks are extracted from apps/assignment/README.md (each follows its
# `<!-- custom-check: NAME -->` marker), built against a scratch install of this build, run, and
# its output must equal the README's `<!-- custom-check: output -->` block. The README cannot rot.
# Inputs: BUILD_DIR, README, WORK_DIR.
include(${CMAKE_CURRENT_LIST_DIR}/scratch.cmake)
install_scratch()


set(project ${WORK_DIR}/my_check)
readme_block("custom-check: CMakeLists.txt" cmakelists)
readme_block("custom-check: my_check.cpp" source)
readme_block("custom-check: output" expected)
file(WRITE ${project}/CMakeLists.txt "${cmakelists}")
file(WRITE ${project}/my_check.cpp "${source}")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${project} -B ${project}/build -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "configuring the README's example failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${project}/build RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "building the README's example failed:\n${out}")
endif()
execute_process(COMMAND ${project}/build/my_check RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1 OR NOT out STREQUAL expected)
  message(FATAL_ERROR "my_check exited ${rc} (the README says 1) and printed:\n${out}${err}\nthe README shows:\n${expected}")
endif()
message(STATUS "the README's custom check builds against the install and prints what the README shows:\n${out}")
