// The reference ops, one loop at a time, in double precision.
//
// The sibling of encoder_layer.cpp: what the one-file layer does not use (cross-entropy, RoPE,
// ALiBi, split and merge heads) and the [N, C] row forms of what it does (linear, softmax,
// layer norm, attention on [B, H, T, Dh]). Every tensor is indexed with operator(), every sum
// is a plain loop in double. The file reads top to bottom:
//
//   1. matrix product and linear
//   2. softmax (the one place the rules for NaN and fully masked rows are written)
//   3. layer norm
//   4. cross-entropy with ignore_index
//   5. split and merge heads, scaled dot-product attention, forward and backward
//   6. positions: the sinusoidal table, RoPE, ALiBi
//   7. the online softmax: one tile of keys (attention in tiles)
#include "xenc/reference/ops.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "xenc/core/error.hpp"
#include "xenc/reference/encoder_layer.hpp"

namespace xenc::reference {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string num(std::size_t n) { return std::to_string(n); }
std::string where(const char* function) { return std::string("reference::") + function; }

// Throws unless a and b have the same shape (a gradient and the tensor it belongs to).
template <class A, class B>
void same_shape(const char* function, const char* arg, const A& a, const char* other, const B& b) {
  const std::vector<long> want(b.shape().begin(), b.shape().end());
  check_shape(where(function), arg, a, want,
              std::string(other) + "'s shape " + shape_str(b.shape()));
}

}  // namespace

// ---- 1. matrix product and linear ---------------------------------------------------------

// a: [M, K]   b: [K, N]   c: [M, N]
Tensor2d matmul(const Tensor2d& a, const Tensor2d& b) {
  const std::size_t M = a.shape(0), K = a.shape(1), N = b.shape(1);
  check_shape(where("matmul"), "b", b, {long(K), any_dim}, "[K, N] with K = " + num(K));
  Tensor2d c = Tensor2d::from_shape({M, N});
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      // c[i, j] is the dot product of row i of a with column j of b.
      double sum = 0.0;
      for (std::size_t k = 0; k < K; ++k) sum += a(i, k) * b(k, j);
      c(i, j) = sum;
    }
  return c;
}

// x: [N, in]   weight: [out, in]   bias: [out] or empty   y: [N, out]
Tensor2d linear_forward(const Tensor2d& x, const Tensor2d& weight, const Tensor1d& bias) {
  const std::size_t N = x.shape(0), in = x.shape(1), out = weight.shape(0);
  check_shape(where("linear_forward"), "weight", weight, {any_dim, long(in)},
              "[out, in] with in = " + num(in));
  if (bias.size() != 0)
    check_shape(where("linear_forward"), "bias", bias, {long(out)}, "[out] with out = " + num(out));
  Tensor2d y = Tensor2d::from_shape({N, out});
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t o = 0; o < out; ++o) {
      // Output feature o of row n: the row's dot product with row o of the weight, plus b[o].
      double sum = bias.size() != 0 ? bias(o) : 0.0;
      for (std::size_t i = 0; i < in; ++i) sum += x(n, i) * weight(o, i);
      y(n, o) = sum;
    }
  return y;
}

// grad_y: [N, out]   x: [N, in]   weight: [out, in]
LinearGrads linear_backward(const Tensor2d& grad_y, const Tensor2d& x, const Tensor2d& weight) {
  const std::size_t N = x.shape(0), in = x.shape(1), out = weight.shape(0);
  check_shape(where("linear_backward"), "weight", weight, {any_dim, long(in)},
              "[out, in] with in = " + num(in));
  check_shape(where("linear_backward"), "grad_y", grad_y, {long(N), long(out)},
              "[N, out] = [" + num(N) + ", " + num(out) + "]");
  LinearGrads g{xt::zeros<double>({N, in}), xt::zeros<double>({out, in}), xt::zeros<double>({out})};
  // y[n, o] = b[o] + Σ_i x[n, i] W[o, i], so each product x[n, i] W[o, i] sends dy[n, o] to
  // both factors, and b[o] receives dy[n, o] from every row.
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t o = 0; o < out; ++o) {
      const double d = grad_y(n, o);
      for (std::size_t i = 0; i < in; ++i) {
        g.input(n, i) += d * weight(o, i);  // dx = dy W
        g.weight(o, i) += d * x(n, i);      // dW = dyᵀ x
      }
      g.bias(o) += d;  // db = Σ_rows dy
    }
  return g;
}

// ---- 2. softmax ---------------------------------------------------------------------------

