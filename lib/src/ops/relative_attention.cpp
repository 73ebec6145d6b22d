// Transformer-XL's relative attention (ops/relative_attention.hpp has the equation), head by
// head: the content term, the position term through the relative shift, the masks, the softmax,
// P V. The backward walks the same steps back. Plain loops over one head at a time.
#include "xenc/ops/relative_attention.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "xenc/core/error.hpp"
#include "xenc/ops/gemm.hpp"
#include "xenc/ops/positional.hpp"
#include "xenc/ops/softmax.hpp"

namespace xenc {

std::vector<double> relative_distances(std::size_t T) {
  std::vector<double> d;
  for (std::size_t m = 0; m + 1 < 2 * T; ++m) d.push_back(double(T) - 1.0 - double(m));
  return d;
}

Tensor2 relative_sinusoids(const std::vector<double>& distances, std::size_t d_model) {
  Tensor2 R = Tensor2::from_shape({distances.size(), d_model});
  for (std::size_t m = 0; m < distances.size(); ++m)
    for (std::size_t c = 0; c < d_model; ++c)
      R(m, c) = float(sinusoidal_value(distances[m], c, d_model));
  return R;
}

namespace {
void check_shift_input(const char* where, const char* arg, const Tensor2& z, std::size_t T,
                       std::size_t cols) {
  if (z.shape(1) != cols)
    throw shape_error(std::string(where) + ": " + arg + " has shape " + shape_str(z.shape()) +
                      ", expected [" + std::to_string(T) + ", " + std::to_string(cols) + "]");
}
}  // namespace

Tensor2 relative_shift(const Tensor2& z) {
  const std::size_t T = z.shape(0);
  check_shift_input("relative_shift", "z", z, T, 2 * T - 1);
  // Row i keeps the window of T columns that starts at T − 1 − i: column j of the result is
  // distance δ = T − 1 − (T − 1 − i + j) = i − j.
  Tensor2 out = Tensor2::from_shape({T, T});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) out(i, j) = z(i, T - 1 - i + j);
  return out;
}

Tensor2 relative_shift_backward(const Tensor2& grad) {
  const std::size_t T = grad.shape(0);
  check_shift_input("relative_shift_backward", "grad", grad, T, T);
  // Each entry of z is read at most once: its gradient is the one entry that read it, else 0.
  Tensor2 dz = xt::zeros<float>({T, 2 * T - 1});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) dz(i, T - 1 - i + j) = grad(i, j);
  return dz;
}

namespace {
void check_inputs(const char* where, const Tensor3& q, const Tensor3& k, const Tensor3& v,
                  std::size_t H, const RelativeAttentionParameters& p) {
  const std::size_t B = q.shape(0), T = q.shape(1), D = q.shape(2);
  check_config(
      H > 0 && D % H == 0, where,
      "d_model (" + std::to_string(D) + ") must be divisible by nhead (" + std::to_string(H) + ")");
  const std::string bsd = "[B, T, D] = " + shape_str(q.shape()) + " (q; self-attention)";
  check_shape(where, "k", k, {long(B), long(T), long(D)}, bsd);
  check_shape(where, "v", v, {long(B), long(T), long(D)}, bsd);
  const std::string hd = "[H, Dh] = [" + std::to_string(H) + ", " + std::to_string(D / H) + "]";
  check_shape(where, "content_bias", p.content_bias, {long(H), long(D / H)}, hd);
  check_shape(where, "position_bias", p.position_bias, {long(H), long(D / H)}, hd);
  check_shape(where, "position_weight", p.position_weight, {long(D), long(D)},
              "[D, D] with D = " + std::to_string(D));
}
}  // namespace

