// Transformer-XL's relative attention (ops/relative_attention.hpp has the equation), head by
// head: the content term, the position term through the relative shift, the masks, the softmax,
// P V, each head two GEMMs more than plain attention (kernels/relative.cpp, where the shift is a
// strided view). relative_shift and its backward below are the readable copies, for the tests
// and the exercise. The backward walks the same steps back.
#include "xenc/ops/relative_attention.hpp"

#include <string>

#include <xtensor/xnoalias.hpp>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"
#include "xenc/ops/gemm.hpp"
#include "xenc/ops/positional.hpp"

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

namespace {
// q + b, b [H, Dh] added to every row's head columns (c = h·Dh + e): q + u and q + v
Tensor3 add_head_bias(const Tensor3& q, const Tensor2& bias) {
  Tensor3 out = Tensor3::from_shape(q.shape());
  kernels::add_row(kernels::as_matrix(q), kernels::as_vector(bias), kernels::as_matrix(out));
  return out;
}
// Head h of a [B, T, D] tensor in batch b: its [T, Dh] column slice
template <class Tensor>
auto head_of(Tensor& t, std::size_t b, std::size_t h, std::size_t Dh) {
  return kernels::as_matrix(t).block(b * t.shape(1), h * Dh, t.shape(1), Dh);
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

  RelativeAttentionResult res;
  RelativeAttentionSaved& s = res.saved;
  s.sinusoids = sinusoids;
  // 1. The relative keys r = R W_Rᵀ: [2T−1, D] x [D, D] -> [2T−1, D] (head h: its Dh columns)
  s.r = matmul(sinusoids, Tensor2(xt::transpose(p.position_weight)));
  s.probs = Tensor4::from_shape({B, H, T, T});
  s.dropout_mask = in.dropout_mask;
  res.output = Tensor3::from_shape({B, T, D});
  // 2. The queries with the content bias u and with the position bias v
  const Tensor3 qu = add_head_bias(q, p.content_bias), qv = add_head_bias(q, p.position_bias);
  Tensor2 z = Tensor2::from_shape({T, 2 * T - 1}), scratch = Tensor2::from_shape({T, T});
  const kernels::ConstMatView mask =
      in.attn_mask.size() ? kernels::as_matrix(in.attn_mask) : kernels::ConstMatView{};
  // 3. Per head (kernels/relative.cpp): Z = (q + v) rᵀ, its relative shift added to the content
  //    scores (q + u) kᵀ, scaled, masked (a padded key gets −inf), softmax, (P ⊙ dropout) v
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      const kernels::ScoreTerms terms{
          kernels::attention_scale(Dh), kernels::row_of(in.key_padding_mask, b), mask, {}};
      kernels::relative_attention_head_forward(
          {head_of(qu, b, h, Dh), head_of(qv, b, h, Dh), head_of(k, b, h, Dh), head_of(v, b, h, Dh),
           kernels::as_matrix(s.r).block(0, h * Dh, 2 * T - 1, Dh)},
          terms, kernels::as_matrix(z), kernels::as_matrix(s.probs, b, h),
          in.dropout_mask.size() ? kernels::as_matrix(in.dropout_mask, b, h)
                                 : kernels::ConstMatView{},
          kernels::as_matrix(scratch), head_of(res.output, b, h, Dh));
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
  const bool dropped = saved.dropout_mask.size() != 0;

  const Tensor3 qu = add_head_bias(q, p.content_bias), qv = add_head_bias(q, p.position_bias);
  Tensor3 dqu = Tensor3::from_shape({B, T, D}), dqv = Tensor3::from_shape({B, T, D});
  RelativeAttentionGrads g;
  g.k = Tensor3::from_shape({B, T, D});
  g.v = Tensor3::from_shape({B, T, D});
  Tensor2 dr = xt::zeros<float>({2 * T - 1, D});
  Tensor2 dz = Tensor2::from_shape({T, 2 * T - 1}), scratch = Tensor2::from_shape({T, T});
  // Per head (kernels/relative.cpp): dv, dS through the softmax; the content term gives
  // d(q + u) and dk, the position term, back through the shift, d(q + v) and dr
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h) {
      const kernels::MatView dr_h = kernels::as_matrix(dr).block(0, h * Dh, 2 * T - 1, Dh);
      kernels::relative_attention_head_backward(
          {head_of(qu, b, h, Dh), head_of(qv, b, h, Dh), head_of(k, b, h, Dh), head_of(v, b, h, Dh),
           kernels::as_matrix(saved.r).block(0, h * Dh, 2 * T - 1, Dh)},
          kernels::attention_scale(Dh), kernels::as_matrix(saved.probs, b, h),
          dropped ? kernels::as_matrix(saved.dropout_mask, b, h) : kernels::ConstMatView{},
          head_of(grad_output, b, h, Dh), kernels::as_matrix(scratch), kernels::as_matrix(dz),
          {head_of(dqu, b, h, Dh), head_of(g.k, b, h, Dh), head_of(g.v, b, h, Dh),
           head_of(dqv, b, h, Dh), dr_h});
    }
  // q enters through both q + u and q + v; u and v through every row (their column sums)
  g.q = dqu + dqv;
  g.content_bias = Tensor2::from_shape({H, Dh});
  g.position_bias = Tensor2::from_shape({H, Dh});
  kernels::column_sums(kernels::as_matrix(dqu), kernels::as_vector(g.content_bias), false);
  kernels::column_sums(kernels::as_matrix(dqv), kernels::as_vector(g.position_bias), false);
  // 1'. r = R W_Rᵀ: dW_R = drᵀ R   [D, 2T−1] x [2T−1, D]
  g.position_weight = matmul(Tensor2(xt::transpose(dr)), saved.sinusoids);
  return g;
}

void relative_attention_accumulate(RelativeAttentionParameters& p,
                                   const RelativeAttentionGrads& g) {
  auto add = [](Tensor2& grad, const Tensor2& value, const Tensor2& d) {
    if (grad.shape() != value.shape()) grad = xt::zeros<float>(value.shape());
    xt::noalias(grad) += d;
  };
  add(p.content_bias_grad, p.content_bias, g.content_bias);
  add(p.position_bias_grad, p.position_bias, g.position_bias);
  add(p.position_weight_grad, p.position_weight, g.position_weight);
}

}  // namespace xenc
