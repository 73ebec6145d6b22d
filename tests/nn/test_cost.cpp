// xenc::estimate_pass_cost (nn/cost.hpp): the parameter count against a real model's
// parameters, the FLOPs against the GEMM shapes by hand, and the memory estimate against the
// peak resident memory a real pass takes, measured in a child process (fork, then VmHWM from
// /proc/self/status), at sizes of 50 to 400 MB.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "support/tolerances.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/core/random.hpp"
#include "xenc/data/batching.hpp"
#include "xenc/nn/cost.hpp"
#include "xenc/nn/optim.hpp"
#include "xenc/nn/token_classifier.hpp"
#include "xenc/ops/cross_entropy.hpp"

using namespace xenc;

namespace {

EncoderModelConfig config(std::size_t V, std::size_t D, std::size_t H, std::size_t F, std::size_t L,
                          PositionKind position, float dropout = 0.0f) {
  EncoderModelConfig c;
  c.vocab_size = V;
  c.layer.d_model = D;
  c.layer.nhead = H;
  c.layer.dim_feedforward = F;
  c.layer.dropout = dropout;
  c.num_layers = L;
  c.position = position;
  c.max_len = 64;
  c.final_norm = true;
  return c;
}

// A field of /proc/self/status in bytes ("VmHWM:    123456 kB").
double status_bytes(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(field, 0) == 0) return 1024.0 * std::stod(line.substr(std::strlen(field) + 1));
  return -1;
}

// Runs one pass in a child process and returns its peak RSS growth in bytes (-1 on failure):
// the model is built and the pass run after the baseline is taken.
double measured_peak_growth(const EncoderModelConfig& cfg, std::size_t B, std::size_t T, Pass pass,
                            std::size_t C) {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    // the heap that earlier tests of this process freed but kept goes back to the system, or
    // the pass would reuse it without growing the RSS (a measure that depended on test order)
    malloc_trim(0);
    const double before = status_bytes("VmRSS:");
    {
      TokenClassifier model(cfg, C);
      Index2 ids = Index2::from_shape({B, T});
      for (std::size_t i = 0; i < ids.size(); ++i)
        ids.data()[i] = std::int64_t(2 + i % (cfg.vocab_size - 2));
      if (pass == Pass::training) {
        AdamW opt(model.parameters(), 1e-3f);
        model.train();
        Index2 labels = Index2::from_shape({B, T});
        for (std::size_t i = 0; i < labels.size(); ++i) labels.data()[i] = std::int64_t(i % C);
        opt.zero_grad();
        const Tensor3 logits = model.forward(ids);
        model.backward(cross_entropy_backward(logits, labels, kIgnoreIndex));
        opt.step();
      } else {
        NoGradGuard no_grad;
        model.eval();
        ModelTrace trace;
        model.forward(ids, Mask2(), pass == Pass::traced_inference ? &trace : nullptr);
      }
    }
    const double growth = status_bytes("VmHWM:") - before;
    if (write(fd[1], &growth, sizeof growth) != sizeof growth) _exit(2);
    _exit(0);
  }
  close(fd[1]);
  double growth = -1;
  if (read(fd[0], &growth, sizeof growth) != sizeof growth) growth = -1;
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? growth : -1;
}

}  // namespace

// The count equals the number of values in a real model's parameters, for every position kind
// (learned adds the [max_len, D] table), with and without a head.
TEST(Cost, ParameterCountMatchesARealModel) {
  std::vector<PositionKind> kinds = all_position_kinds();
  kinds.push_back(PositionKind::relative);  // chosen by name only, not in the list yet
  for (PositionKind kind : kinds)
    for (std::size_t C : {0u, 3u}) {
      const EncoderModelConfig cfg = config(11, 8, 2, 12, 2, kind);
      double real = 0;
      if (C == 0) {
        EncoderModel m(cfg);
        for (const auto& p : m.parameters()) real += double(p.size());
      } else {
        TokenClassifier m(cfg, C);
        for (const auto& p : m.parameters()) real += double(p.size());
      }
      EXPECT_EQ(parameter_count(cfg, C), real) << to_string(kind) << " C = " << C;
    }
  // a bare TransformerEncoder (vocab_size = 0, so no position table either): 2 layers of
  // in_proj 3·8·8 + 3·8, out_proj 8·8 + 8, linear1 12·8 + 12, linear2 8·12 + 8, norms 4·8
  // = 192 + 24 + 64 + 8 + 96 + 12 + 96 + 8 + 32 = 532, plus the final norm's 16
  EXPECT_EQ(parameter_count(config(0, 8, 2, 12, 2, PositionKind::learned)), 2 * 532 + 16);
  // relative positions add u, v [H, Dh] = [2, 4] each and W_R [8, 8] once (shared by the
  // layers): 8 + 8 + 64 = 80 more than none
  EXPECT_EQ(parameter_count(config(11, 8, 2, 12, 2, PositionKind::relative)) -
                parameter_count(config(11, 8, 2, 12, 2, PositionKind::none)),
            80);
}

