// A softmax that keeps allocating 64 MiB blocks (and touching them) until memory runs out.
#include "exercises.hpp"

#include <memory>
#include <vector>

namespace assignment {

Tensor2 softmax(const Tensor2& x) {
  std::vector<std::unique_ptr<char[]>> hoard;
  for (;;) {
    hoard.emplace_back(new char[64 << 20]);
    for (std::size_t i = 0; i < (64u << 20); i += 4096) hoard.back()[i] = 1;
  }
  return x;
}

}  // namespace assignment
