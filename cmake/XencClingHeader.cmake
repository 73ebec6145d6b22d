# xenc/xenc_cling.hpp: the notebooks' setup header, generated from
# lib/include/xenc/xenc_cling.hpp.in (included from lib/CMakeLists.txt, after the targets).
#
# It holds the `#pragma cling` lines for xeus-cling (include paths, library path, OpenBLAS and
# the three xencoder libraries: libxencoder, libxencoder_io, libxencoder_viz) and a dlopen loader
# for clang-repl, which ignores those pragmas. Two variants:
#   build tree  build/lib/include/xenc/xenc_cling.hpp, pointing at the sources and the build
#               (XENC_CLING_SOURCE_DIR: the source tree, where notebooks find data files);
#   installed   <prefix>/include/xenc/xenc_cling.hpp, pointing at the install prefix, which is
#               known only at install time (`cmake --install build --prefix X`): the header is
#               generated with the placeholder %XENC_PREFIX%, replaced by the install step.
# Dependency include dirs are listed unless they are the compiler's own (e.g. /usr/include).
#
# For notebooks/CMakeLists.txt (what clang-repl needs on its command line, -Xcc -I<dir>) it sets
# the global properties XENC_CLING_BUILD_INCLUDE_DIRS and XENC_CLING_DEPENDENCY_INCLUDE_DIRS.

# The libraries a notebook loads, in load order (each needs the ones before it).
set(XENC_CLING_TARGETS xencoder xencoder_io xencoder_viz)

set(XENC_CLING_DEPENDENCY_INCLUDE_DIRS ${XENC_CBLAS_INCLUDE_DIR})
foreach(dep xtl xtensor xtensor-blas nlohmann_json::nlohmann_json)
  get_target_property(dep_dirs ${dep} INTERFACE_INCLUDE_DIRECTORIES)
  if(dep_dirs)
    list(APPEND XENC_CLING_DEPENDENCY_INCLUDE_DIRS ${dep_dirs})
  endif()
endforeach()
list(REMOVE_DUPLICATES XENC_CLING_DEPENDENCY_INCLUDE_DIRS)
list(REMOVE_ITEM XENC_CLING_DEPENDENCY_INCLUDE_DIRS ${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES})
list(GET BLAS_LIBRARIES 0 XENC_CLING_BLAS)

# Writes one variant to `output`. `libraries` are the paths of XENC_CLING_TARGETS' files (may
# hold $<TARGET_...> generator expressions).
function(xenc_configure_cling_header variant where include_dirs library_dir libraries output)
  set(XENC_CLING_VARIANT ${variant})
  set(XENC_CLING_SOURCE_DIR "")  # the source tree: the build-tree variant's only
  if(variant STREQUAL "build-tree")
    set(XENC_CLING_SOURCE_DIR ${PROJECT_SOURCE_DIR})
  endif()
  set(XENC_CLING_WHERE ${where})
  set(XENC_CLING_INCLUDE_PRAGMAS "")
  foreach(dir ${include_dirs})
    string(APPEND XENC_CLING_INCLUDE_PRAGMAS "#pragma cling add_include_path(\"${dir}\")\n")
  endforeach()
  set(XENC_CLING_LIBRARY_DIR ${library_dir})
  set(XENC_CLING_LOAD_PRAGMAS "")
  set(XENC_CLING_DLOPEN_LINES "")
  foreach(target library IN ZIP_LISTS XENC_CLING_TARGETS libraries)
    string(APPEND XENC_CLING_LOAD_PRAGMAS "#pragma cling load(\"${library}\")\n")
    string(APPEND XENC_CLING_DLOPEN_LINES
           "inline void* const ${target} = load_library(\"${library}\");\n")
  endforeach()
  # configure_file fills the @variables@; file(GENERATE) then resolves $<TARGET_...> names.
  configure_file(${PROJECT_SOURCE_DIR}/lib/include/xenc/xenc_cling.hpp.in ${output}.configured @ONLY)
  file(GENERATE OUTPUT ${output} INPUT ${output}.configured)
endfunction()

# Build-tree variant.
set(XENC_CLING_BUILD_INCLUDE_DIRS ${PROJECT_SOURCE_DIR}/lib/include
                                  ${PROJECT_BINARY_DIR}/lib/include
                                  ${XENC_CLING_DEPENDENCY_INCLUDE_DIRS})
set(XENC_CLING_BUILD_LIBRARIES "")
foreach(target ${XENC_CLING_TARGETS})
  list(APPEND XENC_CLING_BUILD_LIBRARIES $<TARGET_FILE:${target}>)
endforeach()
xenc_configure_cling_header(build-tree "this build tree (${PROJECT_BINARY_DIR}/lib)"
  "${XENC_CLING_BUILD_INCLUDE_DIRS}" $<TARGET_FILE_DIR:xencoder> "${XENC_CLING_BUILD_LIBRARIES}"
  ${PROJECT_BINARY_DIR}/lib/include/xenc/xenc_cling.hpp)

# Installed variant, with the %XENC_PREFIX% placeholder.
foreach(kind INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(XENC_CLING_INSTALL_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(XENC_CLING_INSTALL_${kind} "%XENC_PREFIX%/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()
set(XENC_CLING_INSTALL_LIBRARIES "")
foreach(target ${XENC_CLING_TARGETS})
  list(APPEND XENC_CLING_INSTALL_LIBRARIES
       ${XENC_CLING_INSTALL_LIBDIR}/$<TARGET_SONAME_FILE_NAME:${target}>)
endforeach()
set(XENC_CLING_INSTALLED_HEADER ${PROJECT_BINARY_DIR}/lib/install-include/xenc/xenc_cling.hpp)
xenc_configure_cling_header(installed "the install prefix (%XENC_PREFIX%)"
  "${XENC_CLING_INSTALL_INCLUDEDIR};${XENC_CLING_DEPENDENCY_INCLUDE_DIRS}"
  ${XENC_CLING_INSTALL_LIBDIR} "${XENC_CLING_INSTALL_LIBRARIES}" ${XENC_CLING_INSTALLED_HEADER})
install(CODE "
  file(READ \"${XENC_CLING_INSTALLED_HEADER}\" xenc_cling_text)
  string(REPLACE \"%XENC_PREFIX%\" \"\${CMAKE_INSTALL_PREFIX}\" xenc_cling_text \"\${xenc_cling_text}\")
  string(REPLACE \"%XENC_PREFIX%\" \"\${CMAKE_INSTALL_PREFIX}\" xenc_cling_dest
         \"\$ENV{DESTDIR}${XENC_CLING_INSTALL_INCLUDEDIR}/xenc/xenc_cling.hpp\")
  message(STATUS \"Installing: \${xenc_cling_dest}\")
  file(WRITE \"\${xenc_cling_dest}\" \"\${xenc_cling_text}\")
")

set_property(GLOBAL PROPERTY XENC_CLING_BUILD_INCLUDE_DIRS "${XENC_CLING_BUILD_INCLUDE_DIRS}")
set_property(GLOBAL PROPERTY XENC_CLING_DEPENDENCY_INCLUDE_DIRS "${XENC_CLING_DEPENDENCY_INCLUDE_DIRS}")
