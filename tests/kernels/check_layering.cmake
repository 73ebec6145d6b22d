# Fails if a file under SRC_DIR or INCLUDE_DIR (nn/: modules that take and return tensors) contains kernel code:
# a GEMM or CBLAS call, pointer arithmetic on .data(), or a float pointer. Those belong in
# lib/src/kernels/ (see kernels.hpp).
#   cmake -DSRC_DIR=lib/src/nn -DINCLUDE_DIR=lib/include/xenc/nn -P check_layering.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../support/read_lines.cmake)
set(patterns
  "gemm[ \t]*\\("                 "a GEMM call"
  "cblas_"                        "a CBLAS call"
  "\\.data\\(\\)[ \t]*[-+]"       "pointer arithmetic on .data()"
  "float[ \t]*\\*"                "a float pointer"
  "kernels/kernels\\.hpp"         "the kernels header")
if(NOT IS_DIRECTORY "${SRC_DIR}" OR NOT IS_DIRECTORY "${INCLUDE_DIR}")
  message(FATAL_ERROR "SRC_DIR (${SRC_DIR}) and INCLUDE_DIR (${INCLUDE_DIR}) must be directories")
endif()
set(failures "")
foreach(dir ${SRC_DIR} ${INCLUDE_DIR})
  file(GLOB_RECURSE files ${dir}/*.cpp ${dir}/*.hpp)
  foreach(f ${files})
    xenc_read_lines(${f} lines)
    set(n 0)
    foreach(line IN LISTS lines)
      math(EXPR n "${n} + 1")
      list(LENGTH patterns count)
      math(EXPR last "${count} - 1")
      foreach(i RANGE 0 ${last} 2)
        math(EXPR j "${i} + 1")
        list(GET patterns ${i} re)
        list(GET patterns ${j} what)
        if(line MATCHES "${re}")
          xenc_source_line("${line}" shown)
          string(APPEND failures "  ${f}:${n}: ${what}: ${shown}\n")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()
if(failures)
  message(FATAL_ERROR "nn/ must take and return tensors; kernel code found:\n${failures}")
endif()
message(STATUS "no kernel code in ${SRC_DIR} and ${INCLUDE_DIR}")
