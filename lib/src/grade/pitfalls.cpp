// The pitfall museum: each exhibit computes what the buggy code computes, in plain loops.
// Arithmetic is in double where the bug does not depend on it and in float where it does
// (softmax_without_max overflows because float32's exp does).
#include "xenc/grade/pitfalls.hpp"
#include "xenc/reference/ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "xenc/ops/positional.hpp"

namespace xenc::pitfalls {

namespace {
const std::vector<PitfallInfo>& table() {
  static const std::vector<PitfallInfo> rows = {
#define XENC_PITFALL(id, title, mistake, fix, exhibit) {#id, title, mistake, fix, exhibit},
#include "xenc/grade/pitfall_table.hpp"
#undef XENC_PITFALL
  };
  return rows;
}
}  // namespace

const PitfallInfo& describe(Pitfall p) { return table().at(static_cast<std::size_t>(p)); }

const std::vector<Pitfall>& all_pitfalls() {
  static const std::vector<Pitfall> all = [] {
    std::vector<Pitfall> v;
    for (std::size_t i = 0; i < table().size(); ++i) v.push_back(static_cast<Pitfall>(i));
    return v;
  }();
  return all;
}

// ---- positional encodings ---------------------------------------------------------------------

Tensor2 pe_doubled_exponent(std::size_t P, std::size_t D) {
  Tensor2 pe = xt::zeros<float>({P, D});
  for (std::size_t p = 0; p < P; ++p)
    for (std::size_t i = 0; i + 1 < D; i += 2) {  // i is already the even dimension 2k ...
      const double angle = double(p) / std::pow(10000.0, double(2 * i) / double(D));  // ... so 4k/D
      pe(p, i) = float(std::sin(angle));
      pe(p, i + 1) = float(std::cos(angle));
    }
  return pe;
}

Tensor2 pe_sin_cos_swapped(std::size_t P, std::size_t D) {
  Tensor2 pe = xt::zeros<float>({P, D});
  for (std::size_t p = 0; p < P; ++p)
    for (std::size_t k = 0; 2 * k + 1 < D; ++k) {
      const double angle = double(p) / std::pow(10000.0, double(2 * k) / double(D));
      pe(p, 2 * k) = float(std::cos(angle));      // cos where sin belongs ...
      pe(p, 2 * k + 1) = float(std::sin(angle));  // ... and sin where cos belongs
    }
  return pe;
}

Tensor3 add_positions_along_batch(const Tensor3& x) {
  const Tensor2 pe = sinusoidal_encoding(x.shape()[0], x.shape()[2]);
  Tensor3 y = x;
  for (std::size_t b = 0; b < x.shape()[0]; ++b)
    for (std::size_t t = 0; t < x.shape()[1]; ++t)
      for (std::size_t d = 0; d < x.shape()[2]; ++d) y(b, t, d) += pe(b, d);  // PE(b), not PE(t)
  return y;
}

std::vector<std::vector<float>> pe_odd_d_unchecked(std::size_t P, std::size_t D) {
  std::vector<std::vector<float>> pe(P, std::vector<float>(D));
  const std::size_t n_freq = (D + 1) / 2;  // arange(0, D, 2) has ceil(D/2) entries
  for (std::size_t p = 0; p < P; ++p)
    for (std::size_t i = 0; i < n_freq; ++i) {
      const double angle = double(p) * std::exp(-double(2 * i) * std::log(10000.0) / double(D));
      pe[p].at(2 * i) = float(std::sin(angle));
      pe[p].at(2 * i + 1) = float(std::cos(angle));  // column D for the last i when D is odd
    }
  return pe;
}

std::size_t near_constant_dims(const Tensor2& pe, float threshold) {
  std::size_t n = 0;
  for (std::size_t j = 0; j < pe.shape()[1]; ++j) {
    float lo = pe(0, j), hi = pe(0, j);
    for (std::size_t p = 0; p < pe.shape()[0]; ++p)
      lo = std::min(lo, pe(p, j)), hi = std::max(hi, pe(p, j));
    n += (hi - lo) < threshold;
  }
  return n;
}

// ---- softmax ----------------------------------------------------------------------------------

Tensor2 softmax_without_max(const Tensor2& x) {
  Tensor2 y = x;
  for (std::size_t r = 0; r < x.shape()[0]; ++r) {
    float sum = 0.0f;
    for (std::size_t c = 0; c < x.shape()[1]; ++c) sum += (y(r, c) = std::exp(x(r, c)));
    for (std::size_t c = 0; c < x.shape()[1]; ++c) y(r, c) /= sum;
  }
  return y;
}

Tensor2 softmax_wrong_axis(const Tensor2& x) {
  Tensor2 y = x;
  std::vector<double> column(x.shape()[0]);
  for (std::size_t c = 0; c < x.shape()[1]; ++c) {  // a column at a time: over the rows
    for (std::size_t r = 0; r < x.shape()[0]; ++r) column[r] = x(r, c);
    reference::softmax_row(column);  // the oracle's row softmax, on the wrong slice
    for (std::size_t r = 0; r < x.shape()[0]; ++r) y(r, c) = float(column[r]);
  }
  return y;
}

// ---- layer norm -------------------------------------------------------------------------------

namespace {
// (x - mean) / denominator(sum of squares, D) · weight + bias, row by row in double.
template <class Denominator>
Tensor2 layer_norm_with(const Tensor2& x, const Tensor1& weight, const Tensor1& bias,
                        Denominator denominator) {
  Tensor2 y = x;
  const std::size_t D = x.shape()[1];
  for (std::size_t r = 0; r < x.shape()[0]; ++r) {
    double mean = 0.0, ss = 0.0;
    for (std::size_t d = 0; d < D; ++d) mean += x(r, d);
    mean /= double(D);
    for (std::size_t d = 0; d < D; ++d) ss += (x(r, d) - mean) * (x(r, d) - mean);
    const double den = denominator(ss, double(D));
    for (std::size_t d = 0; d < D; ++d)
      y(r, d) = float((x(r, d) - mean) / den * weight(d) + bias(d));
  }
  return y;
}
}  // namespace

Tensor2 layer_norm_unbiased_variance(const Tensor2& x, const Tensor1& weight, const Tensor1& bias,
                                     float eps) {
  return layer_norm_with(x, weight, bias,
                         [eps](double ss, double D) { return std::sqrt(ss / (D - 1) + eps); });
}

Tensor2 layer_norm_eps_outside_sqrt(const Tensor2& x, const Tensor1& weight, const Tensor1& bias,
                                    float eps) {
  return layer_norm_with(x, weight, bias,
                         [eps](double ss, double D) { return std::sqrt(ss / D) + eps; });
}

Tensor2 layer_norm_unbiased_std_eps_outside(const Tensor2& x, const Tensor1& weight,
                                            const Tensor1& bias, float eps) {
  return layer_norm_with(x, weight, bias,
                         [eps](double ss, double D) { return std::sqrt(ss / (D - 1)) + eps; });
}

LayerNormGrads<2> layer_norm_backward_no_mean_terms(const Tensor2& grad_y, const Tensor2& x,
                                                    const Tensor1& weight, float eps) {
  const std::size_t N = x.shape()[0], D = x.shape()[1];
  LayerNormGrads<2> g;
  g.input = Tensor2::from_shape({N, D});
  g.weight = xt::zeros<float>({D});
  g.bias = xt::zeros<float>({D});
  for (std::size_t r = 0; r < N; ++r) {
    double mean = 0.0, var = 0.0;
    for (std::size_t d = 0; d < D; ++d) mean += x(r, d);
    mean /= double(D);
    for (std::size_t d = 0; d < D; ++d) var += (x(r, d) - mean) * (x(r, d) - mean) / double(D);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (std::size_t d = 0; d < D; ++d) {
      g.input(r, d) = float(rstd * grad_y(r, d) * weight(d));  // the bug: no mean terms
      g.weight(d) += float(grad_y(r, d) * (x(r, d) - mean) * rstd);
      g.bias(d) += grad_y(r, d);
    }
  }
  return g;
}

// ---- attention --------------------------------------------------------------------------------

namespace {
enum class MaskMode { before_softmax, after_softmax, inverted };
enum class Scale { sqrt_dh, none, dh };  // the scores' divisor: sqrt(Dh), 1 or Dh

// Loop-by-loop attention in double with one deliberate variation.
AttentionResult attention_variant(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                  const Mask2& mask, MaskMode mode, Scale scaling) {
  const std::size_t B = q.shape()[0], H = q.shape()[1], Tq = q.shape()[2], Dh = q.shape()[3];
  const std::size_t Tk = k.shape()[2];
  const double scale = scaling == Scale::sqrt_dh ? 1.0 / std::sqrt(double(Dh))
                       : scaling == Scale::dh    ? 1.0 / double(Dh)
                                                 : 1.0;
  const double inf = std::numeric_limits<double>::infinity();
  AttentionResult r;
  r.output = xt::zeros<float>({B, H, Tq, Dh});
  r.weights = xt::zeros<float>({B, H, Tq, Tk});
  std::vector<double> s(Tk);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < Tq; ++i) {
        auto masked = [&](std::size_t j) {
          if (mask.size() == 0) return false;
          return mode == MaskMode::inverted ? !mask(b, j) : bool(mask(b, j));
        };
        for (std::size_t j = 0; j < Tk; ++j) {
          double dot = 0.0;
          for (std::size_t e = 0; e < Dh; ++e) dot += double(q(b, h, i, e)) * double(k(b, h, j, e));
          s[j] = dot * scale;
          if (mode != MaskMode::after_softmax && masked(j)) s[j] = -inf;
        }
        // the softmax, with the oracle's one rule for a row whose every key is masked (zeros)
        reference::softmax_row(s);
        for (std::size_t j = 0; j < Tk; ++j) {
          if (mode == MaskMode::after_softmax && masked(j)) s[j] = 0.0;  // too late
          r.weights(b, h, i, j) = float(s[j]);
          for (std::size_t e = 0; e < Dh; ++e) r.output(b, h, i, e) += float(s[j] * v(b, h, j, e));
        }
      }
  return r;
}
}  // namespace

