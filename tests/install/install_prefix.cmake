# Installs the build into a scratch prefix (the fixture of the other install tests).
# Inputs: BUILD_DIR, PREFIX.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
file(REMOVE_RECURSE ${PREFIX})
xenc_run("cmake --install" COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
