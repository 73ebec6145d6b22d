// Compiler-independent uniform and normal floats from std::mt19937 (see random.hpp).
#include "xenc/core/random.hpp"

#include <cmath>

namespace xenc {

float Rng::uniform() {
  // The top 24 bits of a 32-bit word, scaled by 2^-24: every value is exact in float32.
  return static_cast<float>(next_u32() >> 8) * (1.0f / 16777216.0f);
}

float Rng::uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }

float Rng::normal() {
  // Box-Muller in double precision, so the result does not depend on float rounding modes.
  const double u1 = 1.0 - static_cast<double>(uniform());  // in (0, 1]: log is finite
  const double u2 = static_cast<double>(uniform());
  const double two_pi = 6.283185307179586;
  const double radius = std::sqrt(-2.0 * std::log(u1));       // scalar
  return static_cast<float>(radius * std::cos(two_pi * u2));  // scalar
}

}  // namespace xenc
