# One oracle: fails if a loop-level formula (a call of std::exp, exp2, log, sqrt, tanh, sin, cos,
# pow or erf) appears in lib/ outside the places that hold formulas:
#   lib/src/reference/    the loop-by-loop oracle (encoder_layer.cpp, ops.cpp)
#   lib/src/kernels/      the fast forms the library runs
#   lib/src/grade/pitfalls.cpp   the museum's deliberately wrong loops
#   lib/src/viz/, lib/src/io/    figures and files: axis ticks and sizes, no tensor math
# A line whose function is a single scalar, not a formula over a tensor (an initialisation
# bound, an optimiser's step size), says so with the comment `// scalar` at its end.
# ALLOW: files (relative to LIB_DIR) allowed for now, each with its reason in tests/reference/
# CMakeLists.txt.
#   cmake -DLIB_DIR=lib "-DALLOW=src/grade/reference.cpp" -P check_one_oracle.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../support/read_lines.cmake)
get_filename_component(LIB_DIR "${LIB_DIR}" ABSOLUTE)
if(NOT IS_DIRECTORY "${LIB_DIR}/src" OR NOT IS_DIRECTORY "${LIB_DIR}/include")
  message(FATAL_ERROR "LIB_DIR (${LIB_DIR}) must hold src/ and include/")
endif()
set(exempt "^src/reference/" "^src/kernels/" "^src/grade/pitfalls\\.cpp$" "^src/viz/" "^src/io/")
set(failures "")
file(GLOB_RECURSE files RELATIVE ${LIB_DIR} ${LIB_DIR}/src/*.cpp ${LIB_DIR}/src/*.hpp
     ${LIB_DIR}/include/*.hpp ${LIB_DIR}/include/*.hpp.in)
foreach(f ${files})
  set(skip FALSE)
  foreach(re ${exempt})
    if(f MATCHES "${re}")
      set(skip TRUE)
    endif()
  endforeach()
  list(FIND ALLOW "${f}" allowed)
  if(skip OR NOT allowed EQUAL -1)
    continue()
  endif()
  xenc_read_lines(${LIB_DIR}/${f} lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(line MATCHES "// scalar$")
      continue()
    endif()
    string(REGEX REPLACE "//.*$" "" code "${line}")
    if(code MATCHES "std::(exp|exp2|log|sqrt|tanh|sin|cos|pow|erf)[ \t]*\\(")
      xenc_source_line("${line}" shown)
      string(APPEND failures "  lib/${f}:${n}: ${shown}\n")
    endif()
  endforeach()
endforeach()
if(failures)
  message(FATAL_ERROR "a formula's loop belongs in lib/src/reference/ (the oracle) or "
                      "lib/src/kernels/ (the fast form); found elsewhere:\n${failures}")
endif()
message(STATUS "every formula of lib/ is in reference/, kernels/ or the museum")