RelativeAttentionResult relative_attention_forward(const Tensor3& q, const Tensor3& k,
                                                   const Tensor3& v, const AttentionInputs& in,
                                                   const RelativeAttentionParameters& p,
                                                   const Tensor2& sinusoids) {
  const char* where = "relative_attention_forward";
  const std::size_t H = in.num_heads;
  check_inputs(where, q, k, v, H, p);
  const std::size_t B = q.shape(0), T = q.shape(1), D = q.shape(2), Dh = D / H;
  check_shape(where, "sinusoids", sinusoids, {long(2 * T - 1), long(D)},
              "[2T − 1, D] with T = " + std::to_string(T) + ", D = " + std::to_string(D));
  if (in.key_padding_mask.size() != 0)
    check_shape(where, "key_padding_mask", in.key_padding_mask, {long(B), long(T)},
                "[B, T] = [" + std::to_string(B) + ", " + std::to_string(T) + "]");
  if (in.attn_mask.size() != 0)
    check_shape(where, "attn_mask", in.attn_mask, {long(T), long(T)},
                "[T, T] with T = " + std::to_string(T));
  if (in.dropout_mask.size() != 0)
    check_shape(where, "dropout_mask", in.dropout_mask, {long(B), long(H), long(T), long(T)},
                "[B, H, T, T]");
  const float scale = 1.0f / std::sqrt(float(Dh));  // scalar
  const float neg_inf = -std::numeric_limits<float>::infinity();

  RelativeAttentionResult res;
  RelativeAttentionSaved& s = res.saved;
  s.sinusoids = sinusoids;
  // 1. The relative keys r = R W_Rᵀ: [2T−1, D] x [D, D] -> [2T−1, D] (head h: its Dh columns)
  s.r = matmul(sinusoids, Tensor2(xt::transpose(p.position_weight)));
  s.probs = Tensor4::from_shape({B, H, T, T});
  s.dropout_mask = in.dropout_mask;
  res.output = xt::zeros<float>({B, T, D});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t c0 = h * Dh;
      // 2. Content term (q_i + u)·k_j [T, T] and Z = (q + v) rᵀ [T, 2T−1]
      Tensor2 scores = Tensor2::from_shape({T, T}), z = Tensor2::from_shape({T, 2 * T - 1});
      for (std::size_t i = 0; i < T; ++i) {
        for (std::size_t j = 0; j < T; ++j) {
          float a = 0.0f;
          for (std::size_t e = 0; e < Dh; ++e)
            a += (q(b, i, c0 + e) + p.content_bias(h, e)) * k(b, j, c0 + e);
          scores(i, j) = a;
        }
        for (std::size_t m = 0; m < 2 * T - 1; ++m) {
          float a = 0.0f;
          for (std::size_t e = 0; e < Dh; ++e)
            a += (q(b, i, c0 + e) + p.position_bias(h, e)) * s.r(m, c0 + e);
          z(i, m) = a;
        }
      }
      // 3. Position term by the relative shift; scale; masks (a padded key gets −inf)
      const Tensor2 position = relative_shift(z);
      std::vector<bool> all_masked(T, true);
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = 0; j < T; ++j) {
          float sc = (scores(i, j) + position(i, j)) * scale;
          if (in.attn_mask.size() != 0) sc += in.attn_mask(i, j);
          if (in.key_padding_mask.size() != 0 && in.key_padding_mask(b, j)) sc = neg_inf;
          if (sc != neg_inf) all_masked[i] = false;
          scores(i, j) = sc;
        }
      // 4. P = softmax(S) by rows; a query whose every key is masked attends to nothing
      for (std::size_t i = 0; i < T; ++i)
        if (all_masked[i])
          for (std::size_t j = 0; j < T; ++j) scores(i, j) = 0.0f;
      Tensor2 P = softmax_forward<2>(scores);
      for (std::size_t i = 0; i < T; ++i)
        if (all_masked[i])
          for (std::size_t j = 0; j < T; ++j) P(i, j) = 0.0f;
      // 5. O = (P ⊙ dropout) v   [T, T] x [T, Dh]
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = 0; j < T; ++j) {
          s.probs(b, h, i, j) = P(i, j);
          const float w =
              in.dropout_mask.size() != 0 ? P(i, j) * in.dropout_mask(b, h, i, j) : P(i, j);
          for (std::size_t e = 0; e < Dh; ++e) res.output(b, i, c0 + e) += w * v(b, j, c0 + e);
        }
    }
  s.valid = true;
  return res;
}

