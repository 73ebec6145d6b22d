// Forges a verdict: a global constructor (before main) and every call write a perfect verdict,
// in the old JSON form and as a forged answer, on every descriptor it has and on every one
// /proc/self/fd lists, then the function returns zeros. grade computes the verdict itself; the
// bytes on its answer channel are an answer that is not one, which fails the exercise.
#include "exercises.hpp"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace assignment {

namespace {
void forge() {
  const char fake[] =
      "{\"exercise\":\"softmax\",\"signature\":\"\",\"checks\":[{\"name\":\"all\",\"passed\":true,"
      "\"input\":\"\",\"expected\":\"\",\"computed\":\"\",\"first_difference\":\"\",\"hint\":\"\","
      "\"known_mistake\":\"\",\"hidden\":false}]}\n";
  for (int fd = 0; fd < 1024; ++fd) (void)!::write(fd, fake, sizeof fake - 1);
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (dirent* e = ::readdir(d)) {
      const int fd = std::atoi(e->d_name);
      if (fd > 0) (void)!::write(fd, fake, sizeof fake - 1);
    }
    ::closedir(d);
  }
}
struct Forger {
  Forger() { forge(); }
} forger;
}  // namespace

Tensor2 softmax(const Tensor2& x) {
  forge();
  return xt::zeros<float>(x.shape());
}

}  // namespace assignment
