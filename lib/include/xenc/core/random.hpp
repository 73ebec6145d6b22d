// Deterministic, seeded random numbers that are the same with every compiler and
// standard library.
//
// std::mt19937 is fully specified by the standard, but std::uniform_real_distribution and
// std::normal_distribution are not (libstdc++ and libc++ give different numbers). So xencoder
// draws raw 32-bit words from std::mt19937 and turns them into floats itself:
//   uniform: u = (w >> 8) * 2^-24, in [0, 1), exactly representable in float32
//   normal:  Box-Muller on two uniforms, z = sqrt(-2 ln(1 - u1)) * cos(2 pi u2)
// A notebook run in an interpreter therefore shows the same values as the compiled demo.
#pragma once

#include <cstdint>
#include <random>

#include "xenc/core/tensor.hpp"

namespace xenc {

class Rng {
 public:
  explicit Rng(std::uint32_t seed = 0) : engine_(seed) {}

  /// Uniform in [0, 1).
  float uniform();
  /// Uniform in [lo, hi).
  float uniform(float lo, float hi);
  /// Standard normal (mean 0, std 1).
  float normal();
  /// A raw 32-bit word from mt19937.
  std::uint32_t next_u32() { return static_cast<std::uint32_t>(engine_()); }

 private:
  std::mt19937 engine_;
};

/// The one idiom for seeding from an integer where a constructor takes `Rng&`: the
/// constructors with a `seed` argument delegate as `Linear(in, out, as_lvalue(Rng(seed)), bias)`.
/// The temporary generator lives until the end of that full expression, i.e. while the
/// delegated constructor draws from it.
inline Rng& as_lvalue(Rng&& rng) { return rng; }

/// Fill with uniform values in [lo, hi).
template <class T>
void fill_uniform(T& t, Rng& rng, float lo, float hi) {
  for (auto& v : t) v = rng.uniform(lo, hi);
}

/// Fill with normal values of mean `mean` and standard deviation `std`.
template <class T>
void fill_normal(T& t, Rng& rng, float mean = 0.0f, float std = 1.0f) {
  for (auto& v : t) v = mean + std * rng.normal();
}

/// A tensor of the given shape (any shape container: std::array, std::vector, a tensor's
/// shape()) filled with N(0, std²) values drawn in order from rng: the one random-tensor helper
/// of the tests and benchmarks.
template <class T, class S>
T random_tensor(const S& shape, Rng& rng, float std = 1.0f) {
  T t = T::from_shape(shape);
  fill_normal(t, rng, 0.0f, std);
  return t;
}

}  // namespace xenc