RelativeAttentionGrads relative_attention_backward(const Tensor3& grad_output, const Tensor3& q,
                                                   const Tensor3& k, const Tensor3& v,
                                                   const RelativeAttentionSaved& saved,
                                                   const RelativeAttentionParameters& p,
                                                   std::size_t num_heads) {
  const char* where = "relative_attention_backward";
  const std::size_t H = num_heads;
  check_inputs(where, q, k, v, H, p);
  if (!saved.valid) throw std::logic_error(std::string(where) + ": no saved forward state");
  check_shape(where, "grad_output", grad_output,
              {long(q.shape(0)), long(q.shape(1)), long(q.shape(2))},
              "[B, T, D] = " + shape_str(q.shape()));
  const std::size_t B = q.shape(0), T = q.shape(1), D = q.shape(2), Dh = D / H;
  const float scale = 1.0f / std::sqrt(float(Dh));  // scalar
  const bool dropped = saved.dropout_mask.size() != 0;

  RelativeAttentionGrads g;
  g.q = xt::zeros<float>({B, T, D});
  g.k = xt::zeros<float>({B, T, D});
  g.v = xt::zeros<float>({B, T, D});
  g.content_bias = xt::zeros<float>({H, Dh});
  g.position_bias = xt::zeros<float>({H, Dh});
  Tensor2 dr = xt::zeros<float>({2 * T - 1, D});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t c0 = h * Dh;
      Tensor2 P = Tensor2::from_shape({T, T}), dP = Tensor2::from_shape({T, T});
      // 5'. dv_j += Σ_i (P ⊙ drop)[i, j] dO_i;  dP = (dO vᵀ) ⊙ drop
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = 0; j < T; ++j) {
          P(i, j) = saved.probs(b, h, i, j);
          const float f = dropped ? saved.dropout_mask(b, h, i, j) : 1.0f;
          float a = 0.0f;
          for (std::size_t e = 0; e < Dh; ++e) {
            a += grad_output(b, i, c0 + e) * v(b, j, c0 + e);
            g.v(b, j, c0 + e) += P(i, j) * f * grad_output(b, i, c0 + e);
          }
          dP(i, j) = a * f;
        }
      // 4'. dS = P ⊙ (dP − rowsum(dP ⊙ P)), times the 1/√Dh of step 3 (masks are constants)
      Tensor2 dS = softmax_backward<2>(dP, P);
      dS *= scale;
      // 3'. Back through the shift: dZ [T, 2T−1]
      const Tensor2 dz = relative_shift_backward(dS);
      // 2'. Content term: dq_i += Σ_j dS[i, j] k_j, dk_j += Σ_i dS[i, j] (q_i + u), du = Σ_i dq_i
      //     Position term: dq_i += Σ_m dZ[i, m] r_m, dr_m += Σ_i dZ[i, m] (q_i + v), dv = Σ_i
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t e = 0; e < Dh; ++e) {
          const std::size_t c = c0 + e;
          float dq_content = 0.0f, dq_position = 0.0f;
          for (std::size_t j = 0; j < T; ++j) {
            dq_content += dS(i, j) * k(b, j, c);
            g.k(b, j, c) += dS(i, j) * (q(b, i, c) + p.content_bias(h, e));
          }
          for (std::size_t m = 0; m < 2 * T - 1; ++m) {
            dq_position += dz(i, m) * saved.r(m, c);
            dr(m, c) += dz(i, m) * (q(b, i, c) + p.position_bias(h, e));
          }
          g.q(b, i, c) += dq_content + dq_position;
          g.content_bias(h, e) += dq_content;
          g.position_bias(h, e) += dq_position;
        }
    }
  // 1'. r = R W_Rᵀ: dW_R = drᵀ R   [D, 2T−1] x [2T−1, D]
  g.position_weight = matmul(Tensor2(xt::transpose(dr)), saved.sinusoids);
  return g;
}

void relative_attention_accumulate(RelativeAttentionParameters& p,
                                   const RelativeAttentionGrads& g) {
  auto add = [](Tensor2& grad, const Tensor2& value, const Tensor2& d) {
    if (grad.shape() != value.shape()) grad = xt::zeros<float>(value.shape());
    grad += d;
  };
  add(p.content_bias_grad, p.content_bias, g.content_bias);
  add(p.position_bias_grad, p.position_bias, g.position_bias);
  add(p.position_weight_grad, p.position_weight, g.position_weight);
}

}  // namespace xenc
