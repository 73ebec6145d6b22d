// Benchmarks of the modules: multi-head attention and one encoder layer, as used for
// inference (evaluation mode, inside a NoGradGuard: nothing is cached for backward).
//
// BM_EncoderLayerForward/<T>/<D>/<H> is the benchmark bench/compare_pytorch.py runs beside
// torch.nn.TransformerEncoderLayer: batch 1, F = 4·D, post-norm, relu, float32, no mask.
// Its CPU time is the whole process's (all threads), its FLOP/s use the wall-clock time.
#include <limits>
#include <vector>

#include "bench_common.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/nn/multihead_attention.hpp"
#include "xenc/nn/position.hpp"
#include "xenc/nn/transformer_encoder.hpp"
#include "xenc/ops/multi_head_attention.hpp"

namespace xenc::bench {
namespace {

// (T, D, H): the grid that bench/README.md's tables report, from a toy sentence to a long
// document.
void encoder_grid(benchmark::internal::Benchmark* b) {
  b->Args({3, 64, 4})
      ->Args({16, 128, 4})
      ->Args({128, 256, 8})
      ->Args({512, 512, 8})
      ->Args({1024, 512, 8});
}

// Long documents (issue 21), D = 512, H = 8: where attention in tiles matters.
void long_grid(benchmark::internal::Benchmark* b) {
  b->Args({2048, 512, 8})->Args({4096, 512, 8})->Args({8192, 512, 8});
}

EncoderLayerConfig layer_config(std::size_t D, std::size_t H) {
  EncoderLayerConfig c;
  c.d_model = D;
  c.nhead = H;
  c.dim_feedforward = 4 * D;
  c.dropout = 0.1f;  // inactive: modules start in evaluation mode
  c.activation = Activation::relu;
  c.norm_first = false;
  return c;
}

void BM_MultiheadAttention(benchmark::State& state) {
  const auto T = static_cast<std::size_t>(state.range(0)),
             D = static_cast<std::size_t>(state.range(1)),
             H = static_cast<std::size_t>(state.range(2));
  MultiheadAttention mha(D, H, 0.0f, true, /*seed=*/1);
  const Tensor3 x = random_tensor<Tensor3>(std::vector<std::size_t>{1, T, D});
  NoGradGuard no_grad;
  for (auto _ : state) benchmark::DoNotOptimize(mha.forward(x));
  set_flops(state, attention_module_flops(double(T), double(D)));
  state.SetItemsProcessed(state.iterations() * std::int64_t(T));  // tokens/s
}
BENCHMARK(BM_MultiheadAttention)->Apply(encoder_grid)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The attention op alone (q, k, v in, heads out; forward, then backward from a saved state), on
// the path the sizes choose, planned as below kThreadedAttentionMinWork (plan 1: the caller's
// thread alone, one item per head) or as above it at any size (plan 0: the budget,
// OPENBLAS_NUM_THREADS, and the cut items): the measurement behind kThreadedAttentionMinWork
// (bench/scaling.sh prints where plan 0 starts to win). CPU time is the process's.
void BM_AttentionOp(benchmark::State& state) {
  const auto T = static_cast<std::size_t>(state.range(0)),
             D = static_cast<std::size_t>(state.range(1)),
             H = static_cast<std::size_t>(state.range(2)),
             one_thread = static_cast<std::size_t>(state.range(3));
  const std::vector<std::size_t> shape{1, T, D};
  const Tensor3 q = random_tensor<Tensor3>(shape), k = random_tensor<Tensor3>(shape),
                v = random_tensor<Tensor3>(shape), g = random_tensor<Tensor3>(shape);
  const AttentionPlan plan =
      plan_attention({1, H, T, T, D / H}, false, 0.0f, AttentionPath::automatic, one_thread,
                     one_thread ? std::numeric_limits<std::size_t>::max() : 0);
  const Mask2 no_padding;
  const Tensor2 no_mask;
  Rng rng(1);
  for (auto _ : state) {
    AttentionForward f =
        attention_forward(plan, q, k, v, no_padding, no_mask, no_attention_position(), rng, true);
    benchmark::DoNotOptimize(attention_backward(g, q, k, v, f.saved, no_attention_position()));
  }
  state.counters["threads"] = double(plan.threads);
  state.counters["items"] = double(plan.forward_items());
}
BENCHMARK(BM_AttentionOp)
    ->ArgNames({"T", "D", "H", "plan"})
    ->ArgsProduct({{32, 64, 96, 128, 192, 256, 384, 512}, {256}, {8}, {1, 0}})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// One forward of the layer on a [B, T, D] input with the attention path given: the automatic
// choice (BM_EncoderLayerForward), or forced (issue 21) to plain (one [T, T] score matrix per
// head) or tiled (online softmax, memory linear in T), from where the automatic choice switches
// (T = 512) to long documents.
void layer_forward(benchmark::State& state, std::size_t B, AttentionPath path) {
  const auto T = static_cast<std::size_t>(state.range(0)),
             D = static_cast<std::size_t>(state.range(1)),
             H = static_cast<std::size_t>(state.range(2));
  TransformerEncoderLayer layer(layer_config(D, H), /*seed=*/1);
  layer.eval();
  layer.self_attn.set_attention_path(path);
  const Tensor3 x = random_tensor<Tensor3>(std::vector<std::size_t>{B, T, D});
  NoGradGuard no_grad;
  for (auto _ : state) benchmark::DoNotOptimize(layer.forward(x));
  set_flops(state, double(B) * encoder_layer_flops(double(T), double(D)));
  state.SetItemsProcessed(state.iterations() * std::int64_t(B * T));  // tokens/s
}
void BM_EncoderLayerForward(benchmark::State& state) {
  layer_forward(state, 1, AttentionPath::automatic);
}
BENCHMARK(BM_EncoderLayerForward)
    ->Apply(encoder_grid)
    ->Apply(long_grid)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_EncoderLayerForwardPlain(benchmark::State& state) {
  layer_forward(state, 1, AttentionPath::plain);
}
void BM_EncoderLayerForwardTiled(benchmark::State& state) {
  layer_forward(state, 1, AttentionPath::tiled);
}
void path_grid(benchmark::internal::Benchmark* b) {
  b->Args({128, 256, 8})->Args({256, 512, 8})->Args({512, 512, 8})->Args({1024, 512, 8});
  long_grid(b);
}
BENCHMARK(BM_EncoderLayerForwardPlain)
    ->Apply(path_grid)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EncoderLayerForwardTiled)
    ->Apply(path_grid)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// A batch of 8 sequences (the automatic path): BM_EncoderLayerForwardBatch8/<T>/<D>/<H>.
void BM_EncoderLayerForwardBatch8(benchmark::State& state) {
  layer_forward(state, 8, AttentionPath::automatic);
}
BENCHMARK(BM_EncoderLayerForwardBatch8)
    ->Args({128, 512, 8})
    ->Args({512, 512, 8})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// The same layer with a position scheme that acts inside attention (issue 11): RoPE rotates q
// and k of every head by position before the scores, ALiBi adds −m_h·|i − j| to head h's
// scores. Their cost is the time over BM_EncoderLayerForward at the same (T, D, H).
void encoder_layer_forward_with(benchmark::State& state, const AttentionPosition* position) {
  const auto T = static_cast<std::size_t>(state.range(0)),
             D = static_cast<std::size_t>(state.range(1)),
             H = static_cast<std::size_t>(state.range(2));
  TransformerEncoderLayer layer(layer_config(D, H), /*seed=*/1);
  layer.eval();
  layer.self_attn.set_position(position);
  const Tensor3 x = random_tensor<Tensor3>(std::vector<std::size_t>{1, T, D});
  NoGradGuard no_grad;
  for (auto _ : state) benchmark::DoNotOptimize(layer.forward(x));
  set_flops(state, encoder_layer_flops(double(T), double(D)));
  state.SetItemsProcessed(state.iterations() * std::int64_t(T));  // tokens/s
}

void BM_EncoderLayerForwardRoPE(benchmark::State& state) {
  const RotaryPosition rope;
  encoder_layer_forward_with(state, rope.attention_position());
}
BENCHMARK(BM_EncoderLayerForwardRoPE)
    ->Apply(encoder_grid)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_EncoderLayerForwardALiBi(benchmark::State& state) {
  const ALiBiPosition alibi;
  encoder_layer_forward_with(state, alibi.attention_position());
}
BENCHMARK(BM_EncoderLayerForwardALiBi)
    ->Apply(encoder_grid)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_EncoderLayerForwardWithGrad(benchmark::State& state) {
  // The same forward with gradients enabled: every module caches its inputs and the attention
  // keeps P for all heads ([B, H, T, T]) for a later backward. Compare with the one above.
  const auto T = static_cast<std::size_t>(state.range(0)),
             D = static_cast<std::size_t>(state.range(1)),
             H = static_cast<std::size_t>(state.range(2));
  TransformerEncoderLayer layer(layer_config(D, H), /*seed=*/1);
  const Tensor3 x = random_tensor<Tensor3>(std::vector<std::size_t>{1, T, D});
  for (auto _ : state) benchmark::DoNotOptimize(layer.forward(x));
  set_flops(state, encoder_layer_flops(double(T), double(D)));
  state.SetItemsProcessed(state.iterations() * std::int64_t(T));
}
BENCHMARK(BM_EncoderLayerForwardWithGrad)
    ->Args({3, 64, 4})
    ->Args({512, 512, 8})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace xenc::bench
