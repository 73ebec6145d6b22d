# A coursework Makefile's build: `g++ main.cpp $(pkg-config --cflags --libs xencoder) -o main`,
# with PKG_CONFIG_PATH pointing at the scratch prefix; the program then runs with an empty
# environment (the .pc file's Libs carry the RPATH). The same for the io and viz libraries
# (xencoder-io.pc, xencoder-viz.pc).
# Inputs: PREFIX, LIBDIR (relative to PREFIX), SOURCE_DIR (tests/install), WORK_DIR, CXX,
# PKG_CONFIG.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/run)
set(ENV{PKG_CONFIG_PATH} ${PREFIX}/${LIBDIR}/pkgconfig)

function(build_and_run name source packages)
  xenc_run("pkg-config --cflags --libs ${packages}"
           COMMAND ${PKG_CONFIG} --cflags --libs ${packages} OUTPUT flags)
  string(STRIP "${flags}" flags)
  message(STATUS "pkg-config --cflags --libs ${packages}: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  xenc_run("g++ ${source} \$(pkg-config --cflags --libs ${packages})"
           COMMAND ${CXX} ${source} ${flags} -o ${WORK_DIR}/${name})
  xenc_run("running ${name}" COMMAND env -i ${WORK_DIR}/${name} ${WORK_DIR}/run OUTPUT out)
  message(STATUS "${out}")
endfunction()

build_and_run(math ${SOURCE_DIR}/consumer/main.cpp "xencoder")
build_and_run(io_viz ${SOURCE_DIR}/consumer_io_viz/main.cpp "xencoder-io;xencoder-viz")