void softmax_row(std::vector<double>& row) {
  // The row maximum, subtracted before exp so that no exponent is positive (no overflow).
  // A NaN anywhere makes every output NaN, as in PyTorch: the caller sees the problem.
  double m = -kInf;
  bool has_nan = false;
  for (double v : row) {
    has_nan = has_nan || std::isnan(v);
    m = v > m ? v : m;
  }
  if (has_nan) {
    for (double& v : row) v = kNaN;
    return;
  }
  // Every entry -inf: the caller masked the whole row (a query whose every key is padding).
  // Nothing to attend to, so zeros, not 0/0 = NaN (PyTorch gives NaN here).
  if (m == -kInf) {
    for (double& v : row) v = 0.0;
    return;
  }
  // exp(-inf - m) = 0: a masked entry gets probability exactly 0. (m = +inf gives
  // exp(inf - inf) = NaN, as in PyTorch.)
  double sum = 0.0;
  for (double& v : row) {
    v = std::exp(v - m);
    sum += v;
  }
  for (double& v : row) v /= sum;
}

// x, y: [N, C]
Tensor2d softmax_forward(const Tensor2d& x) {
  const std::size_t N = x.shape(0), C = x.shape(1);
  Tensor2d y = Tensor2d::from_shape({N, C});
  std::vector<double> row(C);
  for (std::size_t n = 0; n < N; ++n) {
    for (std::size_t c = 0; c < C; ++c) row[c] = x(n, c);
    softmax_row(row);
    for (std::size_t c = 0; c < C; ++c) y(n, c) = row[c];
  }
  return y;
}

// grad_y, y, dx: [N, C]
Tensor2d softmax_backward(const Tensor2d& grad_y, const Tensor2d& y) {
  same_shape("softmax_backward", "grad_y", grad_y, "y", y);
  const std::size_t N = y.shape(0), C = y.shape(1);
  Tensor2d dx = Tensor2d::from_shape({N, C});
  for (std::size_t n = 0; n < N; ++n) {
    // dy_i/dx_j = y_i (δ_ij - y_j), so dx_i = y_i (dy_i - Σ_j dy_j y_j).
    double dot = 0.0;
    for (std::size_t c = 0; c < C; ++c) dot += grad_y(n, c) * y(n, c);
    for (std::size_t c = 0; c < C; ++c) dx(n, c) = y(n, c) * (grad_y(n, c) - dot);
  }
  return dx;
}

// ---- 3. layer norm ------------------------------------------------------------------------

namespace {
// Row n's mean and 1/√(var + eps), the variance biased (÷ D, as PyTorch) and taken around the
// mean in a second pass (one pass, E[x²] - E[x]², cancels when the mean is large).
void row_stats(const Tensor2d& x, std::size_t n, double eps, double& mean, double& rstd) {
  const std::size_t D = x.shape(1);
  mean = 0.0;
  for (std::size_t d = 0; d < D; ++d) mean += x(n, d);
  mean /= double(D);
  double var = 0.0;
  for (std::size_t d = 0; d < D; ++d) var += (x(n, d) - mean) * (x(n, d) - mean);
  var /= double(D);
  rstd = 1.0 / std::sqrt(var + eps);
}
void check_ln(const char* function, const Tensor2d& x, const Tensor1d& v, const char* arg) {
  check_shape(where(function), arg, v, {long(x.shape(1))}, "[D] with D = " + num(x.shape(1)));
}
}  // namespace

// x, y: [N, D]   weight, bias: [D]
Tensor2d layer_norm_forward(const Tensor2d& x, const Tensor1d& weight, const Tensor1d& bias,
                            double eps) {
  check_ln("layer_norm_forward", x, weight, "weight");
  check_ln("layer_norm_forward", x, bias, "bias");
  const std::size_t N = x.shape(0), D = x.shape(1);
  Tensor2d y = Tensor2d::from_shape({N, D});
  for (std::size_t n = 0; n < N; ++n) {
    double mean, rstd;
    row_stats(x, n, eps, mean, rstd);
    // Normalise to mean 0 and variance 1, then scale and shift.
    for (std::size_t d = 0; d < D; ++d) y(n, d) = (x(n, d) - mean) * rstd * weight(d) + bias(d);
  }
  return y;
}

