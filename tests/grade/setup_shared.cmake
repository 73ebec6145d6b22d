# The fixture of the xenc-grade-all checks (grade.class, grade.hostile, grade.policy,
# grade.regrade_after_kill): one scratch install of this build, SHARED_DIR/prefix, and one build
# cache, SHARED_DIR/cache, whose template build is made here, once, by xenc-grade-all on an empty
# class. Each check then grades with that prefix and `--cache SHARED_DIR/cache`: the template is
# not built again, and a file graded before (the same bytes, commands and build) is not compiled
# again. Each check keeps its own class, settings and output folder. Inputs: BUILD_DIR, SHARED_DIR.
cmake_policy(VERSION 3.20)
file(REMOVE_RECURSE ${SHARED_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${SHARED_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install into ${SHARED_DIR}/prefix failed: ${rc}")
endif()
file(MAKE_DIRECTORY ${SHARED_DIR}/empty_class)
execute_process(COMMAND ${SHARED_DIR}/prefix/bin/xenc-grade-all ${SHARED_DIR}/empty_class
                        --cache ${SHARED_DIR}/cache --output ${SHARED_DIR}/empty_grades
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS ${SHARED_DIR}/cache/template/build/grade)
  message(FATAL_ERROR "xenc-grade-all on an empty class exited ${rc} without building the "
                      "template in ${SHARED_DIR}/cache:\n${out}\n${err}")
endif()
message(STATUS "the template is built in ${SHARED_DIR}/cache/template\n${out}")
