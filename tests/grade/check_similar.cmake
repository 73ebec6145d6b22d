# xenc-grade-similar on a class of five in xenc-grade-all's layout (issue 31, point 4):
#   alice  exercises/softmax.cpp   a correct solution (similarity/softmax_original.cpp)
#   bob    softmax.cpp             alice's, renamed and reformatted (softmax_renamed_copy.cpp)
#   carol  exercises/softmax.cpp   written independently (softmax_independent_loops.cpp)
#   dave   softmax.cpp             the template's stub, unchanged
#   erin   exercises/softmax.cpp   the stub; exercises/attention.cpp 300000 bytes (over the cap)
# Every sentence the program prints is checked here: the notice that it flags and does not
# judge, the settings, the one flagged pair (alice and bob), the skipped file, what it wrote;
# then similarity.json, similarity.html and the side-by-side page; then a template without
# exercises/ and one whose stub is over the size cap.
# Arguments: PROGRAM (xenc-grade-similar), TEMPLATE_DIR, SIMILARITY_DIR (the fixtures), WORK_DIR.
set(class ${WORK_DIR}/class)
file(REMOVE_RECURSE ${WORK_DIR})
configure_file(${SIMILARITY_DIR}/softmax_original.cpp ${class}/alice/exercises/softmax.cpp COPYONLY)
configure_file(${SIMILARITY_DIR}/softmax_renamed_copy.cpp ${class}/bob/softmax.cpp COPYONLY)
configure_file(${SIMILARITY_DIR}/softmax_independent_loops.cpp ${class}/carol/exercises/softmax.cpp
               COPYONLY)
configure_file(${TEMPLATE_DIR}/exercises/softmax.cpp ${class}/dave/softmax.cpp COPYONLY)
configure_file(${TEMPLATE_DIR}/exercises/softmax.cpp ${class}/erin/exercises/softmax.cpp COPYONLY)
string(REPEAT "x" 300000 huge)
file(WRITE ${class}/erin/exercises/attention.cpp "${huge}")

execute_process(COMMAND ${PROGRAM} ${class} --template ${TEMPLATE_DIR} --output ${WORK_DIR}/out
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xenc-grade-similar exited ${rc}:\n${out}\n${err}")
endif()
function(expect_line regex)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "xenc-grade-similar's output has no line matching\n  ${regex}\n"
                        "It printed:\n${out}")
  endif()
endfunction()
expect_line("^This report flags, it does not judge: a flagged pair shares much of its code once the template's stub is removed, and two correct solutions of a short exercise can be alike\\. Read each pair side by side before drawing any conclusion\\.\n")
expect_line("\nSettings: k = 12 tokens, w = 8 \\(any shared run of 19 tokens or more is found\\), threshold 50%, at least 5 shared fingerprints, fingerprints in more than 10 submissions ignored as common\\.\n")
expect_line("\nsoftmax: 1 pair flagged among 5 submissions\n  alice and bob: 9[0-9]% of alice's fingerprints in bob's, 9[0-9]% of bob's in alice's \\(pairs/softmax-1\\.html\\)\n")
expect_line("\nattention: 0 pairs flagged among 0 submissions\n")
expect_line("\nskipped erin's attention\\.cpp: 300000 bytes, more than the limit of 65536 \\(--max-bytes\\)\n")
expect_line("\nwrote [^\n]*/out/similarity\\.json, [^\n]*/out/similarity\\.html and 1 side-by-side page in [^\n]*/out/pairs\n$")
# carol, dave and erin are in no pair: exactly one pair line
string(REGEX MATCHALL "\n  [a-z]+ and [a-z]+: " pair_lines "${out}")
list(LENGTH pair_lines n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "expected one flagged pair (alice and bob), got ${n}:\n${out}")
endif()

# similarity.json: the notice, the settings, the pair with both overlaps, the skipped file
file(READ ${WORK_DIR}/out/similarity.json json)
string(JSON notice GET "${json}" notice)
if(NOT notice MATCHES "^This report flags, it does not judge")
  message(FATAL_ERROR "similarity.json's notice: ${notice}")
endif()
foreach(key k w threshold min_shared max_common)
  string(JSON value_${key} GET "${json}" ${key})
endforeach()
if(NOT value_k EQUAL 12 OR NOT value_w EQUAL 8 OR NOT value_min_shared EQUAL 5 OR
   NOT value_max_common EQUAL 10)
  message(FATAL_ERROR "similarity.json settings: k ${value_k}, w ${value_w}, "
                      "min_shared ${value_min_shared}, max_common ${value_max_common}")