// grad_y, x: [N, D]   weight: [D]
LayerNormGrads layer_norm_backward(const Tensor2d& grad_y, const Tensor2d& x,
                                   const Tensor1d& weight, double eps) {
  check_ln("layer_norm_backward", x, weight, "weight");
  same_shape("layer_norm_backward", "grad_y", grad_y, "x", x);
  const std::size_t N = x.shape(0), D = x.shape(1);
  LayerNormGrads g{Tensor2d::from_shape({N, D}), xt::zeros<double>({D}), xt::zeros<double>({D})};
  std::vector<double> xhat(D), gw(D);
  for (std::size_t n = 0; n < N; ++n) {
    double mean, rstd;
    row_stats(x, n, eps, mean, rstd);
    // x̂ = (x - mean) · rstd, and g = dy · weight (the gradient reaching x̂).
    double mean_g = 0.0, mean_gx = 0.0;
    for (std::size_t d = 0; d < D; ++d) {
      xhat[d] = (x(n, d) - mean) * rstd;
      gw[d] = grad_y(n, d) * weight(d);
      mean_g += gw[d];
      mean_gx += gw[d] * xhat[d];
      // y = x̂ · weight + bias: dweight collects dy · x̂ and dbias dy, from every row.
      g.weight(d) += grad_y(n, d) * xhat[d];
      g.bias(d) += grad_y(n, d);
    }
    mean_g /= double(D);
    mean_gx /= double(D);
    // Every x_d also moves the mean and the variance: the two averages.
    for (std::size_t d = 0; d < D; ++d) g.input(n, d) = rstd * (gw[d] - mean_g - xhat[d] * mean_gx);
  }
  return g;
}

// ---- 4. cross-entropy ---------------------------------------------------------------------

namespace {
// The number of rows that count (target != ignore_index); throws for a target outside [0, C).
std::size_t count_targets(const char* function, const Tensor2d& logits, const Index1& targets,
                          std::int64_t ignore_index) {
  const std::size_t N = logits.shape(0), C = logits.shape(1);
  check_shape(where(function), "targets", targets, {long(N)}, "[N] with N = " + num(N));
  std::size_t kept = 0;
  for (std::size_t n = 0; n < N; ++n) {
    const std::int64_t t = targets(n);
    if (t == ignore_index) continue;
    if (t < 0 || std::size_t(t) >= C)
      throw index_error(where(function) + ": targets[" + num(n) + "] is " + std::to_string(t) +
                        ", expected 0 <= target < C = " + num(C) + " or ignore_index (" +
                        std::to_string(ignore_index) + ")");
    ++kept;
  }
  return kept;
}
// log Σ_c exp(z[n, c]), with the row max m taken out: m + log Σ_c exp(z[n, c] - m).
double logsumexp(const Tensor2d& z, std::size_t n) {
  double m = -kInf;
  for (std::size_t c = 0; c < z.shape(1); ++c) m = z(n, c) > m ? z(n, c) : m;
  double s = 0.0;
  for (std::size_t c = 0; c < z.shape(1); ++c) s += std::exp(z(n, c) - m);
  return m + std::log(s);
}
}  // namespace

// logits: [N, C]   targets: [N]
double cross_entropy_forward(const Tensor2d& logits, const Index1& targets,
                             std::int64_t ignore_index) {
  const std::size_t kept = count_targets("cross_entropy_forward", logits, targets, ignore_index);
  double total = 0.0;
  for (std::size_t n = 0; n < logits.shape(0); ++n) {
    if (targets(n) == ignore_index) continue;
    // -log softmax(z)[t] = logsumexp(z) - z_t
    total += logsumexp(logits, n) - logits(n, std::size_t(targets(n)));
  }
  // The mean over the kept rows: with none kept it is 0/0 = NaN, as in PyTorch.
  return kept == 0 ? kNaN : total / double(kept);
}

// logits, dlogits: [N, C]   targets: [N]
Tensor2d cross_entropy_backward(const Tensor2d& logits, const Index1& targets,
                                std::int64_t ignore_index) {
  const std::size_t kept = count_targets("cross_entropy_backward", logits, targets, ignore_index);
  const std::size_t N = logits.shape(0), C = logits.shape(1);
  Tensor2d d = xt::zeros<double>({N, C});
  for (std::size_t n = 0; n < N; ++n) {
    if (targets(n) == ignore_index) continue;  // an ignored row contributes nothing
    // d/dz_c (logsumexp(z) - z_t) = softmax(z)_c - [c = t], divided by the kept rows.
    const double lse = logsumexp(logits, n);
    for (std::size_t c = 0; c < C; ++c)
      d(n, c) = (std::exp(logits(n, c) - lse) - (std::int64_t(c) == targets(n) ? 1.0 : 0.0)) /
                double(kept);
  }
  return d;
}

