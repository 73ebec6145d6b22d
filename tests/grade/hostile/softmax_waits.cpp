// Waits 60 s in its softmax, then returns zeros: long enough for check_regrade.sh to kill the
// grade program that is grading it, as a grader killed mid-run (by a student, the machine or
// the teacher) would be.
#include "exercises.hpp"

#include <unistd.h>

namespace assignment {

Tensor2 softmax(const Tensor2& x) {
  ::sleep(60);
  return xt::zeros<float>(x.shape());
}

}  // namespace assignment