Mask2 keep_mask_from_lengths(const std::vector<std::size_t>& lengths, std::size_t T) {
  Mask2 m = Mask2::from_shape({lengths.size(), T});
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (std::size_t t = 0; t < T; ++t) m(b, t) = t < lengths[b];  // true = real token
  return m;
}

AttentionResult attention_inverted_mask(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                        const Mask2& key_padding_mask) {
  return attention_variant(q, k, v, key_padding_mask, MaskMode::inverted, Scale::sqrt_dh);
}

AttentionResult attention_mask_after_softmax(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                             const Mask2& key_padding_mask) {
  return attention_variant(q, k, v, key_padding_mask, MaskMode::after_softmax, Scale::sqrt_dh);
}

AttentionResult attention_without_scale(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                        const Mask2& key_padding_mask) {
  return attention_variant(q, k, v, key_padding_mask, MaskMode::before_softmax, Scale::none);
}

AttentionResult attention_scale_by_dh(const Tensor4& q, const Tensor4& k, const Tensor4& v,
                                      const Mask2& key_padding_mask) {
  return attention_variant(q, k, v, key_padding_mask, MaskMode::before_softmax, Scale::dh);
}

// ---- heads --------------------------------------------------------------------------------------

Tensor4 split_heads_without_transpose(const Tensor3& x, std::size_t H) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], D = x.shape()[2], Dh = H == 0 ? 0 : D / H;
  if (H == 0 || D % H != 0)  // PyTorch's view refuses too, with a RuntimeError
    throw std::runtime_error("view: shape [" + std::to_string(B) + ", " + std::to_string(H) + ", " +
                             std::to_string(T) + ", D / H] is invalid for input of size " +
                             std::to_string(x.size()));
  Tensor4 out = Tensor4::from_shape({B, H, T, Dh});
  std::copy(x.begin(), x.end(), out.begin());  // the same memory read with another shape
  return out;
}

