# Shared by the template checks (check_*.cmake): a scratch install of this build, a fresh copy of
cmake_policy(VERSION 3.20)
# the template built against it, and assertions on a program's output.
# Inputs (from the caller's -D): BUILD_DIR, TEMPLATE_DIR, SOLUTIONS_DIR, BAD_DIR, WORK_DIR.

# Installs BUILD_DIR into ${WORK_DIR}/prefix. With SHARED_DIR (the fixture grade.shared_template,
# setup_shared.cmake), ${WORK_DIR}/prefix is a link to its install instead, and `grade_cache` (the
# arguments to add to xenc-grade-all's) names its build cache.
set(grade_cache "")
if(SHARED_DIR)
  set(grade_cache --cache ${SHARED_DIR}/cache)
endif()
function(install_scratch)
  file(REMOVE_RECURSE ${WORK_DIR})
  if(SHARED_DIR)
    file(MAKE_DIRECTORY ${WORK_DIR})
    file(CREATE_LINK ${SHARED_DIR}/prefix ${WORK_DIR}/prefix SYMBOLIC)
    return()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(rc)
    message(FATAL_ERROR "install into ${WORK_DIR}/prefix failed: ${rc}")
  endif()
endfunction()

# Copies the template to dir, keeps only the named exercises' stubs, puts the solution of each
# exercise in `solved` and BAD_DIR/<file> for each "exercise=file" pair of `bad`, writes
# `settings` (JSON text, may be empty) as grading.json, configures (no build type given) and
# builds the parent program grade.
function(prepare_copy dir)
  cmake_parse_arguments(PARSE_ARGV 1 C "" "SETTINGS" "KEEP;SOLVED;BAD")
  file(COPY ${TEMPLATE_DIR}/ DESTINATION ${dir})
  if(C_KEEP)
    file(GLOB stubs ${dir}/exercises/*.cpp)
    foreach(s ${stubs})
      get_filename_component(name ${s} NAME_WE)
      if(NOT name IN_LIST C_KEEP)
        file(REMOVE ${s})
      endif()
    endforeach()
  endif()
  foreach(name ${C_SOLVED})
    configure_file(${SOLUTIONS_DIR}/${name}.cpp ${dir}/exercises/${name}.cpp COPYONLY)
  endforeach()
  foreach(pair ${C_BAD})
    string(REPLACE "=" ";" pair ${pair})
    list(GET pair 0 name)
    list(GET pair 1 file)
    configure_file(${BAD_DIR}/${file} ${dir}/exercises/${name}.cpp COPYONLY)
  endforeach()
  if(C_SETTINGS)
    file(WRITE ${dir}/grading.json "${C_SETTINGS}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${dir} -B ${dir}/build -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc)
    message(FATAL_ERROR "configuring ${dir} failed:\n${out}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${dir}/build RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc)
    message(FATAL_ERROR "building grade in ${dir} failed:\n${out}")
  endif()
endfunction()

# Fails unless `text` holds every needle.
function(expect_in text what)
  foreach(needle ${ARGN})
    string(FIND "${text}" "${needle}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${what} does not hold '${needle}':\n${text}")
    endif()
  endforeach()
endfunction()

# Fails if `text` holds any needle.
function(expect_not_in text what)
  foreach(needle ${ARGN})
    string(FIND "${text}" "${needle}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${what} holds '${needle}':\n${text}")
    endif()
  endforeach()
endfunction()

# The exercise object of name `name` in a grade --format json report: sets `exercise` in the caller.
function(json_exercise report name)
  string(JSON n LENGTH "${report}" exercises)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON e GET "${report}" exercises ${i})
    string(JSON en GET "${e}" name)
    if(en STREQUAL name)
      set(exercise "${e}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "no exercise '${name}' in the report:\n${report}")
endfunction()

# The fenced block after the line `<!-- MARKER -->` of README (the caller's variable), into var,
# by tests/readme/readme_block.cmake; with DEDENT, the 3-space indentation of a Markdown list item
# is removed from each line.
include(${CMAKE_CURRENT_LIST_DIR}/../readme/readme_block.cmake)
function(readme_block marker var)
  cmake_parse_arguments(PARSE_ARGV 2 B "DEDENT" "" "")
  xenc_readme_block("${README}" "<!-- ${marker} -->" block)
  if(B_DEDENT)
    string(REGEX REPLACE "(^|\n)   " "\\1" block "${block}")
  endif()
  set(${var} "${block}" PARENT_SCOPE)
endfunction()
