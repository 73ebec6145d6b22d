// Benchmark of one training step of an encoder layer: forward (caching for backward),
// backward from a fixed dL/dy, and one AdamW step.
//
// BM_EncoderLayerTrainStep/<T>/<D>/<H>: batch 1, F = 4·D, post-norm, relu, float32, dropout 0
// (so training and evaluation mode compute the same function). bench/compare_pytorch.py --train
// times the same step in PyTorch: y = layer(x); (y * dy).sum().backward(); optimizer.step()
// (torch.optim.AdamW), with zero_grad() before each step, as here.
// FLOP/s count 3 × the forward's 24·T·D² + 4·T²·D (backward ≈ 2 × forward).
#include <vector>

#include "bench_common.hpp"
#include "xenc/nn/optim.hpp"
#include "xenc/nn/transformer_encoder.hpp"

namespace xenc::bench {
namespace {

void train_step(benchmark::State& state, AttentionPath path) {
  const auto T = static_cast<std::size_t>(state.range(0)),
             D = static_cast<std::size_t>(state.range(1)),
             H = static_cast<std::size_t>(state.range(2));
  EncoderLayerConfig c;
  c.d_model = D;
  c.nhead = H;
  c.dim_feedforward = 4 * D;
  c.dropout = 0.0f;
  c.activation = Activation::relu;
  c.norm_first = false;
  TransformerEncoderLayer layer(c, /*seed=*/1);
  layer.train();
  layer.self_attn.set_attention_path(path);
  AdamW opt(layer.parameters(), 1e-4f);
  const Tensor3 x = random_tensor<Tensor3>(std::vector<std::size_t>{1, T, D}, 1);
  const Tensor3 dy = random_tensor<Tensor3>(std::vector<std::size_t>{1, T, D}, 2);
  for (auto _ : state) {
    opt.zero_grad();
    benchmark::DoNotOptimize(layer.forward(x));
    benchmark::DoNotOptimize(layer.backward(dy));
    opt.step();
  }
  set_flops(state, 3.0 * encoder_layer_flops(double(T), double(D)));
  state.SetItemsProcessed(state.iterations() * std::int64_t(T));  // tokens/s
}
void BM_EncoderLayerTrainStep(benchmark::State& state) {
  train_step(state, AttentionPath::automatic);
}
BENCHMARK(BM_EncoderLayerTrainStep)
    ->Args({3, 64, 4})
    ->Args({16, 128, 4})
    ->Args({128, 256, 8})
    ->Args({512, 512, 8})
    ->Args({2048, 512, 8})
    ->Args({4096, 512, 8})
    ->Args({8192, 512, 8})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// The step with the attention path forced (bench/scaling.sh: each path at 1 and 2 threads).
void BM_EncoderLayerTrainStepPlain(benchmark::State& state) {
  train_step(state, AttentionPath::plain);
}
void BM_EncoderLayerTrainStepTiled(benchmark::State& state) {
  train_step(state, AttentionPath::tiled);
}
BENCHMARK(BM_EncoderLayerTrainStepPlain)
    ->Args({128, 256, 8})
    ->Args({512, 512, 8})
    ->Args({2048, 512, 8})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EncoderLayerTrainStepTiled)
    ->Args({128, 256, 8})
    ->Args({512, 512, 8})
    ->Args({2048, 512, 8})
    ->Args({4096, 512, 8})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace xenc::bench
