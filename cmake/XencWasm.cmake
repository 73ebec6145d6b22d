# The WebAssembly build (included by the top-level CMakeLists.txt when EMSCRIPTEN is set, i.e.
# under `emcmake cmake`; `bash scripts/web.sh` runs it). What differs from the native build:
#
# - No OpenBLAS, no xtensor-blas: kernels::gemm runs kernels::gemm_portable (XENC_NO_BLAS).
# - No find_package for xtensor / xtl / nlohmann_json / CLI11: their Debian CMake files point at
#   /usr/include, where glibc's headers would shadow emscripten's. Their headers (header-only
#   libraries) are copied into a staging folder of the build tree, which is the only include
#   folder besides ours.
# - utf8proc (the tokenizer's Unicode tables) is compiled from Debian's source package, unpacked
#   into XENC_UTF8PROC_SOURCE_DIR by scripts/web.sh (`apt-get source utf8proc`).
# - Static libraries, exceptions on (-fexceptions at compile and link), no io library (libzip).
enable_language(C)
set(XENC_UTF8PROC_SOURCE_DIR "" CACHE PATH "utf8proc's source (utf8proc.c), from `apt-get source utf8proc`")
if(NOT EXISTS "${XENC_UTF8PROC_SOURCE_DIR}/utf8proc.c")
  message(FATAL_ERROR "XencWasm: XENC_UTF8PROC_SOURCE_DIR (\"${XENC_UTF8PROC_SOURCE_DIR}\") holds "
                      "no utf8proc.c; scripts/web.sh unpacks Debian's source package there")
endif()

# Header-only dependencies, staged
set(XENC_WASM_INCLUDE ${CMAKE_BINARY_DIR}/staging/include)
foreach(dir xtensor xtl nlohmann CLI)
  if(NOT EXISTS /usr/include/${dir})
    message(FATAL_ERROR "XencWasm: /usr/include/${dir} is missing (scripts/setup.sh installs it)")
  endif()
  file(COPY /usr/include/${dir} DESTINATION ${XENC_WASM_INCLUDE})
endforeach()

set(XENC_WASM_FLAGS -fexceptions)
add_compile_options(${XENC_WASM_FLAGS} -msimd128)
add_link_options(${XENC_WASM_FLAGS})

add_library(xenc_utf8proc STATIC ${XENC_UTF8PROC_SOURCE_DIR}/utf8proc.c)
target_compile_definitions(xenc_utf8proc PUBLIC UTF8PROC_STATIC)
target_include_directories(xenc_utf8proc PUBLIC ${XENC_UTF8PROC_SOURCE_DIR})

