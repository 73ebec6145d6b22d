# The exercises' one source: the `// @key value` lines at the top of each
# lib/src/grade/exercises/<name>.cpp. From them this script generates
#   - the library's declarations (xenc/grade/exercise_types.hpp: the exercise's types, its
#     std::function type, check_<name>, signature::<name>, XENC_GRADE_EXERCISES) and its
#     registry entry (xenc/grade/exercise_specs.hpp: spec::<name>(), name, signature, points,
#     order, doc), at configure time, into the build tree (included by xenc/grade/exercises.hpp);
#   - the assignment template's exercises.hpp and exercises/<name>.cpp stubs, committed: written
#     by `cmake --build build --target exercises_update`, compared by ctest exercises_current.
# notebooks/tools/course_cells.py reads the same lines for the notebooks' exercise cells.
#
# Keys (a key on several lines continues its value; `// @key` alone is an empty line):
#   @exercise NAME     the file's name                 @order N       teaching order (integer >= 0)
#   @points P          default points (a number >= 0)  @function F    the student's function, as
#                      declared at column 0 in namespace assignment (wrapped as clang-format does)
#   @doc TEXT          its documentation (the library's header, the template's exercises.hpp)
#   @type CODE         a type the function uses, declared in namespace xenc::grade
#   @using NAME        a using-declaration for the template's namespace assignment
#   @stub TEXT         the formula in the comment of the template's stub
#   @notebook MD       the notebook's heading cell (markdown)
#   @notebook_stub T   the comment of the notebook's stub cell
#   @notebook_weak C   (a test-writing exercise) the body of a weak test, C++, that the notebook
#                      grades after the student's check, to show a partial score
#
# Script mode: cmake -DMODE=write|check -DEXERCISES_DIR=... -DTEMPLATE_DIR=... -DCLANG_FORMAT=...
#              -P XencExercises.cmake
# (the template's files are formatted with the tree's .clang-format, by clang-format-19).
cmake_policy(VERSION 3.20)

set(_xenc_keys exercise order points function doc type using stub notebook notebook_stub
    notebook_weak)