Tensor3 merge_heads_without_transpose(const Tensor4& x) {
  const std::size_t B = x.shape()[0], H = x.shape()[1], T = x.shape()[2], Dh = x.shape()[3];
  Tensor3 out = Tensor3::from_shape({B, T, H * Dh});
  std::copy(x.begin(), x.end(), out.begin());
  return out;
}

// ---- linear backward --------------------------------------------------------------------------

LinearGrads<2> linear_backward_bias_mean(const Tensor2& grad_y, const Tensor2& x,
                                         const Tensor2& weight) {
  const std::size_t N = x.shape()[0], in = x.shape()[1], out = weight.shape()[0];
  LinearGrads<2> g;
  g.input = xt::zeros<float>({N, in});
  g.weight = xt::zeros<float>({out, in});
  g.bias = xt::zeros<float>({out});
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t o = 0; o < out; ++o) {
      for (std::size_t i = 0; i < in; ++i) {
        g.input(n, i) += grad_y(n, o) * weight(o, i);
        g.weight(o, i) += grad_y(n, o) * x(n, i);
      }
      g.bias(o) += grad_y(n, o) / float(N);  // the bug: a mean
    }
  return g;
}

// ---- cross-entropy ----------------------------------------------------------------------------

namespace {
// -log softmax(z)[t] in double, stable.
double nll_row(const Tensor2& z, std::size_t n, std::size_t t) {
  const std::size_t C = z.shape()[1];
  double m = z(n, 0), s = 0.0;
  for (std::size_t c = 1; c < C; ++c) m = std::max(m, double(z(n, c)));
  for (std::size_t c = 0; c < C; ++c) s += std::exp(double(z(n, c)) - m);
  return m + std::log(s) - double(z(n, t));
}
}  // namespace

