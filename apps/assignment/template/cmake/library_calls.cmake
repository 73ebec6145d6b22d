# The library-calls policy ("library_calls": false in grading.json): an exercise's object file
# may use xencoder's tensors, errors and random numbers, but not its ops/, nn/ or other math.
# Run before grade-<EXERCISE> is linked; fails the link with a message that says why.
# Inputs: NM (the nm program), EXERCISE, OBJECTS (the exercise's object files).
set(allowed "xenc::grade::" "xenc::shape_error" "xenc::config_error" "xenc::index_error"
            "xenc::check_shape" "xenc::check_config" "xenc::shape_str" "xenc::Rng"
            "xenc::fill_")
set(calls "")
foreach(object ${OBJECTS})
  execute_process(COMMAND ${NM} -C --undefined-only ${object} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "error: ${NM} could not read ${object}")
  endif()
  string(REPLACE "\n" ";" symbols "${symbols}")
  foreach(line ${symbols})
    string(REGEX REPLACE "^ *U +" "" symbol "${line}")
    string(REGEX REPLACE "^(typeinfo name for |typeinfo for |vtable for )" "" symbol "${symbol}")
    if(NOT symbol MATCHES "^xenc::")
      continue()
    endif()
    set(ok FALSE)
    foreach(prefix ${allowed})
      string(FIND "${symbol}" "${prefix}" at)
      if(at EQUAL 0)
        set(ok TRUE)
      endif()
    endforeach()
    if(NOT ok)
      list(APPEND calls "${symbol}")
    endif()
  endforeach()
endforeach()
if(calls)
  list(REMOVE_DUPLICATES calls)
  list(JOIN calls ", " names)
  message("error: library calls are not allowed in this assignment (grading.json: \"library_calls\": "
          "false): exercises/${EXERCISE}.cpp calls ${names}. Write it with your own loops on the "
          "tensors; xenc::Tensor*, xenc::config_error and xenc::Rng are allowed.")
  message(FATAL_ERROR "library-calls policy: grade-${EXERCISE} not linked")
endif()
