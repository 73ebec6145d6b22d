# The library-calls policy ("library_calls": false in grading.json): an exercise's object file
# may use xencoder's tensors, errors and random numbers, but not its ops/, nn/ or other math.
# Run before grade-<EXERCISE> is linked; fails the link with a message that says why.
# Inputs: NM (the nm program), EXERCISE, OBJECTS (the exercise's object files).
#
# The symbols are read mangled: a function's mangled name starts with its own qualified name
# (_ZN4xenc15softmax_forward... is xenc::softmax_forward, whatever its return type), so the
# namespace test cannot be fooled by a return type. Allowed: xenc::grade, the error types and
# their checks, Rng and the fill_* functions of core/random.hpp.
set(allowed "^_ZN4xenc(5grade|12config_error|11shape_error|11index_error|3Rng|11check_shape|12check_config|9shape_str|[0-9]+fill_)")
set(calls "")
foreach(object ${OBJECTS})
  execute_process(COMMAND ${NM} --undefined-only ${object} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "error: ${NM} could not read ${object}")
  endif()
  string(REPLACE "\n" ";" symbols "${symbols}")
  foreach(line ${symbols})
    string(REGEX REPLACE "^ *U +" "" symbol "${line}")
    # typeinfo, vtable, typeinfo name, const member functions: the same qualified name after it
    string(REGEX REPLACE "^_ZT[IVS]N" "_ZN" symbol "${symbol}")
    string(REGEX REPLACE "^_ZNK" "_ZN" symbol "${symbol}")
    if(NOT symbol MATCHES "^_ZN4xenc" OR symbol MATCHES "${allowed}")
      continue()
    endif()
    # the qualified name, from the length-prefixed parts: 4xenc15softmax_forward -> xenc::softmax_forward
    string(SUBSTRING "${symbol}" 3 -1 rest)
    set(parts "")
    while(rest MATCHES "^([0-9]+)")
      set(n ${CMAKE_MATCH_1})
      string(LENGTH "${n}" digits)
      string(SUBSTRING "${rest}" ${digits} ${n} part)
      list(APPEND parts "${part}")
      math(EXPR skip "${digits} + ${n}")
      string(SUBSTRING "${rest}" ${skip} -1 rest)
    endwhile()
    list(JOIN parts "::" name)
    list(APPEND calls "${name}")
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