float cross_entropy_counts_ignored(const Tensor2& logits, const Index1& targets,
                                   std::int64_t ignore_index) {
  const std::size_t N = logits.shape()[0];
  double total = 0.0;
  for (std::size_t n = 0; n < N; ++n)
    if (targets(n) != ignore_index) total += nll_row(logits, n, std::size_t(targets(n)));
  return float(total / double(N));  // the bug: N, not the number of kept rows
}

Tensor2 cross_entropy_counts_ignored_backward(const Tensor2& logits, const Index1& targets,
                                              std::int64_t ignore_index) {
  const std::size_t N = logits.shape()[0], C = logits.shape()[1];
  Tensor2 g = xt::zeros<float>({N, C});
  for (std::size_t n = 0; n < N; ++n) {
    if (targets(n) == ignore_index) continue;
    double m = logits(n, 0), s = 0.0;
    for (std::size_t c = 1; c < C; ++c) m = std::max(m, double(logits(n, c)));
    for (std::size_t c = 0; c < C; ++c) s += std::exp(double(logits(n, c)) - m);
    for (std::size_t c = 0; c < C; ++c) {
      const double p = std::exp(double(logits(n, c)) - m) / s;
      g(n, c) = float((p - (std::int64_t(c) == targets(n) ? 1.0 : 0.0)) / double(N));
    }
  }
  return g;
}

// ---- RoPE -------------------------------------------------------------------------------------

namespace {
// One head's rotation with the knobs the exhibits turn: which columns pair up, the exponent's
// factor (2 in θ_i = 10000^(−2i/Dh)), the sense of rotation and the first position.
struct RopeVariant {
  bool half_pairs = false;
  double exponent_factor = 2.0;
  double sense = 1.0;  // −1: clockwise
  double first_position = 0.0;
};
Tensor2 rope_variant(const Tensor2& x, const std::vector<std::size_t>& positions, RopeVariant v) {
  const std::size_t T = x.shape()[0], Dh = x.shape()[1], half = Dh / 2;
  Tensor2 y = x;
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t i = 0; i < half; ++i) {
      const double theta = std::pow(10000.0, -v.exponent_factor * double(i) / double(Dh));
      const double a = (double(positions.at(t)) + v.first_position) * theta;
      const double c = std::cos(a), s = v.sense * std::sin(a);
      const std::size_t j = v.half_pairs ? i : 2 * i, k = v.half_pairs ? i + half : 2 * i + 1;
      const double x0 = x(t, j), x1 = x(t, k);
      y(t, j) = float(x0 * c - x1 * s);
      y(t, k) = float(x0 * s + x1 * c);
    }
  return y;
}
}  // namespace

Tensor2 rope_rotate_half(const Tensor2& x, const std::vector<std::size_t>& positions) {
  return rope_variant(x, positions, {true, 2.0, 1.0, 0.0});  // pairs (i, i + Dh/2)
}
Tensor2 rope_exponent_without_2(const Tensor2& x, const std::vector<std::size_t>& positions) {
  return rope_variant(x, positions, {false, 1.0, 1.0, 0.0});  // θ_i = 10000^(−i/Dh)
}
Tensor2 rope_clockwise(const Tensor2& x, const std::vector<std::size_t>& positions) {
  return rope_variant(x, positions, {false, 2.0, -1.0, 0.0});  // R(−a)
}
Tensor2 rope_doubled_exponent(const Tensor2& x, const std::vector<std::size_t>& positions) {
  return rope_variant(x, positions, {false, 4.0, 1.0, 0.0});  // θ_i = 10000^(−4i/Dh)
}
Tensor2 rope_positions_from_one(const Tensor2& x, const std::vector<std::size_t>& positions) {
  return rope_variant(x, positions, {false, 2.0, 1.0, 1.0});  // angle (p + 1) θ_i
}

