// Reference solution: the ALiBi slopes of the paper, with its rule for H not a power of two.
#include "exercises.hpp"

#include <cmath>

namespace assignment {

std::vector<double> alibi_slopes(std::size_t num_heads) {
  if (num_heads == 0) throw xenc::config_error("alibi_slopes: num_heads is 0, expected > 0");
  // n: the largest power of two <= H; its slopes are 2^(-8/n), 2^(-16/n), ..., 2^(-8)
  std::size_t n = 1;
  while (2 * n <= num_heads) n *= 2;
  std::vector<double> slopes;
  for (std::size_t h = 0; h < n; ++h)
    slopes.push_back(std::pow(2.0, -8.0 * double(h + 1) / double(n)));
  // the other H - n heads: every other slope of 2n heads, from the first (they fall between)
  for (std::size_t h = 0; slopes.size() < num_heads; h += 2)
    slopes.push_back(std::pow(2.0, -8.0 * double(h + 1) / double(2 * n)));
  return slopes;
}

}  // namespace assignment
