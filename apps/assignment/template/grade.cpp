// grade: builds and grades each exercise of this directory in its own process, and reports.
//
//     ./build/grade                          every exercise (text report)
//     ./build/grade softmax attention        only these
//     ./build/grade --format json|gradescope|junit [--output FILE]
//     ./build/grade --list                   the exercise names
// Exit code: 0 when every check of the chosen exercises passes, 1 when one fails, 2 for a usage
// or settings error. The teacher's settings: grading.json beside CMakeLists.txt.
#include <xenc/grade/runner.hpp>

int main(int argc, char** argv) {
  return xenc::grade::grade_main(argc, argv, {XENC_SOURCE_DIR, XENC_BUILD_DIR, XENC_CMAKE});
}
