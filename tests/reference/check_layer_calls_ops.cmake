# One copy of each formula in reference/: the one-file layer (encoder_layer.cpp) calls the loops
# of reference/ops.cpp (linear, layer norm, attention) and repeats none of them. Fails if
#   - encoder_layer.cpp defines a function that ops.hpp declares, under the same name or one that
#     differs only by underscores (layernorm_forward vs layer_norm_forward);
#   - encoder_layer.cpp holds one of ops.cpp's loop forms: a dot product accumulated over a
#     tensor's row (`sum += x(..) * w(..)`: linear, attention scores and values), a square root
#     (layer norm's rstd, attention's 1/√Dh) or softmax_row (the attention softmax).
#   cmake -DLAYER=lib/src/reference/encoder_layer.cpp -DOPS=lib/include/xenc/reference/ops.hpp \
#         -P check_layer_calls_ops.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../support/read_lines.cmake)

# The names of the functions a file declares or defines: a line at column 0 that opens a
# parameter list, e.g. "Tensor2d linear_forward(const Tensor2d& x, ...".
function(function_names path out)
  xenc_read_lines(${path} lines)
  set(names "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[A-Za-z][A-Za-z0-9_:<>, ]* ([a-z_][a-z0-9_]*)\\(")
      list(APPEND names ${CMAKE_MATCH_1})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES names)
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# ops.hpp's public functions against every function encoder_layer.cpp writes (private helpers
# included).
function_names(${OPS} ops_names)
function_names(${LAYER} layer_names)
set(failures "")
foreach(name IN LISTS layer_names)
  string(REPLACE "_" "" key "${name}")
  foreach(op IN LISTS ops_names)
    string(REPLACE "_" "" op_key "${op}")
    if(key STREQUAL op_key)
      string(APPEND failures "\n  ${LAYER}: defines ${name}, which ${OPS} declares as ${op}")
    endif()
  endforeach()
endforeach()

xenc_read_lines(${LAYER} lines)
set(n 0)
foreach(line IN LISTS lines)
  math(EXPR n "${n} + 1")
  string(REGEX REPLACE "//.*$" "" code "${line}")
  if(code MATCHES "\\+=.*\\)[ ]*\\*[ ]*[A-Za-z_][A-Za-z_0-9.]*\\(")
    set(what "a dot product over a tensor's row (ops.cpp's linear or attention loop)")
  elseif(code MATCHES "std::sqrt")
    set(what "a square root (ops.cpp's layer norm or attention scale)")
  elseif(code MATCHES "softmax_row")
    set(what "softmax_row (ops.cpp's attention)")
  else()
    continue()
  endif()
  xenc_source_line("${line}" shown)
  string(APPEND failures "\n  ${LAYER}:${n}: ${what}: ${shown}")
endforeach()

list(LENGTH ops_names n_ops)
if(n_ops LESS 10)
  message(FATAL_ERROR "check_layer_calls_ops: found only ${n_ops} function names in ${OPS}: the parser is broken")
endif()
if(failures)
  message(FATAL_ERROR "encoder_layer.cpp repeats formulas of ops.cpp (call them instead):${failures}")
endif()
message(STATUS "encoder_layer.cpp defines none of the ${n_ops} functions of ops.hpp and repeats none of their loops")
