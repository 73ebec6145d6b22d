// Position schemes: none, sinusoidal (fixed), learned (a trained table), rope and alibi
// (inside attention).
#include "xenc/nn/position.hpp"

#include <string>

#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/ops/positional.hpp"

namespace xenc {

const std::vector<PositionKind>& all_position_kinds() {
  static const std::vector<PositionKind> kinds = {PositionKind::none, PositionKind::sinusoidal,
                                                  PositionKind::learned, PositionKind::rope,
                                                  PositionKind::alibi};
  return kinds;
}

PositionKind parse_position_kind(const std::string& name) {
  if (name == "none") return PositionKind::none;
  if (name == "sinusoidal") return PositionKind::sinusoidal;
  if (name == "learned") return PositionKind::learned;
  if (name == "rope") return PositionKind::rope;
  if (name == "alibi") return PositionKind::alibi;
  throw config_error("parse_position_kind: position is \"" + name +
                     "\", expected \"none\", \"sinusoidal\", \"learned\", \"rope\" or \"alibi\"");
}

std::string to_string(PositionKind kind) {
  switch (kind) {
    case PositionKind::none:
      return "none";
    case PositionKind::sinusoidal:
      return "sinusoidal";
    case PositionKind::learned:
      return "learned";
    case PositionKind::rope:
      return "rope";
    case PositionKind::alibi:
      return "alibi";
  }
  return "?";
}

namespace {
// y[b, t, :] = x[b, t, :] + table[t, :]   (the same row for every sentence in the batch)
Tensor3 add_rows(const Tensor3& x, const Tensor2& table) {
  const std::size_t B = x.shape(0), T = x.shape(1), D = x.shape(2);
  Tensor3 y = x;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t d = 0; d < D; ++d) y(b, t, d) += table(t, d);
  return y;
}
}  // namespace

SinusoidalPosition::SinusoidalPosition(std::size_t d_model) : d_model_(d_model) {
  check_config(d_model > 0 && d_model % 2 == 0, "SinusoidalPosition",
               "d_model is " + std::to_string(d_model) +
                   ", expected an even number > 0 (sin and cos fill dimension pairs (2i, 2i+1))");
}

Tensor3 SinusoidalPosition::forward(const Tensor3& x) {
  check_shape("SinusoidalPosition.forward", "x", x, {any_dim, any_dim, long(d_model_)},
              "[B, T, D] with D = " + std::to_string(d_model_));
  // The table has no maximum length: grow it when a longer sequence arrives.
  if (table_.shape(0) < x.shape(1)) table_ = sinusoidal_encoding(x.shape(1), d_model_);
  return add_rows(x, table_);
}

LearnedPosition::LearnedPosition(std::size_t max_len, std::size_t d_model, Rng& rng) {
  check_config(max_len > 0 && d_model > 0, "LearnedPosition",
               "max_len (" + std::to_string(max_len) + ") and d_model (" + std::to_string(d_model) +
                   ") must be > 0");
  weight = Tensor2::from_shape({max_len, d_model});
  fill_normal(weight, rng);
}

namespace {
// x (or its gradient) must be [B, T, D] with D = the table's width and T <= max_len.
void check_learned(const char* where, const char* arg, const Tensor3& x, const Tensor2& weight) {
  const std::size_t max_len = weight.shape(0), D = weight.shape(1);
  check_shape(where, arg, x, {any_dim, any_dim, long(D)},
              [&] { return "[B, T, D] with D = " + std::to_string(D); });
  if (x.shape(1) > max_len)
    throw shape_error(std::string(where) + ": " + arg + " has shape " + shape_str(x.shape()) +
                      ", expected [B, T, D] with T <= max_len = " + std::to_string(max_len));
}
}  // namespace

Tensor3 LearnedPosition::forward(const Tensor3& x) {
  check_learned("LearnedPosition.forward", "x", x, weight);
  return add_rows(x, weight);
}

Tensor3 LearnedPosition::backward(const Tensor3& grad_y) {
  check_learned("LearnedPosition.backward", "grad_y", grad_y, weight);
  // dweight[t] = Σ_b dy[b, t]; the input gradient passes through unchanged
  const std::size_t B = grad_y.shape(0), T = grad_y.shape(1), D = grad_y.shape(2);
  ensure_grad(weight_grad, weight);  // allocated by the first backward
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t d = 0; d < D; ++d) weight_grad(t, d) += grad_y(b, t, d);
  return grad_y;
}

void LearnedPosition::collect_parameters(const std::string& prefix, ParameterList& out) {
  out.push_back(make_parameter(join_name(prefix, "weight"), weight, weight_grad));
}

// RoPE: q and k rotated by R(t) before the scores; their gradients by R(t)ᵀ after the backward.
void RotaryPosition::Rotation::transform_qk(Tensor3& q, Tensor3& k, std::size_t num_heads) const {
  rope_forward(q, num_heads, pairing);
  rope_forward(k, num_heads, pairing);
}

void RotaryPosition::Rotation::transform_qk_backward(Tensor3& dq, Tensor3& dk,
                                                     std::size_t num_heads) const {
  rope_backward(dq, num_heads, pairing);
  rope_backward(dk, num_heads, pairing);
}

// ALiBi: head h's bias −m_h·|i − j|, the slopes from the number of heads.
Tensor2 ALiBiPosition::Bias::score_bias(std::size_t head, std::size_t num_heads, std::size_t Tq,
                                        std::size_t Tk) const {
  const std::vector<double> slopes = alibi_slopes(num_heads);
  if (head >= num_heads)
    throw config_error("ALiBiPosition.score_bias: head is " + std::to_string(head) +
                       ", expected < nhead = " + std::to_string(num_heads));
  return alibi_bias(slopes[head], Tq, Tk);
}

float ALiBiPosition::Bias::distance_bias_slope(std::size_t head, std::size_t num_heads) const {
  const std::vector<double> slopes = alibi_slopes(num_heads);
  if (head >= num_heads)
    throw config_error("ALiBiPosition.distance_bias_slope: head is " + std::to_string(head) +
                       ", expected < nhead = " + std::to_string(num_heads));
  return float(slopes[head]);
}

std::unique_ptr<PositionScheme> make_position_scheme(PositionKind kind, std::size_t d_model,
                                                     std::size_t max_len, Rng& rng) {
  switch (kind) {
    case PositionKind::none:
      return std::make_unique<NoPosition>();
    case PositionKind::sinusoidal:
      return std::make_unique<SinusoidalPosition>(d_model);
    case PositionKind::learned:
      return std::make_unique<LearnedPosition>(max_len, d_model, rng);
    case PositionKind::rope:
      return std::make_unique<RotaryPosition>();
    case PositionKind::alibi:
      return std::make_unique<ALiBiPosition>();
  }
  throw config_error("make_position_scheme: unknown position kind");
}

}  // namespace xenc
