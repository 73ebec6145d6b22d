# The notebooks' exercise cells against the grader's registry, the one list of exercises:
# `xenc-grade-all --exercises` prints it, and notebooks/tools/course_cells.py --check fails on a
# cell whose exercise the registry does not know, a stub whose signature is not the registry's, a
# heading whose points or a check cell whose hint level is not the registry's (without settings:
# 1 point each, full hints), a cell that is not what its exercise's file generates (its `// @`
# lines: the heading, the stub, the check), or a registered exercise with `// @notebook` lines
# that no notebook has.
# Inputs: GRADE_ALL, PYTHON, SOURCE_DIR, WORK_DIR.
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${GRADE_ALL} --exercises OUTPUT_FILE ${WORK_DIR}/registry.json RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "xenc-grade-all --exercises exited ${rc}")
endif()
execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/notebooks/tools/course_cells.py --registry ${WORK_DIR}/registry.json
                        --check ${SOURCE_DIR}/notebooks
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc)
  message(FATAL_ERROR "the notebooks' exercise cells do not match the registry:\n${out}")
endif()
message(STATUS "${out}")