// D = 8, H = 2, F = 12, L = 2, B = 3, T = 5, C = 4: N = 15.
// per layer 8·N·D² = 7680, 4·N·D·F = 5760, 4·B·T²·D = 2400, and the softmax's 64 per score,
// 64·B·H·T² = 9600; head 2·N·D·C = 960.
TEST(Cost, FlopsCountEveryGemm) {
  const EncoderModelConfig cfg = config(11, 8, 2, 12, 2, PositionKind::none);
  ASSERT_EQ(kSoftmaxFlops, 64);
  const double forward = 2 * (7680 + 5760 + 2400 + 9600) + 960;
  EXPECT_EQ(estimate_pass_cost(cfg, 3, 5, Pass::inference, 4).flops, forward);
  EXPECT_EQ(estimate_pass_cost(cfg, 3, 5, Pass::training, 4).flops, 3 * forward);
}

// Relative positions (Transformer-XL) add per layer r = R W_Rᵀ, [9, 8] x [8, 8]: 2·9·8·8 = 1152,
// and Z = (q + v) rᵀ, B·H·T·(2T − 1)·Dh multiply-adds: 2·3·2·5·9·4 = 2160; L = 2 layers.
TEST(Cost, RelativePositionsAddTheirGemms) {
  const EncoderModelConfig none = config(11, 8, 2, 12, 2, PositionKind::none);
  const EncoderModelConfig relative = config(11, 8, 2, 12, 2, PositionKind::relative);
  EXPECT_EQ(estimate_pass_cost(relative, 3, 5, Pass::inference, 4).flops -
                estimate_pass_cost(none, 3, 5, Pass::inference, 4).flops,
            2 * (1152 + 2160));
  // its op keeps P [B, H, T, T] at every length (no tiles): at T = 1024 the training estimate
  // holds at least L·B·H·T² floats more than the tiled path of position none
  const double A = 3.0 * 2 * 1024 * 1024;
  EXPECT_GT(estimate_pass_cost(relative, 3, 1024, Pass::training, 4).activation_bytes -
                estimate_pass_cost(none, 3, 1024, Pass::training, 4).activation_bytes,
            4 * 2 * A);
}

// Absurd sizes give huge finite numbers, never a wrapped small one.
TEST(Cost, HugeSizesDoNotOverflow) {
  const EncoderModelConfig cfg = config(10000000, 65536, 8, 30000000, 48, PositionKind::learned);
  const PassCost c = estimate_pass_cost(cfg, 4096, 1000000, Pass::training, 10);
  EXPECT_GT(c.peak_bytes, 1e19);
  EXPECT_TRUE(std::isfinite(c.peak_bytes));
}

// The estimate against the real peak of the pass, at sizes where the tensors dominate the
// noise (tens to hundreds of MiB): attention-heavy, feed-forward-heavy, traced, training with
// and without dropout, training with dropout in tiles (T = 4096) and with relative positions.
// Not compiled under AddressSanitizer, whose shadow memory and quarantine change the peak RSS
// (the Release pass runs it).
#if !defined(__SANITIZE_ADDRESS__)
TEST(Cost, PeakMemoryEstimateIsWithinAFactorOfTheMeasuredPeak) {
  struct Case {
    const char* name;
    EncoderModelConfig cfg;
    std::size_t B, T;
    Pass pass;
  };
  const Case cases[] = {
      {"inference, feed-forward heavy", config(1000, 256, 4, 1024, 2, PositionKind::sinusoidal), 16,
       512, Pass::inference},
      {"traced inference, long T", config(100, 64, 8, 256, 3, PositionKind::rope), 2, 1024,
       Pass::traced_inference},
      // in tiles (T·T >= 512²): one head's [T, T] scores would be 144 MiB, more than the rest
      // of the pass together, so an estimate that kept them would be 2.5x the peak
      {"inference in tiles, long T", config(100, 128, 2, 256, 2, PositionKind::rope), 4, 6144,
       Pass::inference},
      {"training", config(100, 128, 8, 512, 2, PositionKind::alibi), 8, 512, Pass::training},
      {"training with dropout", config(100, 128, 4, 512, 2, PositionKind::sinusoidal, 0.1f), 8, 256,
       Pass::training},
      // attention in tiles with dropout: its factors are drawn per tile, so no [B, H, T, T]
      // mask (512 MiB here, seven times the estimate) may appear in the peak
      {"training with dropout, in tiles",
       config(100, 128, 8, 512, 1, PositionKind::sinusoidal, 0.1f), 1, 4096, Pass::training},
      // relative positions: their op keeps P [B, H, T, T] and R, r per layer, never in tiles
      {"training, relative positions", config(100, 128, 4, 512, 2, PositionKind::relative), 4, 384,
       Pass::training},
  };
  for (const Case& c : cases) {
    const double estimate = estimate_pass_cost(c.cfg, c.B, c.T, c.pass, 3).peak_bytes;
    const double measured = measured_peak_growth(c.cfg, c.B, c.T, c.pass, 3);
    ASSERT_GT(measured, 0) << c.name;
    std::printf("  %-32s estimate %7.1f MiB  measured %7.1f MiB  ratio %.2f\n", c.name,
                estimate / 1048576, measured / 1048576, measured / estimate);
    EXPECT_LE(measured, estimate * test::kCostEstimateFactor) << c.name;
    EXPECT_GE(measured, estimate / test::kCostEstimateFactor) << c.name;
  }
}
#endif  // !__SANITIZE_ADDRESS__
