# Runs a notebook in clang-repl and checks the grader's reports in its outputs:
#   EXPECT=pass  with SOLUTIONS=DIR: every exercise cell replaced by DIR/<id>.cpp; every check must
#                pass (the notebook_solved_* tests);
#   EXPECT=fail  without SOLUTIONS: the stubs as committed must fail their checks.
# Arguments: NBTOOL, NOTEBOOK, OUT (outputs JSON), REPL (the interpreter command, a ;-list),
# EXPECT (pass|fail), SOLUTIONS (optional).
set(run_args run ${NOTEBOOK} ${OUT})
if(SOLUTIONS)
  list(APPEND run_args --solutions ${SOLUTIONS})
endif()
execute_process(COMMAND ${NBTOOL} ${run_args} -- ${REPL} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nbtool run failed (exit code ${rc})")
endif()
execute_process(COMMAND ${NBTOOL} grades ${NOTEBOOK} ${OUT} ${EXPECT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the grader's reports in ${OUT} are not what EXPECT=${EXPECT} requires")
endif()
