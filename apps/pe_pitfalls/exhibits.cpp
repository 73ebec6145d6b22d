// xenc-pe-pitfalls' five exhibits (see exhibits.hpp): each prints the correct formula, the
// mistake, its numeric consequence and the test that catches it.
#include "exhibits.hpp"

#include <xenc/grade/pitfalls.hpp>
#include <xenc/xenc.hpp>

#include "../common/analysis.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace pe_pitfalls {

namespace {

using xenc::Tensor2;
using xenc::Tensor3;
using xenc_app::cosine;  // in double, from apps/common/analysis.hpp
using xenc_app::row;

const char* kTestFile = "tests/apps/test_pitfalls.cpp";

void header(int n, const std::string& title) {
  std::printf("\n%d. %s\n%s\n", n, title.c_str(), std::string(title.size() + 3, '-').c_str());
}
void caught_by(const std::string& test) {
  std::printf("   caught by: %s  %s\n", kTestFile, test.c_str());
}

}  // namespace

// ---- 1. exponent 2*i with i stepping by 2 ----
using xenc::pitfalls::near_constant_dims;

void exhibit_doubled_exponent() {
  header(1, "Exponent 2*i when i already steps by 2 (a loop common in published code)");
  std::printf(
      "   correct: for (k = 0; k < D/2; ++k)    PE(p, 2k) = sin(p / 10000^(2k/D))\n"
      "   buggy:   for (i = 0; i < D; i += 2)   PE(p, i)  = sin(p / 10000^(2*i/D))   (= 4k/D)\n"
      "   Pair k gets the frequency of pair 2k: frequencies fall twice as fast, and the upper\n"
      "   half of the dimensions is slower than any frequency of the formula.\n");
  const Tensor2 good = xenc::sinusoidal_encoding(2, 128),
                bad = xenc::pitfalls::pe_doubled_exponent(2, 128);
  std::printf("   PE(1, 2), D = 128:  correct %.6f   buggy %.6f\n", double(good(1, 2)),
              double(bad(1, 2)));
  const Tensor2 g = xenc::sinusoidal_encoding(200, 512),
                b = xenc::pitfalls::pe_doubled_exponent(200, 512);
  std::printf(
      "   near-constant dimensions (max - min over positions 0..199 < 0.01), D = 512:\n"
      "            correct %zu of 512   buggy %zu of 512\n",
      near_constant_dims(g, 0.01f), near_constant_dims(b, 0.01f));
  caught_by("PePitfalls.DoubledExponentFailsFormulaCheck");
  caught_by("PePitfalls.DoubledExponentFreezesFiveTimesMoreDimensions");
}

// ---- 2. positions along the batch axis ----
// The bug as a position scheme (xenc::pitfalls::BatchAxisPosition), plugged into the real model:
// PE(b) added to every token of sentence b (`x + pe[:x.size(0)]` on a [B, T, D] batch).

void exhibit_batch_axis() {
  header(2, "Positions added along the batch axis instead of the sequence axis");
  std::printf(
      "   correct: y[b, t] = x[b, t] + PE(t)\n"
      "   buggy:   y[b, t] = x[b, t] + PE(b)   (pe[:x.size(0)] written for [T, B, D], used on [B, "
      "T, D])\n"
      "   Every token of a sentence gets the same vector, so word order stays invisible, and a\n"
      "   sentence's output depends on its slot in the batch.\n");
  // the word_order demo's model: D = 16, 2 heads, 2 layers, seed 42
  const std::string a = "cat chased mouse", b = "mouse chased cat";
  const auto vocab = xenc::Vocabulary::from_texts({a, b});
  xenc::EncoderModelConfig cfg;
  cfg.vocab_size = vocab.size();
  cfg.layer.d_model = 16;
  cfg.layer.nhead = 2;
  cfg.layer.dim_feedforward = 64;
  cfg.layer.dropout = 0;
  cfg.num_layers = 2;
  cfg.position = xenc::PositionKind::sinusoidal;
  cfg.seed = 42;
  xenc::EncoderModel model(cfg);
  xenc::NoGradGuard no_grad;
  auto run_alone = [&](const std::string& s) { return model.forward(vocab.encode_batch({s}).ids); };
  // "cat" is token 0 of A and token 2 of B; each sentence alone in its batch (slot 0)
  const Tensor3 ya = run_alone(a), yb = run_alone(b);
  const double good = cosine(row(ya, 0, 0), row(yb, 0, 2));
  model.position = std::make_unique<xenc::pitfalls::BatchAxisPosition>();
  const Tensor3 za = run_alone(a), zb = run_alone(b);
  const double bad = cosine(row(za, 0, 0), row(zb, 0, 2));
  const Tensor3 pair = model.forward(vocab.encode_batch({a, a}).ids);  // A in slot 0 and slot 1
  std::printf(
      "   cosine of \"cat\" in A vs B after 2 layers (word_order's model, each sentence alone):\n"
      "            correct %.6f   buggy %.6f  (1 = the order is invisible)\n",
      good, bad);
  std::printf(
      "   the same sentence A in batch slot 0 vs slot 1, \"cat\": buggy cosine %.6f (should be "
      "1)\n",
      cosine(row(pair, 0, 0), row(pair, 1, 0)));
  caught_by("PePitfalls.BatchAxisPositionsFailSequenceCheck");
}

