// Helpers shared by the benchmark files: random inputs and the FLOP counters.
#pragma once

#include <cstddef>
#include <cstdint>

#include <benchmark/benchmark.h>

#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"

namespace xenc::bench {

/// xenc::random_tensor (core/random.hpp) from a fixed seed: N(0, 1) values.
template <class TensorT, class Shape>
TensorT random_tensor(const Shape& shape, std::uint32_t seed = 1) {
  return xenc::random_tensor<TensorT>(shape, as_lvalue(Rng(seed)));
}

/// FLOP/s: `flops_per_iteration` floating-point operations per loop pass, reported as a rate.
inline void set_flops(benchmark::State& state, double flops_per_iteration) {
  state.counters["FLOP/s"] =
      benchmark::Counter(flops_per_iteration, benchmark::Counter::kIsIterationInvariantRate);
}

/// FLOPs of one encoder-layer forward (F = 4·D), counting multiply and add as 2:
///   Q, K, V and output projections 4 · 2·T·D·D, feed-forward 2 · 2·T·D·4D  -> 24·T·D²
///   scores Q Kᵀ and P V: 2 · 2·T·T·D (summed over heads)                     ->  4·T²·D
inline double encoder_layer_flops(double T, double D) { return 24.0 * T * D * D + 4.0 * T * T * D; }

/// FLOPs of one multi-head attention forward: 4 projections 8·T·D², scores and P·V 4·T²·D.
inline double attention_module_flops(double T, double D) {
  return 8.0 * T * D * D + 4.0 * T * T * D;
}

}  // namespace xenc::bench