// ---- 5. attention -------------------------------------------------------------------------

// x: [B, T, D] -> [B, H, T, Dh]
Tensor4d split_heads(const Tensor3d& x, std::size_t H) {
  const std::size_t B = x.shape(0), T = x.shape(1), D = x.shape(2);
  check_config(H > 0 && D % H == 0, where("split_heads"),
               "D (" + num(D) + ") must be divisible by num_heads (" + num(H) + ")");
  const std::size_t Dh = D / H;
  Tensor4d y = Tensor4d::from_shape({B, H, T, Dh});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t e = 0; e < Dh; ++e) y(b, h, t, e) = x(b, t, h * Dh + e);
  return y;
}

// x: [B, H, T, Dh] -> [B, T, D]
Tensor3d merge_heads(const Tensor4d& x) {
  const std::size_t B = x.shape(0), H = x.shape(1), T = x.shape(2), Dh = x.shape(3);
  Tensor3d y = Tensor3d::from_shape({B, T, H * Dh});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t e = 0; e < Dh; ++e) y(b, t, h * Dh + e) = x(b, h, t, e);
  return y;
}

namespace {
void check_attention(const char* function, const Tensor4d& q, const Tensor4d& k,
                     const Tensor4d& v) {
  const long B = long(q.shape(0)), H = long(q.shape(1)), Dh = long(q.shape(3));
  const std::string bhd = " with B = " + num(q.shape(0)) + ", H = " + num(q.shape(1)) +
                          ", Dh = " + num(q.shape(3)) + " (from query)";
  check_shape(where(function), "key", k, {B, H, any_dim, Dh}, "[B, H, Tk, Dh]" + bhd);
  check_shape(where(function), "value", v, {B, H, long(k.shape(2)), Dh},
              "[B, H, Tk, Dh]" + bhd + ", Tk = " + num(k.shape(2)) + " (from key)");
}
}  // namespace

// query: [B, H, Tq, Dh]   key, value: [B, H, Tk, Dh]   key_padding_mask: [B, Tk] or empty
// attn_mask: [Tq, Tk] or empty
AttentionResult scaled_dot_product_attention_forward(const Tensor4d& query, const Tensor4d& key,
                                                     const Tensor4d& value,
                                                     const Mask2& key_padding_mask,
                                                     const Tensor2d& attn_mask) {
  const char* function = "scaled_dot_product_attention_forward";
  check_attention(function, query, key, value);
  const std::size_t B = query.shape(0), H = query.shape(1), Tq = query.shape(2),
                    Dh = query.shape(3), Tk = key.shape(2);
  if (key_padding_mask.size() != 0)
    check_shape(where(function), "key_padding_mask", key_padding_mask, {long(B), long(Tk)},
                "[B, Tk] = [" + num(B) + ", " + num(Tk) + "]");
  if (attn_mask.size() != 0)
    check_shape(where(function), "attn_mask", attn_mask, {long(Tq), long(Tk)},
                "[Tq, Tk] = [" + num(Tq) + ", " + num(Tk) + "]");
  const double scale = 1.0 / std::sqrt(double(Dh));
  AttentionResult r{xt::zeros<double>({B, H, Tq, Dh}), Tensor4d::from_shape({B, H, Tq, Tk})};
  std::vector<double> s(Tk);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < Tq; ++i) {
        // 1. Scores of query i against every key j: q_i · k_j / √Dh (+ the additive mask);
        //    a padded key gets -inf, so that its probability is exactly 0.
        for (std::size_t j = 0; j < Tk; ++j) {
          double dot = 0.0;
          for (std::size_t e = 0; e < Dh; ++e) dot += query(b, h, i, e) * key(b, h, j, e);
          s[j] = dot * scale + (attn_mask.size() != 0 ? attn_mask(i, j) : 0.0);
          if (key_padding_mask.size() != 0 && key_padding_mask(b, j)) s[j] = -kInf;
        }
        // 2. Probabilities over the keys (zeros when every key is padding).
        softmax_row(s);
        // 3. The output is the probability-weighted average of the values.
        for (std::size_t j = 0; j < Tk; ++j) {
          r.weights(b, h, i, j) = s[j];
          for (std::size_t e = 0; e < Dh; ++e) r.output(b, h, i, e) += s[j] * value(b, h, j, e);
        }
      }
  return r;
}

