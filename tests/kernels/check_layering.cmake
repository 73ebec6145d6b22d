# Layering: fails if a file under SRC_DIR or INCLUDE_DIR holds code its layer must leave to
# lib/src/kernels/ (see kernels.hpp). RULES names the layer's rule list below:
#   cmake -DRULES=nn  -DSRC_DIR=lib/src/nn  -DINCLUDE_DIR=lib/include/xenc/nn  -P check_layering.cmake
#   cmake -DRULES=ops -DSRC_DIR=lib/src/ops -DINCLUDE_DIR=lib/include/xenc/ops -P check_layering.cmake
# A rule list is pairs of (regular expression, what a match is), then <RULES>_scope: `line` checks
# whole lines, `code` checks the code only (no comment, no string literal, no `const char*`, a
# function's name for its messages, not a pointer into a tensor).
cmake_minimum_required(VERSION 3.20)  # if() compares quoted strings as strings (CMP0054)
include(${CMAKE_CURRENT_LIST_DIR}/../support/read_lines.cmake)

# nn/: modules that take and return tensors. No kernel code: no GEMM or CBLAS call, no pointer
# arithmetic on .data(), no float pointer, not the kernels header. No attention path and no
# threading either (issue #28): the attention op plans both (plan_attention, attention_forward,
# attention_backward in ops/multi_head_attention.hpp); a module only forwards a user's forced
# AttentionPath.
set(nn_rules
  "gemm[ \t]*\\("                 "a GEMM call"
  "cblas_"                        "a CBLAS call"
  "\\.data\\(\\)[ \t]*[-+]"       "pointer arithmetic on .data()"
  "float[ \t]*\\*"                "a float pointer"
  "kernels/kernels\\.hpp"         "the kernels header"
  "attention_uses_tiles"          "the attention path's choice (the op's plan makes it)"
  "multi_head_attention_(forward|backward)" "one path's attention entry point (use attention_forward)"
  "(Tiled|MultiHead)AttentionResult" "one path's saved state (AttentionSaved is the op's)"
  "AttentionPath::(plain|tiled)"  "a named attention path"
  "GemmThreadsScope|split_large_gemms|parallel_for|thread_budget|openblas_|std::thread|BlasOnOneThread|std::async" "threading (the op's plan and the kernels decide it)"
  "\\.(threads|query_block|key_block|backward_by_key_blocks)[^A-Za-z0-9_]|kThreadedAttentionMinWork|kAttentionDesignThreads|kTiledAttentionMinScores|threaded_from" "the plan's decisions (threads, work items, thresholds: the op reads them)")
set(nn_scope line)
set(nn_verdict "nn/ must take and return tensors; kernel code found:")

# ops/: pure functions on tensors. No pointer: no .data(), nullptr, pointer type (`float* p`,
# `Tensor3* t`), address of an element (`&t(i)`), or CBLAS call. ops/ hands tensors to the
# kernels through kernels::as_matrix, as_vector and row_of; the pointers are there.
set(ops_rules
  "\\.data\\(\\)"                                 ".data(), a raw buffer"
  "nullptr"                                       "a null pointer"
  "[A-Za-z0-9_>]\\*[ \t]*[A-Za-z_(]"              "a pointer type"
  "(^|[^A-Za-z0-9_&)>])&[A-Za-z_][A-Za-z0-9_.]*\\(" "the address of an element"
  "cblas_"                                        "a CBLAS call")
set(ops_scope code)
set(ops_verdict "ops/ must take and return tensors; pointer code found (move it into lib/src/kernels/):")

if(NOT DEFINED ${RULES}_rules)
  message(FATAL_ERROR "RULES is \"${RULES}\", expected nn or ops")
endif()
get_filename_component(SRC_DIR "${SRC_DIR}" ABSOLUTE)
get_filename_component(INCLUDE_DIR "${INCLUDE_DIR}" ABSOLUTE)
if(NOT IS_DIRECTORY "${SRC_DIR}" OR NOT IS_DIRECTORY "${INCLUDE_DIR}")
  message(FATAL_ERROR "SRC_DIR (${SRC_DIR}) and INCLUDE_DIR (${INCLUDE_DIR}) must be directories")
endif()
set(patterns ${${RULES}_rules})
list(LENGTH patterns count)
math(EXPR last "${count} - 1")
set(failures "")
set(checked 0)
foreach(dir ${SRC_DIR} ${INCLUDE_DIR})
  file(GLOB_RECURSE files ${dir}/*.cpp ${dir}/*.hpp)
  foreach(f ${files})
    math(EXPR checked "${checked} + 1")
    xenc_read_lines(${f} lines)
    set(n 0)
    foreach(line IN LISTS lines)
      math(EXPR n "${n} + 1")
      set(code "${line}")
      if(${RULES}_scope STREQUAL "code")
        string(REGEX REPLACE "//.*$" "" code "${code}")
        string(REGEX REPLACE "\"[^\"]*\"" "\"\"" code "${code}")
        string(REPLACE "const char*" "" code "${code}")
      endif()
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
if(checked EQUAL 0)
  message(FATAL_ERROR "no .cpp or .hpp file under ${SRC_DIR} and ${INCLUDE_DIR}")
endif()
if(failures)
  message(FATAL_ERROR "${${RULES}_verdict}\n${failures}")
endif()
message(STATUS "${RULES} rules hold in the ${checked} files of ${SRC_DIR} and ${INCLUDE_DIR}")
