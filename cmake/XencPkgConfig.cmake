# pkg-config files, for coursework Makefiles and plain compiler command lines:
#
#     g++ main.cpp $(pkg-config --cflags --libs xencoder) -o main          # the math
#     g++ main.cpp $(pkg-config --cflags --libs xencoder-io xencoder-viz)  # + files, figures
#
# installed to <libdir>/pkgconfig (point PKG_CONFIG_PATH there for a prefix outside the
# system's). xencoder.pc requires xtensor and openblas (Debian's .pc files) for their include
# and link flags; xtensor-blas is header-only in /usr/include and has no .pc file. Libs carry
# -Wl,-rpath,<libdir>, so the program finds libxencoder without LD_LIBRARY_PATH.
# (Included from lib/CMakeLists.txt, after the targets.)

# The prefix seen from <libdir>/pkgconfig (e.g. "../.."), so the files work in any prefix given
# to `cmake --install --prefix`. Absolute install dirs are written as they are.
set(XENC_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${XENC_PC_DIR}")
  set(XENC_PC_PREFIX_FROM_PCDIR "")  # unused: includedir and libdir are absolute then
else()
  file(RELATIVE_PATH XENC_PC_PREFIX_FROM_PCDIR /prefix/${XENC_PC_DIR} /prefix)
  string(REGEX REPLACE "/$" "" XENC_PC_PREFIX_FROM_PCDIR "${XENC_PC_PREFIX_FROM_PCDIR}")
endif()
foreach(kind INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${kind}}")
    set(XENC_PC_${kind} "${CMAKE_INSTALL_${kind}}")
  else()
    set(XENC_PC_${kind} "\${prefix}/${CMAKE_INSTALL_${kind}}")
  endif()
endforeach()

# xenc_write_pc(<name> <library> <description> <requires> <requires.private> <cflags>)
function(xenc_write_pc name library description requires requires_private cflags)
  set(XENC_PC_NAME ${name})
  set(XENC_PC_LIBRARY ${library})
  set(XENC_PC_DESCRIPTION ${description})
  set(XENC_PC_REQUIRES ${requires})
  set(XENC_PC_REQUIRES_PRIVATE ${requires_private})
  set(XENC_PC_CFLAGS ${cflags})
  # (not in build/lib/pkgconfig: these files describe the install prefix, not the build tree)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/xencoder.pc.in
                 ${PROJECT_BINARY_DIR}/lib/install-pkgconfig/${name}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/lib/install-pkgconfig/${name}.pc DESTINATION ${XENC_PC_DIR})
endfunction()

# The library is compiled with HAVE_CBLAS=1 (xtensor-blas calls OpenBLAS's cblas_*), and a user
# must compile with it too; -march=native is in the interface when XENC_NATIVE is on.
set(XENC_PC_MATH_CFLAGS " -DHAVE_CBLAS=1")
if(XENC_NATIVE)
  string(APPEND XENC_PC_MATH_CFLAGS " -march=native")
endif()
xenc_write_pc(xencoder xencoder
  "Educational transformer encoder (the math: tensors, ops, modules, tokenizer)"
  "xtensor openblas" "libutf8proc" "${XENC_PC_MATH_CFLAGS}")
xenc_write_pc(xencoder-io xencoder_io
  "xencoder: NumPy .npy/.npz files and PyTorch state_dicts"
  "xencoder = ${PROJECT_VERSION}" "libzip" "")
xenc_write_pc(xencoder-viz xencoder_viz
  "xencoder: SVG figures (heatmaps, line plots) and notebook display"
  "xencoder = ${PROJECT_VERSION} nlohmann_json" "" "")