// grad_output: [B, H, Tq, Dh]   weights: [B, H, Tq, Tk]
AttentionGrads scaled_dot_product_attention_backward(const Tensor4d& grad_output,
                                                     const Tensor4d& query, const Tensor4d& key,
                                                     const Tensor4d& value,
                                                     const Tensor4d& weights) {
  const char* function = "scaled_dot_product_attention_backward";
  check_attention(function, query, key, value);
  same_shape(function, "grad_output", grad_output, "query", query);
  const std::size_t B = query.shape(0), H = query.shape(1), Tq = query.shape(2),
                    Dh = query.shape(3), Tk = key.shape(2);
  check_shape(where(function), "weights", weights, {long(B), long(H), long(Tq), long(Tk)},
              "[B, H, Tq, Tk] = " + shape_str(std::vector<std::size_t>{B, H, Tq, Tk}));
  const double scale = 1.0 / std::sqrt(double(Dh));
  AttentionGrads g{xt::zeros<double>(query.shape()), xt::zeros<double>(key.shape()),
                   xt::zeros<double>(value.shape())};
  std::vector<double> dp(Tk);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < Tq; ++i) {
        // 3. O_i = Σ_j P_ij V_j:  dP_ij = dO_i · V_j   and   dV_j += P_ij dO_i
        for (std::size_t j = 0; j < Tk; ++j) {
          dp[j] = 0.0;
          for (std::size_t e = 0; e < Dh; ++e) {
            dp[j] += grad_output(b, h, i, e) * value(b, h, j, e);
            g.value(b, h, j, e) += weights(b, h, i, j) * grad_output(b, h, i, e);
          }
        }
        // 2. Softmax backward: dS_ij = P_ij (dP_ij - Σ_j' P_ij' dP_ij'). Masked keys have
        //    P = 0: no gradient reaches them.
        double dot = 0.0;
        for (std::size_t j = 0; j < Tk; ++j) dot += weights(b, h, i, j) * dp[j];
        // 1. S_ij = Q_i · K_j · scale:  dQ_i += dS_ij K_j scale   and   dK_j += dS_ij Q_i scale
        for (std::size_t j = 0; j < Tk; ++j) {
          const double ds = weights(b, h, i, j) * (dp[j] - dot);
          for (std::size_t e = 0; e < Dh; ++e) {
            g.query(b, h, i, e) += ds * key(b, h, j, e) * scale;
            g.key(b, h, j, e) += ds * query(b, h, i, e) * scale;
          }
        }
      }
  return g;
}

// ---- 6. positions -------------------------------------------------------------------------

// The one place for the frequency the sinusoidal encoding and RoPE share.
double pair_frequency(std::size_t i, std::size_t width) {
  return std::pow(10000.0, -2.0 * double(i) / double(width));
}

// returns [num_positions, d_model]
Tensor2d sinusoidal_encoding(std::size_t num_positions, std::size_t d_model, std::size_t offset) {
  check_config(d_model > 0 && d_model % 2 == 0, where("sinusoidal_encoding"),
               "d_model (" + num(d_model) + ") must be even and > 0");
  Tensor2d pe = Tensor2d::from_shape({num_positions, d_model});
  // The formula is encoder_layer.cpp's sinusoidal_position: one place for it.
  for (std::size_t t = 0; t < num_positions; ++t)
    for (std::size_t j = 0; j < d_model; ++j)
      pe(t, j) = sinusoidal_position(offset + t, j, d_model);
  return pe;
}

namespace {
// Pair (2i, 2i+1) of every row t turned by sign · positions[t] · θ_i, θ_i = 10000^(−2i/Dh):
//     [y_2i  ]   [cos a  −sin a] [x_2i  ]
//     [y_2i+1] = [sin a   cos a] [x_2i+1]
Tensor2d rotate_pairs(const char* function, const Tensor2d& x, const std::vector<double>& positions,
                      double sign) {
  const std::size_t T = x.shape(0), Dh = x.shape(1);
  check_config(Dh > 0 && Dh % 2 == 0, where(function),
               "the head width Dh (" + num(Dh) + ") must be even and > 0");
  if (positions.size() != T)
    throw shape_error(where(function) + ": positions has " + num(positions.size()) +
                      " values, expected T = " + num(T) + " (x has shape " + shape_str(x.shape()) +
                      ")");
  Tensor2d y = Tensor2d::from_shape({T, Dh});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t i = 0; i < Dh / 2; ++i) {
      const double a = sign * positions[t] * pair_frequency(i, Dh);
      const double x0 = x(t, 2 * i), x1 = x(t, 2 * i + 1);
      y(t, 2 * i) = x0 * std::cos(a) - x1 * std::sin(a);
      y(t, 2 * i + 1) = x0 * std::sin(a) + x1 * std::cos(a);
    }
  return y;
}
}  // namespace

