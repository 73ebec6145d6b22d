# Shows that the tolerance of a trained-model cell does not hide a real change: copies notebook
# NB, moves one committed number of its trained-accuracy table by +0.06 (tolerance 0.025) and
# one point of its accuracy plot by +10 px (tolerance 4.5 px), and expects `nbtool check` against
# the fresh outputs OUT to fail on both cells. The moves are the tolerance plus more than twice the
# drift measured between OpenBLAS kernel sets (0.006, 1 px), because OUT may come from any kernel
# set (scripts/test.sh --kernels): +0.03 and +5 px were not caught under Sandybridge in CI.
#   cmake -DNBTOOL=... -DNB=07_....ipynb -DOUT=...outputs.json -DWORK=dir -P perturbed_outputs_fail.cmake

# "0.931" + 60 units of its last digit -> "0.991" (the same number of decimals)
function(shift_decimal text units out)
  string(FIND "${text}" "." dot)
  string(LENGTH "${text}" len)
  math(EXPR decimals "${len} - ${dot} - 1")
  string(REPLACE "." "" digits "${text}")
  string(REGEX REPLACE "^0+([0-9])" "\\1" digits "${digits}")
  math(EXPR shifted "${digits} + ${units}")
  string(LENGTH "${shifted}" n)
  while(n LESS_EQUAL decimals)
    set(shifted "0${shifted}")
    string(LENGTH "${shifted}" n)
  endwhile()
  math(EXPR split "${n} - ${decimals}")
  string(SUBSTRING "${shifted}" 0 ${split} whole)
  string(SUBSTRING "${shifted}" ${split} -1 frac)
  set(${out} "${whole}.${frac}" PARENT_SCOPE)
endfunction()

file(READ "${NB}" text)

# 1. the last accuracy of rope's row in the plain-text table of the trained models
string(REGEX MATCH "\"rope +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +([0-9]+\\.[0-9]+)" row "${text}")
if(NOT row)
  message(FATAL_ERROR "no trained-accuracy row for rope in ${NB}")
endif()
set(number "${CMAKE_MATCH_1}")
shift_decimal("${number}" 60 moved_number)
string(REGEX REPLACE "${number}$" "${moved_number}" moved_row "${row}")
string(REPLACE "${row}" "${moved_row}" text "${text}")

# 2. the first y coordinate of the first line in the accuracy plot
string(FIND "${text}" "Train on T &lt;= 16" title)
if(title EQUAL -1)
  message(FATAL_ERROR "no accuracy plot (SVG title \"Train on T &lt;= 16\") in ${NB}")
endif()
string(SUBSTRING "${text}" ${title} -1 after)
string(REGEX MATCH "points=\\\\\"[0-9.]+,([0-9]+\\.[0-9]+)" point "${after}")
set(y "${CMAKE_MATCH_1}")
shift_decimal("${y}" 1000 moved_y)
string(REGEX REPLACE "${y}$" "${moved_y}" moved_point "${point}")
string(SUBSTRING "${text}" 0 ${title} before)
string(REPLACE "${point}" "${moved_point}" after "${after}")
set(text "${before}${after}")

get_filename_component(name "${NB}" NAME)
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/${name}" "${text}")
message("moved ${number} -> ${moved_number} and y ${y} -> ${moved_y}")
execute_process(COMMAND ${NBTOOL} check "${WORK}/${name}" "${OUT}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "nbtool check accepted the moved number and the moved point")
endif()
foreach(expected "${moved_number}" "${moved_y}")
  string(FIND "${out}${err}" "${expected}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "nbtool check failed, but did not name the moved value ${expected}")
  endif()
endforeach()
