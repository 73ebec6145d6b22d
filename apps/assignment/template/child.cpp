// grade-<name>: answers the grader's calls with your function of exercises/<name>.cpp
// (XENC_EXERCISE is <name>). ./build/grade builds it in its sandbox, sends it each check's inputs
// and compares what your function returns itself: this program never computes a verdict, so nothing
// your code prints or writes can change one. For a test you write (test_softmax, ...) it runs
// your test once, on a function whose every call goes to ./build/grade, and sends back only whether
// your test accepted it. Started by hand, it says to run ./build/grade.
#include "exercises.hpp"

#include <xenc/grade/wire.hpp>

// The student's function, declared from the exercise's name (xenc/grade/exercises.hpp's
// signature::<name>): an exercise added to the grader needs no line in exercises.hpp.
namespace assignment {
xenc::grade::signature::XENC_EXERCISE XENC_EXERCISE;
}  // namespace assignment

int main() { return xenc::grade::wire::serve(assignment::XENC_EXERCISE); }