// x, y: [T, Dh]
Tensor2d rope_forward(const Tensor2d& x, const std::vector<double>& positions) {
  return rotate_pairs("rope_forward", x, positions, 1.0);
}

// grad_y, dx: [T, Dh]
Tensor2d rope_backward(const Tensor2d& grad_y, const std::vector<double>& positions) {
  // y = R(p) x with R(p) orthogonal, so dx = R(p)ᵀ dy = R(−p) dy.
  return rotate_pairs("rope_backward", grad_y, positions, -1.0);
}

std::vector<double> alibi_slopes(std::size_t H) {
  check_config(H > 0, where("alibi_slopes"), "num_heads must be > 0");
  // n: the largest power of two <= H. Its n slopes are 2^(−8·1/n), 2^(−8·2/n), ..., 2^(−8).
  std::size_t n = 1;
  while (2 * n <= H) n *= 2;
  std::vector<double> m;
  for (std::size_t h = 1; h <= n; ++h) m.push_back(std::pow(2.0, -8.0 * double(h) / double(n)));
  // The other H − n heads take every other slope of the sequence for 2n heads, starting at the
  // first: 2^(−8·1/(2n)), 2^(−8·3/(2n)), ... (they fall between the slopes above).
  for (std::size_t j = 0; m.size() < H; ++j)
    m.push_back(std::pow(2.0, -8.0 * double(2 * j + 1) / double(2 * n)));
  return m;
}

// returns [Tq, Tk]
Tensor2d alibi_bias(double slope, std::size_t Tq, std::size_t Tk) {
  Tensor2d bias = Tensor2d::from_shape({Tq, Tk});
  // The further key j is from query i, the lower the score: a linear penalty, no embedding.
  for (std::size_t i = 0; i < Tq; ++i)
    for (std::size_t j = 0; j < Tk; ++j) bias(i, j) = -slope * std::fabs(double(i) - double(j));
  return bias;
}

// ---- 7. the online softmax: one tile of keys ------------------------------------------------

// state: m, l [Tq], acc [Tq, Dv]   scores: [Tq, Tk]   values: [Tk, Dv]
OnlineSoftmaxState online_softmax_tile(const OnlineSoftmaxState& state, const Tensor2d& scores,
                                       const Tensor2d& values) {
  const std::size_t Tq = scores.shape(0), Tk = scores.shape(1), Dv = values.shape(1);
  check_shape(where("online_softmax_tile"), "values", values, {long(Tk), any_dim},
              "[Tk, Dv] with Tk = " + num(Tk) + " (scores' columns)");
  check_shape(where("online_softmax_tile"), "state.m", state.m, {long(Tq)},
              "[Tq] with Tq = " + num(Tq));
  check_shape(where("online_softmax_tile"), "state.l", state.l, {long(Tq)},
              "[Tq] with Tq = " + num(Tq));
  check_shape(where("online_softmax_tile"), "state.acc", state.acc, {long(Tq), long(Dv)},
              "[Tq, Dv] with Tq = " + num(Tq) + ", Dv = " + num(Dv));
  OnlineSoftmaxState next = state;
  for (std::size_t r = 0; r < Tq; ++r) {
    // 1. the new running maximum, over the old one and this tile's scores
    double m = state.m(r);
    for (std::size_t j = 0; j < Tk; ++j) m = std::max(m, scores(r, j));
    if (m == -kInf) continue;  // every key so far masked: nothing to add, nothing to rescale
    // 2. the old terms move from base m_old to base m (c = 0 when nothing was seen: l = acc = 0)
    const double c = std::exp(state.m(r) - m);
    next.l(r) = c * state.l(r);
    for (std::size_t e = 0; e < Dv; ++e) next.acc(r, e) = c * state.acc(r, e);
    // 3. the tile's own terms, in the same base
    for (std::size_t j = 0; j < Tk; ++j) {
      const double p = std::exp(scores(r, j) - m);
      next.l(r) += p;
      for (std::size_t e = 0; e < Dv; ++e) next.acc(r, e) += p * values(j, e);
    }
    next.m(r) = m;
  }
  return next;
}

// ---- 8. relative positions (Transformer-XL) -------------------------------------------------

