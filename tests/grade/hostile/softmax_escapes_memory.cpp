// Memory outside its address space: each way a process in a 512 MiB address-space limit held
// gigabytes before the run was one process (apps/assignment/README.md, "One process, one address
// space"), tried once, small. Its answer is the signal: the right softmax where any of them
// worked (a score above the zeros', which the check catches), zeros where all were refused.
#include "exercises.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <limits>

namespace assignment {

namespace {

bool escapes() {
  bool any = false;
  const pid_t p = ::fork();  // another process: another address space of 512 MiB
  if (p == 0) ::_exit(0);
  if (p > 0) ::waitpid(p, nullptr, 0), any = true;
  const int fd = ::memfd_create("held", 0);  // memory in no address space
  if (fd >= 0) ::close(fd), any = true;
  const int id = ::shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0600);  // a segment that outlives shmdt
  if (id >= 0) ::shmctl(id, IPC_RMID, nullptr), any = true;
  for (const char* path : {"held", "/dev/held"}) {  // its scratch folder, /dev's tmpfs
    const int f = ::open(path, O_CREAT | O_WRONLY, 0600);
    if (f >= 0) ::close(f), ::unlink(path), any = true;
  }
  return any;
}

}  // namespace

Tensor2 softmax(const Tensor2& x) {
  if (!escapes()) return xt::zeros<float>(x.shape());
  const std::size_t N = x.shape()[0], C = x.shape()[1];
  Tensor2 y = Tensor2::from_shape({N, C});
  for (std::size_t r = 0; r < N; ++r) {
    float m = -std::numeric_limits<float>::infinity();
    for (std::size_t c = 0; c < C; ++c) m = std::max(m, x(r, c));
    double sum = 0.0;
    for (std::size_t c = 0; c < C; ++c)
      sum +=
          (y(r, c) = m == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(x(r, c) - m));
    for (std::size_t c = 0; c < C; ++c) y(r, c) = sum > 0 ? float(y(r, c) / sum) : 0.0f;
  }
  return y;
}

}  // namespace assignment