# CMake lists split on ';' and treat brackets specially: they travel escaped, and come back on
# output.
function(_xenc_unescape out text)
  string(REPLACE "<xenc-semicolon>" ";" text "${text}")
  string(REPLACE "<xenc-open>" "[" text "${text}")
  string(REPLACE "<xenc-close>" "]" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Reads the specification of every file; sets XENC_EXERCISE_NAMES (teaching order, then name) and,
# per name and key, XENC_EX_<name>_<key> (lines joined with "\n", escaped).
macro(xenc_read_exercises files)
  set(_sorted "")
  foreach(_file ${files})
    get_filename_component(_stem ${_file} NAME_WE)
    file(READ ${_file} _text)
    string(REPLACE ";" "<xenc-semicolon>" _text "${_text}")
    string(REPLACE "[" "<xenc-open>" _text "${_text}")
    string(REPLACE "]" "<xenc-close>" _text "${_text}")
    string(REPLACE "\n" ";" _lines "${_text}")
    foreach(_key ${_xenc_keys})
      unset(_v_${_key})
      set(_seen_${_key} OFF)
    endforeach()
    foreach(_line IN LISTS _lines)
      if(_line MATCHES "^// @([a-z_]+)( (.*))?$")
        set(_key ${CMAKE_MATCH_1})
        set(_value "${CMAKE_MATCH_3}")
        if(NOT _key IN_LIST _xenc_keys)
          message(FATAL_ERROR "${_file}: unknown key @${_key} (known: ${_xenc_keys})")
        endif()
        if(_seen_${_key})
          string(APPEND _v_${_key} "\n${_value}")
        else()
          set(_v_${_key} "${_value}")
          set(_seen_${_key} ON)
        endif()
      endif()
    endforeach()
    foreach(_key exercise order points function)
      if(NOT _seen_${_key})
        message(FATAL_ERROR "${_file}: no @${_key} line (every exercise has @exercise, @order, "
                            "@points and @function)")
      endif()
    endforeach()
    if(NOT _v_exercise STREQUAL _stem)
      message(FATAL_ERROR "${_file}: @exercise is '${_v_exercise}', expected the file's name '${_stem}'")
    endif()
    if(NOT _v_order MATCHES "^[0-9]+$" OR _v_order GREATER 999999)
      message(FATAL_ERROR "${_file}: @order is '${_v_order}', expected an integer in [0, 999999]")
    endif()
    if(NOT _v_points MATCHES "^[0-9]+(\\.[0-9]+)?$")
      message(FATAL_ERROR "${_file}: @points is '${_v_points}', expected a number >= 0 (e.g. 1 or 2.5)")
    endif()
    string(REPLACE "\n" " " _one_line "${_v_function}")
    string(REGEX REPLACE " +" " " _one_line "${_one_line}")
    if(NOT _one_line MATCHES "^(.+[ &*>])${_stem}(\\(.*\\))$")
      message(FATAL_ERROR "${_file}: @function is '${_one_line}', expected 'RETURN ${_stem}(PARAMETERS)'")
    endif()
    string(STRIP "${CMAKE_MATCH_1}" _return)
    set(XENC_EX_${_stem}_return "${_return}")
    set(XENC_EX_${_stem}_parameters "${CMAKE_MATCH_2}")
    # the registry's and the reports' signature: one line, without the xenc:: qualifications
    string(REPLACE "xenc::grade::" "" _signature "${_one_line}")
    string(REPLACE "xenc::" "" _signature "${_signature}")
    set(XENC_EX_${_stem}_signature "${_signature}")
    foreach(_key ${_xenc_keys})
      set(XENC_EX_${_stem}_${_key} "${_v_${_key}}")
    endforeach()
    string(LENGTH "000000${_v_order}" _len)
    math(EXPR _start "${_len} - 6")
    string(SUBSTRING "000000${_v_order}" ${_start} 6 _padded)
    list(APPEND _sorted "${_padded}:${_stem}")
  endforeach()
  list(SORT _sorted)
  set(XENC_EXERCISE_NAMES "")
  foreach(_entry ${_sorted})
    string(REGEX REPLACE "^[0-9]+:" "" _entry "${_entry}")
    list(APPEND XENC_EXERCISE_NAMES ${_entry})
  endforeach()
endmacro()

# "layer_norm_forward" -> "LayerNormForward"
function(_xenc_camel out name)
  string(REPLACE "_" ";" parts "${name}")
  set(result "")
  foreach(p ${parts})
    string(SUBSTRING "${p}" 0 1 first)
    string(SUBSTRING "${p}" 1 -1 rest)
    string(TOUPPER "${first}" first)
    string(APPEND result "${first}${rest}")
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# "a\nb" -> "<prefix>a\n<prefix>b\n" (no trailing spaces on empty lines)
function(_xenc_prefixed out prefix text)
  set(result "")
  if(NOT "${text}" STREQUAL "")
    string(REPLACE "\n" ";" lines "${text}")
    foreach(l IN LISTS lines)
      if(l STREQUAL "")
        string(STRIP "${prefix}" p)
        string(APPEND result "${p}\n")
      else()
        string(APPEND result "${prefix}${l}\n")
      endif()
    endforeach()
  endif()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# Writes `text` to `file` unless it already holds exactly that (no rebuild for an unchanged header).
function(_xenc_write file text)
  _xenc_unescape(text "${text}")
  if(EXISTS ${file})
    file(READ ${file} old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE ${file} "${text}")
endfunction()

set(_xenc_generated_note "Generated by cmake/XencExercises.cmake from the `// @` lines of lib/src/grade/exercises/*.cpp")

# The library's two generated headers, into `dir` (…/xenc/grade).
function(xenc_generate_exercise_headers dir files)
  xenc_read_exercises("${files}")
  set(types "// ${_xenc_generated_note}:\n// the exercises' types, their checks and their signatures. Included by xenc/grade/exercises.hpp.\n#pragma once\n\nnamespace xenc::grade {\n")
  set(specs "// ${_xenc_generated_note}:\n// each exercise's registry entry, spec::<name>(). Included by xenc/grade/exercises.hpp.\n#pragma once\n\nnamespace xenc::grade::spec {\n")
  set(signatures "")
  set(list "#define XENC_GRADE_EXERCISES(X)")
  foreach(name ${XENC_EXERCISE_NAMES})
    _xenc_camel(camel ${name})
    _xenc_prefixed(doc "/// " "${XENC_EX_${name}_doc}")
    _xenc_prefixed(type "" "${XENC_EX_${name}_type}")
    string(APPEND types "\n// ---- ${name} (lib/src/grade/exercises/${name}.cpp)\n${doc}${type}"
           "using ${camel}Fn = std::function<${XENC_EX_${name}_return}${XENC_EX_${name}_parameters}>;\n"
           "ExerciseResult check_${name}(const ${camel}Fn& student);\n")
    string(APPEND signatures "using ${name} = ${XENC_EX_${name}_return}${XENC_EX_${name}_parameters};\n")
    string(APPEND list " X(${name})")
    string(APPEND specs "inline ExerciseInfo ${name}() {\n  ExerciseInfo e;\n  e.name = \"${name}\";\n"
           "  e.signature = R\"xenc(${XENC_EX_${name}_signature})xenc\";\n"
           "  e.points = ${XENC_EX_${name}_points};\n  e.order = ${XENC_EX_${name}_order};\n"
           "  e.doc = R\"xenc(${XENC_EX_${name}_doc})xenc\";\n  return e;\n}\n")
  endforeach()
  string(APPEND types "\n/// The student's function of each exercise, as a function type named like the exercise\n"
         "/// (`xenc::grade::signature::softmax softmax;` declares `Tensor2 softmax(const Tensor2& x)`).\n"
         "namespace signature {\n${signatures}}  // namespace signature\n\n}  // namespace xenc::grade\n\n"
         "/// Every exercise's name, in teaching order: XENC_GRADE_EXERCISES(X) expands to X(name) for each.\n${list}\n")
  string(APPEND specs "\n}  // namespace xenc::grade::spec\n")
  _xenc_write(${dir}/exercise_types.hpp "${types}")
  _xenc_write(${dir}/exercise_specs.hpp "${specs}")
endfunction()

# The template's exercises.hpp and stubs, as text: sets XENC_TEMPLATE_FILES (relative paths) and
# XENC_TEMPLATE_<n> (the text of the n-th).
function(_xenc_template_texts files)
  xenc_read_exercises("${files}")
  set(usings "")
  foreach(name ${XENC_EXERCISE_NAMES})
    if(NOT "${XENC_EX_${name}_using}" STREQUAL "")
      string(REPLACE "\n" ";" us "${XENC_EX_${name}_using}")
      foreach(u ${us})
        list(APPEND usings "${u}")
      endforeach()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES usings)
  list(SORT usings)
  set(header "// The functions you write, one per file in exercises/. Do not change these signatures: the
// grader (grade.cpp) calls them exactly like this. Shapes use the glossary B batch, T sequence
// length, D d_model, H heads, Dh = D / H, N rows, C classes.
// (${_xenc_generated_note}.)
#pragma once

#include <xenc/grade/exercises.hpp>
#include <xenc/xenc.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace assignment {

using xenc::Index1;
using xenc::Mask2;
using xenc::Tensor1;
using xenc::Tensor2;
using xenc::Tensor3;
using xenc::Tensor4;
")
  foreach(u ${usings})
    string(APPEND header "using ${u};\n")
  endforeach()
  set(paths exercises.hpp)
  set(n 1)
  foreach(name ${XENC_EXERCISE_NAMES})
    _xenc_prefixed(doc "/// " "${XENC_EX_${name}_doc}")
    string(APPEND header "\n${doc}${XENC_EX_${name}_function};\n")
    _xenc_prefixed(formula "// " "${XENC_EX_${name}_stub}")
    set(XENC_TEMPLATE_${n} "// Exercise: ${name}. Replace the throw with your code
// (see ../exercises.hpp and README.md).
${formula}#include \"exercises.hpp\"

#include <stdexcept>

namespace assignment {

${XENC_EX_${name}_function} {
  // your code here
  throw std::logic_error(\"${name}: not implemented\");
}

}  // namespace assignment
" PARENT_SCOPE)
    list(APPEND paths exercises/${name}.cpp)
    math(EXPR n "${n} + 1")
  endforeach()
  string(APPEND header "\n}  // namespace assignment\n")
  set(XENC_TEMPLATE_0 "${header}" PARENT_SCOPE)
  set(XENC_TEMPLATE_FILES ${paths} PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(NOT CLANG_FORMAT)
    message(FATAL_ERROR "-DCLANG_FORMAT=<clang-format-19> is required: the template's files are "
                        "committed formatted as the tree is")
  endif()
  file(GLOB _files ${EXERCISES_DIR}/*.cpp)
  list(SORT _files)
  _xenc_template_texts("${_files}")
  set(_stale "")
  set(_n 0)
  foreach(_path ${XENC_TEMPLATE_FILES})
    _xenc_unescape(_text "${XENC_TEMPLATE_${_n}}")
    set(_file ${TEMPLATE_DIR}/${_path})
    # formatted as the tree is (a declaration and its stub wrap at different lengths)
    string(MAKE_C_IDENTIFIER "${_path}" _tmp)
    set(_tmp ${CMAKE_CURRENT_BINARY_DIR}/xenc_exercises_${_tmp})
    file(WRITE ${_tmp} "${_text}")
    execute_process(COMMAND ${CLANG_FORMAT} --assume-filename=${_file} INPUT_FILE ${_tmp}
                    OUTPUT_VARIABLE _text RESULT_VARIABLE _rc)
    file(REMOVE ${_tmp})
    if(_rc)
      message(FATAL_ERROR "${CLANG_FORMAT} on the generated ${_path} failed: ${_rc}")
    endif()
    if(MODE STREQUAL "write")
      _xenc_write(${_file} "${_text}")
    else()
      set(_old "")
      if(EXISTS ${_file})
        file(READ ${_file} _old)
      endif()
      if(NOT _old STREQUAL _text)
        list(APPEND _stale ${_path})
      endif()
    endif()
    math(EXPR _n "${_n} + 1")
  endforeach()
  # a stub whose exercise is gone
  file(GLOB _stubs RELATIVE ${TEMPLATE_DIR} ${TEMPLATE_DIR}/exercises/*.cpp)
  foreach(_stub ${_stubs})
    if(NOT _stub IN_LIST XENC_TEMPLATE_FILES)
      if(MODE STREQUAL "write")
        file(REMOVE ${TEMPLATE_DIR}/${_stub})
      else()
        list(APPEND _stale ${_stub})
      endif()
    endif()
  endforeach()
  if(_stale)
    message(FATAL_ERROR "generated from ${EXERCISES_DIR}, these files of ${TEMPLATE_DIR} differ: "
                        "${_stale}\n(cmake --build build --target exercises_update rewrites them)")
  endif()
  if(NOT MODE STREQUAL "write")
    list(LENGTH XENC_TEMPLATE_FILES _count)
    message(STATUS "the template's ${_count} generated files are current")
  endif()
endif()