// ---- ALiBi --------------------------------------------------------------------------------------

std::vector<double> alibi_slopes_start_2_pow_minus_8(std::size_t H) {
  const double start = std::pow(2.0, -8.0);  // should be 2^(−8/H)
  std::vector<double> m(H);
  for (std::size_t h = 0; h < H; ++h) m[h] = std::pow(start, double(h + 1));
  return m;
}

std::vector<double> alibi_slopes_plain_formula(std::size_t H) {
  std::vector<double> m(H);  // the power-of-two formula, whatever H is
  for (std::size_t h = 0; h < H; ++h) m[h] = std::pow(2.0, -8.0 * double(h + 1) / double(H));
  return m;
}

// ---- the online softmax: one tile of keys ------------------------------------------------------

namespace {
// The three wrong updates of one tile, written as the buggy code computes them (the right one is
// reference::online_softmax_tile). Sums in double; the state comes back in float.
enum class OnlineBug { acc_not_rescaled, sum_wrong_factor, old_max };

grade::OnlineSoftmaxState online_tile_with(const grade::OnlineSoftmaxState& state, const Tensor2& s,
                                           const Tensor2& v, OnlineBug bug) {
  const std::size_t Tq = s.shape()[0], Tk = s.shape()[1], Dv = v.shape()[1];
  if (v.shape()[0] != Tk || state.m.size() != Tq || state.l.size() != Tq ||
      state.acc.shape()[0] != Tq || state.acc.shape()[1] != Dv)
    throw shape_error("online softmax exhibit: shapes do not fit");
  grade::OnlineSoftmaxState next = state;
  for (std::size_t r = 0; r < Tq; ++r) {
    const double m_old = state.m(r);
    double m = m_old;
    for (std::size_t j = 0; j < Tk; ++j) m = std::max(m, double(s(r, j)));
    if (m == -std::numeric_limits<double>::infinity()) continue;
    const double c = std::exp(m_old - m);
    // the base of the tile's exponentials: the old maximum in the old_max bug
    const double base = bug == OnlineBug::old_max ? m_old : m;
    double l = (bug == OnlineBug::sum_wrong_factor ? std::exp(m - m_old) : c) * state.l(r);
    if (bug == OnlineBug::sum_wrong_factor && state.l(r) == 0.0f) l = 0.0;  // inf · 0 guarded
    std::vector<double> acc(Dv);
    for (std::size_t e = 0; e < Dv; ++e)
      acc[e] = (bug == OnlineBug::acc_not_rescaled ? 1.0 : c) * state.acc(r, e);
    for (std::size_t j = 0; j < Tk; ++j) {
      const double p = std::exp(double(s(r, j)) - base);
      l += p;
      for (std::size_t e = 0; e < Dv; ++e) acc[e] += p * double(v(j, e));
    }
    next.m(r) = float(m);
    next.l(r) = float(l);
    for (std::size_t e = 0; e < Dv; ++e) next.acc(r, e) = float(acc[e]);
  }
  return next;
}
}  // namespace

grade::OnlineSoftmaxState online_softmax_acc_not_rescaled(const grade::OnlineSoftmaxState& state,
                                                          const Tensor2& scores,
                                                          const Tensor2& values) {
  return online_tile_with(state, scores, values, OnlineBug::acc_not_rescaled);
}
grade::OnlineSoftmaxState online_softmax_sum_wrong_factor(const grade::OnlineSoftmaxState& state,
                                                          const Tensor2& scores,
                                                          const Tensor2& values) {
  return online_tile_with(state, scores, values, OnlineBug::sum_wrong_factor);
}
grade::OnlineSoftmaxState online_softmax_old_max(const grade::OnlineSoftmaxState& state,
                                                 const Tensor2& scores, const Tensor2& values) {
  return online_tile_with(state, scores, values, OnlineBug::old_max);
}

}  // namespace xenc::pitfalls