endif()
string(JSON count LENGTH "${json}" exercises)
set(found OFF)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON name GET "${json}" exercises ${i} exercise)
  if(name STREQUAL "softmax")
    set(found ON)
    string(JSON submissions GET "${json}" exercises ${i} submissions)
    string(JSON pairs LENGTH "${json}" exercises ${i} pairs)
    string(JSON a GET "${json}" exercises ${i} pairs 0 a)
    string(JSON b GET "${json}" exercises ${i} pairs 0 b)
    string(JSON overlap_a GET "${json}" exercises ${i} pairs 0 overlap_a)
    string(JSON overlap_b GET "${json}" exercises ${i} pairs 0 overlap_b)
    string(JSON page GET "${json}" exercises ${i} pairs 0 page)
    if(NOT submissions EQUAL 5 OR NOT pairs EQUAL 1 OR NOT a STREQUAL "alice" OR
       NOT b STREQUAL "bob" OR overlap_a LESS 0.8 OR overlap_b LESS 0.8 OR
       NOT page STREQUAL "pairs/softmax-1.html")
      message(FATAL_ERROR "similarity.json's softmax: ${submissions} submissions, ${pairs} pairs, "
                          "${a} and ${b}, overlaps ${overlap_a} and ${overlap_b}, page ${page}")
    endif()
  endif()
endforeach()
if(NOT found)
  message(FATAL_ERROR "similarity.json has no softmax exercise")
endif()
string(JSON skipped_student GET "${json}" skipped 0 student)
string(JSON skipped_exercise GET "${json}" skipped 0 exercise)
if(NOT skipped_student STREQUAL "erin" OR NOT skipped_exercise STREQUAL "attention")
  message(FATAL_ERROR "similarity.json skipped: ${skipped_student}'s ${skipped_exercise}")
endif()

# the pages: the notice on both, the pair listed, both files side by side, bob's renamed line
# highlighted
file(READ ${WORK_DIR}/out/similarity.html index)
file(READ ${WORK_DIR}/out/pairs/softmax-1.html page)
foreach(html index page)
  if(NOT ${html} MATCHES "This report flags, it does not judge")
    message(FATAL_ERROR "${html} lacks the notice:\n${${html}}")
  endif()
endforeach()
if(NOT index MATCHES "<td>softmax</td><td>alice</td><td>bob</td>.*href=\"pairs/softmax-1\\.html\"")
  message(FATAL_ERROR "similarity.html does not list alice and bob:\n${index}")
endif()
if(NOT page MATCHES "<th>alice</th><th>bob</th>" OR
   NOT page MATCHES "<mark>[^<]*biggest = std::max\\(biggest, input\\(i, j\\)\\);[^<]*</mark>")
  message(FATAL_ERROR "the side-by-side page lacks the files or bob's highlighted line:\n${page}")
endif()

# --max-common 0: the settings line says that nothing is ignored
execute_process(COMMAND ${PROGRAM} ${class} --template ${TEMPLATE_DIR} --output ${WORK_DIR}/out4
                        --max-common 0
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
expect_line("\nSettings: [^\n]*, at least 5 shared fingerprints, no fingerprint ignored as common\\.\n")

# the students' code is escaped: its < and > are text, not tags
if(NOT page MATCHES "std::numeric_limits&lt;float&gt;::infinity\\(\\)" OR page MATCHES "<float>")
  message(FATAL_ERROR "the side-by-side page does not escape the code:\n${page}")
endif()

# a template without exercises/: refused, naming the folder
file(MAKE_DIRECTORY ${WORK_DIR}/empty_template)
execute_process(COMMAND ${PROGRAM} ${class} --template ${WORK_DIR}/empty_template
                        --output ${WORK_DIR}/out2
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^xenc-grade-similar: no exercises/ folder in the template [^\n]*/empty_template \\(give --template DIR\\)\n$")
  message(FATAL_ERROR "an empty template: exit ${rc}, stderr:\n${err}")
endif()
# a stub over the size cap: refused before any comparison, naming it and both sizes
file(WRITE ${WORK_DIR}/huge_template/exercises/softmax.cpp "${huge}")
execute_process(COMMAND ${PROGRAM} ${class} --template ${WORK_DIR}/huge_template
                        --output ${WORK_DIR}/out3
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "^xenc-grade-similar: the template's stub [^\n]*/huge_template/exercises/softmax\\.cpp has 300000 bytes, more than the limit of 65536 \\(--max-bytes\\)\n$")
  message(FATAL_ERROR "a stub over the cap: exit ${rc}, stderr:\n${err}")
endif()
message(STATUS "xenc-grade-similar: alice and bob flagged, carol, dave and erin not; pages written")
