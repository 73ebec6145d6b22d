// A correct split_heads that looks for the teacher's hidden seed where a student can read it:
// the environment the process started with (/proc/self/environ keeps it after unsetenv) and the
// environment variable itself. Knowing the seed, a student could compute the hidden inputs. If
// the seed is visible, this exercise crashes with SIGABRT, so the grade names the leak.
#include "exercises.hpp"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace assignment {

static bool seed_visible() {
  if (std::getenv("XENC_GRADE_HIDDEN_SEED") != nullptr) return true;
  std::ifstream in("/proc/self/environ", std::ios::binary);
  const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return env.find("HIDDEN_SEED") != std::string::npos;
}

Tensor4 split_heads(const Tensor3& x, std::size_t num_heads) {
  if (seed_visible()) std::abort();
  const std::size_t B = x.shape()[0], T = x.shape()[1], D = x.shape()[2];
  if (num_heads == 0 || D % num_heads != 0)
    throw xenc::config_error("split_heads: D (" + std::to_string(D) +
                             ") must be divisible by num_heads (" + std::to_string(num_heads) +
                             ")");
  const std::size_t Dh = D / num_heads;
  Tensor4 out = Tensor4::from_shape({B, num_heads, T, Dh});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < num_heads; ++h)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t e = 0; e < Dh; ++e) out(b, h, t, e) = x(b, t, h * Dh + e);
  return out;
}

}  // namespace assignment