# The math (every library folder but io and the grader's runner) and the figures.
set(XENC_WASM_FOLDERS core kernels ops nn reference text data grade)
set(XENC_WASM_SOURCES "")
foreach(folder ${XENC_WASM_FOLDERS})
  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/lib/src/${folder}/*.cpp)
  list(APPEND XENC_WASM_SOURCES ${sources})
endforeach()
file(GLOB XENC_WASM_VIZ_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/lib/src/viz/*.cpp)

# the grader's generated declarations (cmake/XencExercises.cmake), as lib/CMakeLists.txt makes them
include(XencExercises)
file(GLOB XENC_WASM_EXERCISES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/lib/src/grade/exercises/*.cpp)
list(SORT XENC_WASM_EXERCISES)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${XENC_WASM_EXERCISES})
xenc_generate_exercise_headers(${CMAKE_BINARY_DIR}/include/xenc/grade "${XENC_WASM_EXERCISES}")

set(BLAS_LIBRARIES "none (WebAssembly: kernels::gemm_portable)")
configure_file(${PROJECT_SOURCE_DIR}/lib/include/xenc/config.hpp.in
               ${CMAKE_BINARY_DIR}/include/xenc/config.hpp @ONLY)

add_library(xencoder STATIC ${XENC_WASM_SOURCES})
add_library(xencoder::xencoder ALIAS xencoder)
target_include_directories(xencoder PUBLIC ${PROJECT_SOURCE_DIR}/lib/include
                                           ${CMAKE_BINARY_DIR}/include ${XENC_WASM_INCLUDE})
target_compile_definitions(xencoder PUBLIC XENC_NO_BLAS=1)
target_compile_options(xencoder PRIVATE -fno-trapping-math -fno-math-errno)
target_link_libraries(xencoder PRIVATE xenc_utf8proc)

add_library(xencoder_viz STATIC ${XENC_WASM_VIZ_SOURCES})
add_library(xencoder::viz ALIAS xencoder_viz)
target_link_libraries(xencoder_viz PUBLIC xencoder)

# The demo (main, experiment, report), unchanged, as a node program: `node xenc-word-order.js --json` (NODERAWFS: its files
# are the host's, so --svg-dir works under node).
file(GLOB XENC_WORD_ORDER_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/apps/word_order/*.cpp)
# (apps/common/heap_policy.cpp: --version's heap line; without glibc it sets nothing)
add_executable(word_order_wasm ${XENC_WORD_ORDER_SOURCES} ${PROJECT_SOURCE_DIR}/apps/common/heap_policy.cpp)
set_target_properties(word_order_wasm PROPERTIES OUTPUT_NAME xenc-word-order SUFFIX .js)
target_include_directories(word_order_wasm PRIVATE ${XENC_WASM_INCLUDE})
target_link_libraries(word_order_wasm PRIVATE xencoder xencoder_viz)
target_link_options(word_order_wasm PRIVATE -sNODERAWFS=1 -sALLOW_MEMORY_GROWTH=1
                                            -sWASM_ASYNC_COMPILATION=0 -sEXIT_RUNTIME=1)

# The browser page (apps/web): the word-order experiment and report, the agent/patient training
# and its report, behind embind (apps/web/bindings.cpp) as xenc-web.js + xenc-web.wasm, copied
# with the page's own files into one static folder, ${CMAKE_BINARY_DIR}/web: what a teacher puts
# on any web server (bash scripts/web.sh builds and serves it).
set(XENC_WEB_DIR ${CMAKE_BINARY_DIR}/web)
add_executable(xenc_web ${PROJECT_SOURCE_DIR}/apps/web/bindings.cpp
               ${PROJECT_SOURCE_DIR}/apps/word_order/experiment.cpp ${PROJECT_SOURCE_DIR}/apps/word_order/report.cpp
               ${PROJECT_SOURCE_DIR}/apps/train_order/experiment.cpp ${PROJECT_SOURCE_DIR}/apps/train_order/report.cpp)
set_target_properties(xenc_web PROPERTIES OUTPUT_NAME xenc-web SUFFIX .js
                                          RUNTIME_OUTPUT_DIRECTORY ${XENC_WEB_DIR})
target_include_directories(xenc_web PRIVATE ${XENC_WASM_INCLUDE})
target_compile_options(xenc_web PRIVATE -Wall -Wextra)
target_link_libraries(xenc_web PRIVATE xencoder xencoder_viz)
# MODULARIZE: the page and its Web Worker each call XencWeb() (importScripts in the worker)
target_link_options(xenc_web PRIVATE --bind -sMODULARIZE=1 -sEXPORT_NAME=XencWeb -sALLOW_MEMORY_GROWTH=1
                                     -sENVIRONMENT=web,worker)
file(GLOB XENC_WEB_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/apps/web/*.html
     ${PROJECT_SOURCE_DIR}/apps/web/*.js ${PROJECT_SOURCE_DIR}/apps/web/*.css)
set(XENC_WEB_COPIES "")
foreach(f ${XENC_WEB_FILES})
  get_filename_component(name ${f} NAME)
  add_custom_command(OUTPUT ${XENC_WEB_DIR}/${name} COMMAND ${CMAKE_COMMAND} -E copy ${f} ${XENC_WEB_DIR}/${name}
                     DEPENDS ${f})
  list(APPEND XENC_WEB_COPIES ${XENC_WEB_DIR}/${name})
endforeach()
add_custom_target(xenc_web_page ALL DEPENDS ${XENC_WEB_COPIES} xenc_web)
