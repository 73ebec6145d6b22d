# Fails if a file under SRC_DIR or INCLUDE_DIR (ops/: pure functions that take and return
# tensors) holds a pointer: .data(), nullptr, a pointer type (`float* p`, `Tensor3* t`), the
# address of an element (`&t(i)`), or a CBLAS call. ops/ hands tensors to the kernels through
# kernels::as_matrix, as_vector and row_of (lib/src/kernels/kernels.hpp); the pointers are
# there. Comments and string literals are not checked; `const char*` (a function's name for
# its messages) is not a pointer into a tensor.
#   cmake -DSRC_DIR=lib/src/ops -DINCLUDE_DIR=lib/include/xenc/ops -P check_ops_layering.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../support/read_lines.cmake)
set(patterns
  "\\.data\\(\\)"                                 ".data(), a raw buffer"
  "nullptr"                                       "a null pointer"
  "[A-Za-z0-9_>]\\*[ \t]*[A-Za-z_(]"              "a pointer type"
  "(^|[^A-Za-z0-9_&)>])&[A-Za-z_][A-Za-z0-9_.]*\\(" "the address of an element"
  "cblas_"                                        "a CBLAS call")
get_filename_component(SRC_DIR "${SRC_DIR}" ABSOLUTE)
get_filename_component(INCLUDE_DIR "${INCLUDE_DIR}" ABSOLUTE)
if(NOT IS_DIRECTORY "${SRC_DIR}" OR NOT IS_DIRECTORY "${INCLUDE_DIR}")
  message(FATAL_ERROR "SRC_DIR (${SRC_DIR}) and INCLUDE_DIR (${INCLUDE_DIR}) must be directories")
endif()
list(LENGTH patterns count)
math(EXPR last "${count} - 1")
set(failures "")
foreach(dir ${SRC_DIR} ${INCLUDE_DIR})
  file(GLOB_RECURSE files ${dir}/*.cpp ${dir}/*.hpp)
  foreach(f ${files})
    xenc_read_lines(${f} lines)
    set(n 0)
    foreach(line IN LISTS lines)
      math(EXPR n "${n} + 1")
      # the code only: no comment, no string literal, no const char*
      string(REGEX REPLACE "//.*$" "" code "${line}")
      string(REGEX REPLACE "\"[^\"]*\"" "\"\"" code "${code}")
      string(REPLACE "const char*" "" code "${code}")
      foreach(i RANGE 0 ${last} 2)
        math(EXPR j "${i} + 1")
        list(GET patterns ${i} re)
        list(GET patterns ${j} what)
        if(code MATCHES "${re}")
          xenc_source_line("${line}" shown)
          string(APPEND failures "  ${f}:${n}: ${what}: ${shown}\n")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()
if(failures)
  message(FATAL_ERROR "ops/ must take and return tensors; pointer code found (move it into "
                      "lib/src/kernels/):\n${failures}")
endif()
message(STATUS "no pointer in ${SRC_DIR} and ${INCLUDE_DIR}")