namespace {
void check_shift(const char* function, const char* arg, const Tensor2d& z, std::size_t cols) {
  check_shape(where(function), arg, z, {any_dim, long(cols)},
              "[T, " + num(cols) + "] with T = " + num(z.shape(0)));
}

// One head's slice [T, Dh] of a [B, H, T, Dh] tensor, as a [1, 1, T, Dh] tensor.
Tensor4d head_of(const Tensor4d& x, std::size_t b, std::size_t h) {
  const std::size_t T = x.shape(2), Dh = x.shape(3);
  Tensor4d y = Tensor4d::from_shape({1, 1, T, Dh});
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t e = 0; e < Dh; ++e) y(0, 0, t, e) = x(b, h, t, e);
  return y;
}

// What both directions need: R [2T−1, D] (PE at the distances) and r = R W_Rᵀ.
struct RelativeKeys {
  Tensor2d R, r;
};
RelativeKeys relative_keys(const char* function, const RelativeTerms& terms, std::size_t H,
                           std::size_t T, std::size_t Dh) {
  const std::size_t D = H * Dh;
  check_shape(where(function), "content_bias", terms.content_bias, {long(H), long(Dh)},
              "[H, Dh] = [" + num(H) + ", " + num(Dh) + "]");
  check_shape(where(function), "position_bias", terms.position_bias, {long(H), long(Dh)},
              "[H, Dh] = [" + num(H) + ", " + num(Dh) + "]");
  check_shape(where(function), "position_weight", terms.position_weight, {long(D), long(D)},
              "[D, D] with D = " + num(D));
  if (terms.distances.size() != 2 * T - 1)
    throw shape_error(where(function) + ": distances has " + num(terms.distances.size()) +
                      " values, expected 2T − 1 = " + num(2 * T - 1));
  RelativeKeys k{Tensor2d::from_shape({2 * T - 1, D}), {}};
  for (std::size_t m = 0; m < 2 * T - 1; ++m)
    for (std::size_t c = 0; c < D; ++c) k.R(m, c) = sinusoidal_position(terms.distances[m], c, D);
  k.r = matmul(k.R, Tensor2d(xt::transpose(terms.position_weight)));
  return k;
}

// z = (Q_h + v_h) r_hᵀ: [T, 2T−1], the position term before the shift.
Tensor2d position_logits(const Tensor4d& q1, const Tensor2d& position_bias, const Tensor2d& r,
                         std::size_t h) {
  const std::size_t T = q1.shape(2), Dh = q1.shape(3);
  Tensor2d z = xt::zeros<double>({T, 2 * T - 1});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t m = 0; m < 2 * T - 1; ++m)
      for (std::size_t e = 0; e < Dh; ++e)
        z(i, m) += (q1(0, 0, i, e) + position_bias(h, e)) * r(m, h * Dh + e);
  return z;
}
}  // namespace

// z: [T, 2T−1] -> [T, T]
Tensor2d relative_shift(const Tensor2d& z) {
  const std::size_t T = z.shape(0);
  check_shift("relative_shift", "z", z, 2 * T - 1);
  Tensor2d out = Tensor2d::from_shape({T, T});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) out(i, j) = z(i, T - 1 - i + j);
  return out;
}

// grad: [T, T] -> [T, 2T−1]
Tensor2d relative_shift_backward(const Tensor2d& grad) {
  const std::size_t T = grad.shape(0);
  check_shift("relative_shift_backward", "grad", grad, T);
  Tensor2d dz = xt::zeros<double>({T, 2 * T - 1});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) dz(i, T - 1 - i + j) = grad(i, j);
  return dz;
}

// query, key, value: [B, H, T, Dh]
AttentionResult relative_attention_forward(const Tensor4d& query, const Tensor4d& key,
                                           const Tensor4d& value, const RelativeTerms& terms,
                                           const Mask2& key_padding_mask) {
  const char* function = "relative_attention_forward";
  check_attention(function, query, key, value);
  const std::size_t B = query.shape(0), H = query.shape(1), T = query.shape(2), Dh = query.shape(3);
  check_shape(where(function), "key", key, {long(B), long(H), long(T), long(Dh)},
              "query's shape (self-attention)");
  const RelativeKeys rk = relative_keys(function, terms, H, T, Dh);
  const double scale = 1.0 / std::sqrt(double(Dh));
  AttentionResult out{Tensor4d::from_shape({B, H, T, Dh}), Tensor4d::from_shape({B, H, T, T})};
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      // 1. The content query q + u, and the position term shift((q + v) rᵀ) / √Dh as a mask
      Tensor4d q1 = head_of(query, b, h), qu = q1;
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t e = 0; e < Dh; ++e) qu(0, 0, i, e) += terms.content_bias(h, e);
      const Tensor2d bias =
          relative_shift(position_logits(q1, terms.position_bias, rk.r, h)) * scale;
      Mask2 padding;
      if (key_padding_mask.size() != 0) {
        padding = Mask2::from_shape({1, T});
        for (std::size_t j = 0; j < T; ++j) padding(0, j) = key_padding_mask(b, j);
      }
      // 2. softmax((q + u) kᵀ / √Dh + bias) v
      const AttentionResult a = scaled_dot_product_attention_forward(
          qu, head_of(key, b, h), head_of(value, b, h), padding, bias);
      for (std::size_t i = 0; i < T; ++i) {
        for (std::size_t e = 0; e < Dh; ++e) out.output(b, h, i, e) = a.output(0, 0, i, e);
        for (std::size_t j = 0; j < T; ++j) out.weights(b, h, i, j) = a.weights(0, 0, i, j);
      }
    }
  return out;
}

