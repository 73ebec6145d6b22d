# The installed xenc-word-order starts with an empty environment (no LD_LIBRARY_PATH: it finds
# libxencoder through its RPATH) and prints the headline lesson (both sentences, without and
# with positions); then the same from a copy of the prefix in another directory (the RPATH is
# relative to the executable, $ORIGIN/../lib).
# Inputs: PREFIX, WORK_DIR.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)

function(check_word_order exe)
  xenc_run("${exe} in an empty environment" COMMAND env -i ${exe} OUTPUT out)
  foreach(expected "\"cat chased mouse\"" "\"mouse chased cat\"" "Without positional information"
                   "With sinusoidal positional encoding")
    string(FIND "${out}" "${expected}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${exe} did not print \"${expected}\"; it printed:\n${out}")
    endif()
  endforeach()
endfunction()

if(NOT EXISTS ${PREFIX}/bin/xenc-word-order)
  message(FATAL_ERROR "the install has no bin/xenc-word-order")
endif()
check_word_order(${PREFIX}/bin/xenc-word-order)

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(COPY ${PREFIX}/ DESTINATION ${WORK_DIR}/moved-prefix)
check_word_order(${WORK_DIR}/moved-prefix/bin/xenc-word-order)
