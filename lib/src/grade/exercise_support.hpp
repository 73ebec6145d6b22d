// What every exercise file (exercises/<name>.cpp) shares: random inputs, fields from the double
// references, the report's input lines and the helper that runs a value check with its exhibits.
// Internal to the grader.
#pragma once

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "engine.hpp"
#include "reference.hpp"
#include "xenc/core/random.hpp"
#include "xenc/grade/exercises.hpp"
#include "xenc/grade/pitfalls.hpp"
#include "xenc/grade/wire.hpp"

namespace xenc::grade::support {

using detail::Exhibit;
using detail::Field;
using detail::field;
using detail::GradCheck;
using detail::Output;
using detail::ThrowCheck;
using detail::ValueCheck;
using pitfalls::Pitfall;

inline constexpr float kInf = std::numeric_limits<float>::infinity();

template <class T, class S>
T randn(const S& shape, std::uint32_t seed, float scale = 1.0f, float mean = 0.0f) {
  Rng rng(seed);
  T t = T::from_shape(shape);
  fill_normal(t, rng, mean, scale);
  return t;
}

inline Field from_ref(const std::string& name, const ref::Array& a) {
  return Field{name, a.shape, a.data};
}
inline Field from_vec(const std::string& name, const std::vector<double>& v) {
  return Field{name, {v.size()}, v};
}

inline std::vector<double> to_vec(const Tensor1& t) {
  return std::vector<double>(t.begin(), t.end());
}

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

// An exercise's registration with its checks run on a student's function in another process:
// remote(spec::softmax(), check_softmax), where spec::softmax() (xenc/grade/exercise_specs.hpp) is
// generated from the file's `// @` lines.
template <class Sig>
ExerciseInfo remote(ExerciseInfo info, ExerciseResult (*check)(const std::function<Sig>&)) {
  info.check_remote = [check](wire::Caller& caller) {
    const detail::RemoteCalls remote_calls;  // the calls already go to the student's process
    return check(wire::Remote<Sig>::make(caller));
  };
  return info;
}

inline ExerciseResult start(const std::string& name) {
  ExerciseResult r;
  r.exercise = name;
  if (const ExerciseInfo* e = find_exercise(name)) r.signature = e->signature;
  return r;
}

// ---- hidden checks ----------------------------------------------------------------------------

/// The teacher's hidden inputs: a generator seeded by the teacher's seed and the exercise's name,
/// so that each exercise draws its own inputs and none can be read off another's report.
/// nullopt when no hidden seed is set (then an exercise adds no hidden check).
inline std::optional<Rng> hidden_rng(const std::string& exercise) {
  const std::optional<std::uint64_t> seed = hidden_seed();
  if (!seed) return std::nullopt;
  std::uint64_t h = 1469598103934665603ull ^ *seed;  // FNV-1a over the name, from the seed
  for (char c : exercise) h = (h ^ std::uint8_t(c)) * 1099511628211ull;
  return Rng(std::uint32_t(h ^ (h >> 32)));
}

/// A size in [lo, hi] drawn from rng.
inline std::size_t hidden_size(Rng& rng, std::size_t lo, std::size_t hi) {
  return lo + rng.next_u32() % (hi - lo + 1);
}

/// Normal values of the given shape drawn from rng (scale, mean).
template <class T, class S>
T hidden_randn(Rng& rng, const S& shape, float scale = 1.0f, float mean = 0.0f) {
  T t = T::from_shape(shape);
  fill_normal(t, rng, mean, scale);
  return t;
}

/// Runs a value check on hidden inputs: the result is marked hidden, and its input is not kept
/// (reports show neither inputs nor values of a hidden check).
inline void add_hidden(ExerciseResult& r, ValueCheck c, std::vector<Exhibit> exhibits,
                       std::string hint) {
  c.input = "hidden";
  add(r, std::move(c), std::move(exhibits), std::move(hint));
  r.checks.back().hidden = true;
  r.checks.back().input.clear();
}

}  // namespace xenc::grade::support
