# xenc_read_lines(<file> <out_var>): the lines of a source file as a CMake list, one element per
# line. file(STRINGS) cannot be used for C++: a `[` in one line and a `]` in a later one make
# CMake keep the lines between them as one list element. Here `;`, `[` and `]` are replaced by
# the words SEMICOLON, LBRACKET and RBRACKET before the split.
function(xenc_read_lines file out_var)
  file(READ "${file}" content)
  string(REPLACE ";" "SEMICOLON" content "${content}")
  string(REPLACE "[" "LBRACKET" content "${content}")
  string(REPLACE "]" "RBRACKET" content "${content}")
  string(REPLACE "\\" "BACKSLASH" content "${content}")
  string(REPLACE "\n" ";" content "${content}")
  set(${out_var} "${content}" PARENT_SCOPE)
endfunction()

# xenc_source_line(<line> <out_var>): a line from xenc_read_lines as it is in the file (for
# messages).
function(xenc_source_line line out_var)
  string(REPLACE "SEMICOLON" ";" line "${line}")
  string(REPLACE "LBRACKET" "[" line "${line}")
  string(REPLACE "RBRACKET" "]" line "${line}")
  string(REPLACE "BACKSLASH" "\\" line "${line}")
  set(${out_var} "${line}" PARENT_SCOPE)
endfunction()
