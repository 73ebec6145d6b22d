// What every exercise file (exercises/<name>.cpp) shares: random inputs, fields from the double
// references, the report's input lines and the helper that runs a value check with its exhibits.
// Internal to the grader.
#pragma once

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "engine.hpp"
#include "reference.hpp"
#include "xenc/core/random.hpp"
#include "xenc/grade/exercises.hpp"
#include "xenc/grade/pitfalls.hpp"

namespace xenc::grade::support {

using detail::Exhibit;
using detail::Field;
using detail::GradCheck;
using detail::Output;
using detail::ThrowCheck;
using detail::ValueCheck;
using detail::field;
using pitfalls::Pitfall;

inline constexpr float kInf = std::numeric_limits<float>::infinity();

template <class T, class S>
T randn(const S& shape, std::uint32_t seed, float scale = 1.0f, float mean = 0.0f) {
  Rng rng(seed);
  T t = T::from_shape(shape);
  fill_normal(t, rng, mean, scale);
  return t;
}

inline Field from_ref(const std::string& name, const ref::Array& a) { return Field{name, a.shape, a.data}; }
inline Field from_vec(const std::string& name, const std::vector<double>& v) { return Field{name, {v.size()}, v}; }

inline std::vector<double> to_vec(const Tensor1& t) { return std::vector<double>(t.begin(), t.end()); }

// "x [2, 3] = [1, 2, 3, 0, 0, 0]" for the report's input line.
template <class E>
std::string show(const std::string& name, const E& t) {
  return detail::format({field(name, t)}, 8);
}

// Row sums of the first field, as a field named `name`.
inline Output row_sums(const Output& o, const std::string& name, std::size_t f = 0) {
  const Field& x = o.at(f);
  const std::size_t C = x.shape.empty() ? 1 : x.shape.back();
  const std::size_t N = C == 0 ? 0 : x.data.size() / C;
  Field s{name, {N}, std::vector<double>(N, 0.0)};
  for (std::size_t r = 0; r < N; ++r)
    for (std::size_t c = 0; c < C; ++c) s.data[r] += x.data[r * C + c];
  return {s};
}

// Runs a value check with the exhibits that could explain its failure and its own hint, and adds
// the result to r.
inline void add(ExerciseResult& r, ValueCheck c, std::vector<Exhibit> exhibits, std::string hint) {
  c.exhibits = std::move(exhibits);
  c.hint = std::move(hint);
  r.checks.push_back(run(c));
}

inline ExerciseResult start(const std::string& name) {
  ExerciseResult r;
  r.exercise = name;
  if (const ExerciseInfo* e = find_exercise(name)) r.signature = e->signature;
  return r;
}

}  // namespace xenc::grade::support
