#!/usr/bin/env bash
# Gradescope's setup.sh for a xencoder assignment (written into the bundle by
# `xenc-grade-all --gradescope-bundle`). Gradescope runs it once, as root, when it builds the
# autograder's image (Ubuntu), with the bundle unpacked in /autograder/source:
#   xencoder/       xencoder's source, built and installed into /usr/local here
#   template/       the assignment template, the teacher's grading.json beside its CMakeLists.txt
#   run_autograder  (Gradescope copies it to /autograder/run_autograder)
# 1. the build dependencies, from the distribution's packages (xencoder's scripts/setup.sh --demo:
#    one list, the one the README's install uses); 2. xencoder, Release, library only; 3. the
#    template, built once (grade and each exercise's child object), its stubs kept in
#    template-stubs/ so that run_autograder grades a file a student did not hand in as the stub.
# XENC_SETUP_SKIP_INSTALL=1 skips 1 and 2 (xencoder already installed in XENC_PREFIX: the project's
# own test of the bundle, tests/grade/check_class.cmake). XENC_AUTOGRADER: another root than
# /autograder.
set -euo pipefail
root=${XENC_AUTOGRADER:-/autograder}
source_dir=$root/source
prefix=${XENC_PREFIX:-/usr/local}
jobs=$(nproc 2> /dev/null || echo 2)

if [[ ${XENC_SETUP_SKIP_INSTALL:-0} != 1 ]]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  bash "$source_dir/xencoder/scripts/setup.sh" --demo
  cmake -S "$source_dir/xencoder" -B /tmp/xencoder-build -DCMAKE_BUILD_TYPE=Release \
    -DXENC_BUILD_TESTS=OFF -DXENC_BUILD_APPS=OFF -DXENC_BUILD_BENCH=OFF \
    -DXENC_BUILD_NOTEBOOK_TESTS=OFF
  cmake --build /tmp/xencoder-build -j"$jobs"
  cmake --install /tmp/xencoder-build --prefix "$prefix"
  rm -rf /tmp/xencoder-build
  ldconfig
fi

rm -rf "$source_dir/template/build" "$source_dir/template-stubs"
cp -r "$source_dir/template/exercises" "$source_dir/template-stubs"
cmake -S "$source_dir/template" -B "$source_dir/template/build" -G "Unix Makefiles" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix"
cmake --build "$source_dir/template/build" -j"$jobs"
echo "setup: the template is built in $source_dir/template/build"
