# Configures, builds and runs a separate CMake project that uses find_package(xencoder) from the
# scratch prefix. Inputs: PREFIX, PROJECT_DIR (the consumer's sources), WORK_DIR, TARGET.
# The program gets WORK_DIR/run as its only argument, and runs with an empty environment.
# With LEAN=ON, also checks that the math target's exported interface names neither libzip nor
# nlohmann_json (those belong to xencoder::io and xencoder::viz).
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
if(LEAN)
  file(GLOB_RECURSE targets_file ${PREFIX}/*/xencoderTargets.cmake)
  if(NOT targets_file)
    message(FATAL_ERROR "no xencoderTargets.cmake under ${PREFIX}")
  endif()
  file(READ "${targets_file}" exported)
  foreach(dependency nlohmann zip)
    string(FIND "${exported}" "${dependency}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${targets_file} mentions ${dependency}: xencoder::xencoder must not need it")
    endif()
  endforeach()
endif()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/run)
xenc_run("configuring ${PROJECT_DIR}"
         COMMAND ${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${WORK_DIR}/build
                 -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_BUILD_TYPE=Release)
xenc_run("building ${PROJECT_DIR}" COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
xenc_run("running ${TARGET}" COMMAND env -i ${WORK_DIR}/build/${TARGET} ${WORK_DIR}/run OUTPUT out)
message(STATUS "${out}")