// grad_output: [B, H, T, Dh]   weights: [B, H, T, T]
RelativeAttentionGrads relative_attention_backward(const Tensor4d& grad_output,
                                                   const Tensor4d& query, const Tensor4d& key,
                                                   const Tensor4d& value,
                                                   const RelativeTerms& terms,
                                                   const Tensor4d& weights) {
  const char* function = "relative_attention_backward";
  check_attention(function, query, key, value);
  same_shape(function, "grad_output", grad_output, "query", query);
  const std::size_t B = query.shape(0), H = query.shape(1), T = query.shape(2), Dh = query.shape(3),
                    D = H * Dh;
  check_shape(where(function), "weights", weights, {long(B), long(H), long(T), long(T)},
              "[B, H, T, T]");
  const RelativeKeys rk = relative_keys(function, terms, H, T, Dh);
  const double scale = 1.0 / std::sqrt(double(Dh));
  RelativeAttentionGrads g{xt::zeros<double>(query.shape()), xt::zeros<double>(query.shape()),
                           xt::zeros<double>(query.shape()), xt::zeros<double>({H, Dh}),
                           xt::zeros<double>({H, Dh}),       {}};
  Tensor2d dr = xt::zeros<double>({2 * T - 1, D});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      Tensor4d q1 = head_of(query, b, h), qu = q1, p1 = Tensor4d::from_shape({1, 1, T, T});
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t e = 0; e < Dh; ++e) qu(0, 0, i, e) += terms.content_bias(h, e);
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = 0; j < T; ++j) p1(0, 0, i, j) = weights(b, h, i, j);
      const Tensor4d do1 = head_of(grad_output, b, h), v1 = head_of(value, b, h);
      // 2'. The content part through the plain attention backward: d(q + u), dk, dv
      const AttentionGrads a =
          scaled_dot_product_attention_backward(do1, qu, head_of(key, b, h), v1, p1);
      // The additive mask's gradient is dS = softmax'(dO vᵀ); the mask is shift(z)·scale.
      const Tensor2d dS =
          softmax_backward(matmul(rows_of(do1), Tensor2d(xt::transpose(rows_of(v1)))), rows_of(p1));
      const Tensor2d dz = relative_shift_backward(dS) * scale;
      // 1'. z = (q + v) rᵀ: dq += dz r, dv += Σ_i (dz r)_i, dr += dzᵀ (q + v); u gets Σ_i d(q + u)
      Tensor2d r_h = Tensor2d::from_shape({2 * T - 1, Dh});  // head h's columns of r
      for (std::size_t m = 0; m < 2 * T - 1; ++m)
        for (std::size_t e = 0; e < Dh; ++e) r_h(m, e) = rk.r(m, h * Dh + e);
      const Tensor2d dz_r = matmul(dz, r_h);
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t e = 0; e < Dh; ++e) {
          g.query(b, h, i, e) += a.query(0, 0, i, e) + dz_r(i, e);
          g.content_bias(h, e) += a.query(0, 0, i, e);
          g.position_bias(h, e) += dz_r(i, e);
          g.key(b, h, i, e) = a.key(0, 0, i, e);
          g.value(b, h, i, e) = a.value(0, 0, i, e);
          for (std::size_t m = 0; m < 2 * T - 1; ++m)
            dr(m, h * Dh + e) += dz(i, m) * (q1(0, 0, i, e) + terms.position_bias(h, e));
        }
    }
  // r = R W_Rᵀ: dW_R = drᵀ R
  g.position_weight = matmul(Tensor2d(xt::transpose(dr)), rk.R);
  return g;
}

}  // namespace xenc::reference