// ---- 3. odd D ----
void exhibit_odd_d() {
  header(3, "The crash on odd D");
  std::printf(
      "   common code: div_term = exp(arange(0, D, 2) * -ln(10000)/D)   (ceil(D/2) frequencies)\n"
      "                pe[:, 0::2] = sin(pos * div_term);  pe[:, 1::2] = cos(pos * div_term)\n"
      "   For D = 5 there are 3 frequencies but only 2 odd columns: NumPy/PyTorch stop with a\n"
      "   shape mismatch ((T, 3) into (T, 2)) deep inside the model, and a C loop writes PE(p, "
      "5),\n"
      "   one float past the end of each row. The formula needs pairs (2i, 2i+1): D must be "
      "even.\n");
  try {
    xenc::sinusoidal_encoding(10, 5);
    std::printf("   xencoder: accepted D = 5 (unexpected)\n");
  } catch (const xenc::config_error& e) {
    std::printf("   xencoder refuses it up front: config_error: %s\n", e.what());
  }
  caught_by("PePitfalls.OddDimensionIsAConfigErrorNotACrash");
}

// ---- 4. layer norm ----
void exhibit_layer_norm() {
  header(4, "Layer norm with the unbiased standard deviation and eps outside the root");
  std::printf(
      "   correct: y = (x - mean) / sqrt(var + eps),   var = sum (x - mean)^2 / D   "
      "(torch.nn.LayerNorm)\n"
      "   buggy:   y = (x - mean) / (std + eps),       std = sqrt(sum (x - mean)^2 / (D - 1))  "
      "(x.std())\n");
  const Tensor2 x = {{1, 2, 3, 4}, {0, 0, 0, 1e-3f}};
  const xenc::Tensor1 w = xt::ones<float>({4}), bias = xt::zeros<float>({4});
  const Tensor2 good = xenc::layer_norm_forward<2>(x, w, bias, 1e-5f);
  const Tensor2 buggy = xenc::pitfalls::layer_norm_unbiased_std_eps_outside(x, w, bias, 1e-5f);
  for (std::size_t r = 0; r < 2; ++r) {
    const double bad = buggy(r, 3);
    std::printf("   x = %-17s  last output: correct %.6f   buggy %.6f  (x %.3f)\n",
                r == 0 ? "[1, 2, 3, 4]" : "[0, 0, 0, 0.001]", double(good(r, 3)), bad,
                bad / good(r, 3));
  }
  std::printf(
      "   The unbiased std shrinks every output by sqrt((D-1)/D) (0.866 for D = 4, 0.999 for\n"
      "   D = 512: small enough to survive casual testing); eps outside the root stops taming\n"
      "   rows with a variance below eps, which blow up instead.\n");
  caught_by("PePitfalls.UnbiasedStdLayerNormFailsFormulaCheck");
}

// ---- 5. padding mask convention ----
void exhibit_mask() {
  header(5, "A padding mask with the opposite truth convention");
  std::printf(
      "   PyTorch key_padding_mask: true = padding (ignore this key). Hugging Face "
      "attention_mask:\n"
      "   1 = real token (keep). Passing one where the other is expected inverts the mask.\n");
  xenc::Rng rng(3);
  xenc::Tensor4 q = xenc::Tensor4::from_shape({2, 1, 3, 4}), k = q, v = q;
  xenc::fill_normal(q, rng);
  xenc::fill_normal(k, rng);
  xenc::fill_normal(v, rng);
  const xenc::Mask2 good_mask = {{false, false, false}, {false, false, true}};
  const xenc::Mask2 bad_mask = xenc::pitfalls::keep_mask_from_lengths({3, 2}, 3);  // true = keep
  const auto good = xenc::scaled_dot_product_attention_forward(q, k, v, good_mask);
  const auto bad = xenc::scaled_dot_product_attention_forward(q, k, v, bad_mask);
  std::printf(
      "   batch: sentence 0 has 3 tokens, sentence 1 has 2 + 1 padding; attention of query 0:\n");
  for (std::size_t b = 0; b < 2; ++b)
    std::printf("   sentence %zu   correct [%.3f %.3f %.3f]   inverted [%.3f %.3f %.3f]\n", b,
                double(good.weights(b, 0, 0, 0)), double(good.weights(b, 0, 0, 1)),
                double(good.weights(b, 0, 0, 2)), double(bad.weights(b, 0, 0, 0)),
                double(bad.weights(b, 0, 0, 1)), double(bad.weights(b, 0, 0, 2)));
  std::printf(
      "   Inverted, sentence 1 attends only to its padding (weight 1), and sentence 0, which has\n"
      "   no padding, has every key masked: PyTorch returns NaN there; xencoder returns zeros.\n");
  caught_by("PePitfalls.InvertedPaddingMaskFailsMaskCheck");
}

}  // namespace pe_pitfalls
