# The installed setup header works: installs the build into a scratch prefix, runs a notebook in
# clang-repl with only <prefix>/include on the include path (so xenc/xenc_cling.hpp is the
# installed variant, which loads <prefix>/lib/libxencoder*.so), and compares its outputs with the
# committed ones.
# Inputs: BUILD_DIR, WORK_DIR, NBTOOL, NOTEBOOK, REPL (the clang-repl command, a ;-list without
# the include paths), EXTRA_INCLUDE_DIRS (dependency include dirs, may be empty).
# With KERNEL_RUN (run_notebook.py's command, a ;-list) and JUPYTER instead of REPL: the installed
# kernel. `jupyter kernelspec list` with JUPYTER_PATH=<prefix>/share/jupyter must list xenc-cpp17
# in the prefix, and the notebook runs in Jupyter on that installed kernelspec (its argv names
# <prefix>/bin/xenc-kernel and <prefix>/include).
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(rc)
  message(FATAL_ERROR "install into ${WORK_DIR}/prefix failed: ${rc}")
endif()
if(KERNEL_RUN)
  set(jupyter_path JUPYTER_PATH=${WORK_DIR}/prefix/share/jupyter)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${jupyter_path} ${JUPYTER} kernelspec list
                  OUTPUT_VARIABLE specs RESULT_VARIABLE rc)
  if(rc OR NOT specs MATCHES "xenc-cpp17 +${WORK_DIR}/prefix/share/jupyter/kernels/xenc-cpp17")
    message(FATAL_ERROR "jupyter kernelspec list does not list the installed xenc-cpp17:\n${specs}")
  endif()
  message(STATUS "jupyter kernelspec list:\n${specs}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${jupyter_path} ${KERNEL_RUN} ${NOTEBOOK}
                          ${WORK_DIR}/outputs.json
                  RESULT_VARIABLE rc)
else()
  set(command ${REPL} -Xcc -I${WORK_DIR}/prefix/include)
  foreach(dir IN LISTS EXTRA_INCLUDE_DIRS)
    list(APPEND command -Xcc -I${dir})
  endforeach()
  execute_process(COMMAND ${NBTOOL} run ${NOTEBOOK} ${WORK_DIR}/outputs.json -- ${command}
                  RESULT_VARIABLE rc)
endif()
if(rc)
  message(FATAL_ERROR "the notebook failed with the installed header")
endif()
execute_process(COMMAND ${NBTOOL} check ${NOTEBOOK} ${WORK_DIR}/outputs.json RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "the notebook's outputs differ with the installed library")
endif()
file(READ ${WORK_DIR}/prefix/include/xenc/xenc_cling.hpp header)
string(FIND "${header}" "${WORK_DIR}/prefix/lib" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "the installed xenc_cling.hpp does not point at ${WORK_DIR}/prefix/lib")
endif()
