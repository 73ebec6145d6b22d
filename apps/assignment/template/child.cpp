// grade-<name>: grades one exercise, built from exercises/<name>.cpp alone (XENC_EXERCISE is
// <name>). ./build/grade builds and runs it in its own process; its verdict goes to grade on a
// private channel, so nothing your code prints can change it. Started by hand, it prints the
// exercise's report.
#include "exercises.hpp"

#include <xenc/grade/runner.hpp>

#define XENC_CHECK_OF(name) xenc::grade::check_##name
#define XENC_EXPAND(macro, arg) macro(arg)

// The student's function, declared from the exercise's name (xenc/grade/exercises.hpp's
// signature::<name>): an exercise added to the grader needs no line in exercises.hpp.
namespace assignment {
xenc::grade::signature::XENC_EXERCISE XENC_EXERCISE;
}  // namespace assignment

int main() {
  return xenc::grade::child_main(
      [] { return XENC_EXPAND(XENC_CHECK_OF, XENC_EXERCISE)(assignment::XENC_EXERCISE); });
}
