// Position schemes: none, sinusoidal (fixed), learned (a trained table), rope and alibi
// (inside attention).
#include "xenc/nn/position.hpp"

#include <cmath>
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
  if (name == "relative") return PositionKind::relative;
  throw config_error("parse_position_kind: position is \"" + name +
                     "\", expected \"none\", \"sinusoidal\", \"learned\", \"rope\", "
                     "\"alibi\" or \"relative\"");
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
    case PositionKind::relative:
      return "relative";
  }
  return "?";
}

void PositionScheme::set_randomized(std::size_t max_len, std::uint32_t seed) {
  randomized_max_len_ = max_len;
  position_rng_ = Rng(seed);
}

std::vector<double> PositionScheme::draw_positions(std::size_t T) {
  return samples_positions() ? randomized_positions(T, randomized_max_len_, position_rng_)
                             : plain_positions(T);
}

std::vector<double> PositionScheme::draw_distances(std::size_t T) {
  if (!samples_positions()) return {};
  return randomized_distances(T, randomized_max_len_, position_rng_);
}

void NoPosition::set_randomized(std::size_t max_len, std::uint32_t) {
  check_config(max_len == 0, "NoPosition.set_randomized",
               "max_len is " + std::to_string(max_len) +
                   ", expected 0: the scheme none has no positions to randomize");
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
  if (samples_positions()) {
    // Randomized: row t is PE(p_t), the positions a sorted sample from [0, L)
    const std::vector<double> p = draw_positions(x.shape(1));
    Tensor2 rows = Tensor2::from_shape({p.size(), d_model_});
    for (std::size_t t = 0; t < p.size(); ++t)
      for (std::size_t c = 0; c < d_model_; ++c)
        rows(t, c) = float(sinusoidal_value(p[t], c, d_model_));
    return add_rows(x, rows);
  }
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

void LearnedPosition::set_randomized(std::size_t max_len, std::uint32_t seed) {
  check_config(max_len <= weight.shape(0), "LearnedPosition.set_randomized",
               "max_len is " + std::to_string(max_len) + ", expected <= the table's " +
                   std::to_string(weight.shape(0)) + " rows (positions are drawn from [0, " +
                   std::to_string(max_len) + "))");
  PositionScheme::set_randomized(max_len, seed);
}

Tensor3 LearnedPosition::forward(const Tensor3& x) {
  check_learned("LearnedPosition.forward", "x", x, weight);
  // Row t adds weight[p_t]: p_t = t, or a sorted sample from [0, L) (randomized, training)
  const std::vector<double> p = draw_positions(x.shape(1));
  // the backward needs the rows only when they were drawn; else row t is t, as without a forward
  if (samples_positions())
    rows_.assign(p.begin(), p.end());
  else
    rows_.clear();
  Tensor2 rows = Tensor2::from_shape({p.size(), weight.shape(1)});
  for (std::size_t t = 0; t < p.size(); ++t)
    for (std::size_t c = 0; c < weight.shape(1); ++c)
      rows(t, c) = weight(static_cast<std::size_t>(p[t]), c);
  return add_rows(x, rows);
}

Tensor3 LearnedPosition::backward(const Tensor3& grad_y) {
  check_learned("LearnedPosition.backward", "grad_y", grad_y, weight);
  // dweight[t] = Σ_b dy[b, t]; the input gradient passes through unchanged
  const std::size_t B = grad_y.shape(0), T = grad_y.shape(1), D = grad_y.shape(2);
  ensure_grad(weight_grad, weight);  // allocated by the first backward
  // randomized: the rows the last forward drew (the same T); else row t (check_learned: T <= L)
  if (!rows_.empty() && rows_.size() != T)
    throw std::logic_error("LearnedPosition.backward: grad_y has T = " + std::to_string(T) +
                           ", the last forward drew " + std::to_string(rows_.size()) +
                           " randomized positions");
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t) {
      const std::size_t row = rows_.empty() ? t : rows_[t];
      for (std::size_t d = 0; d < D; ++d) weight_grad(row, d) += grad_y(b, t, d);
    }
  return grad_y;
}

void LearnedPosition::collect_parameters(const std::string& prefix, ParameterList& out) {
  out.push_back(make_parameter(join_name(prefix, "weight"), weight, weight_grad));
}

// RoPE: q and k rotated by R(t) before the scores; their gradients by R(t)ᵀ after the backward.
// Randomized: R(p_t), the positions drawn by the scheme's forward.
Tensor3 RotaryPosition::forward(const Tensor3& x) {
  rotation_.positions = samples_positions() ? draw_positions(x.shape(1)) : std::vector<double>();
  return x;
}

void RotaryPosition::Rotation::transform_qk(Tensor3& q, Tensor3& k, std::size_t num_heads) const {
  if (!positions.empty()) {
    rope_forward_at(q, num_heads, positions, pairing);
    rope_forward_at(k, num_heads, positions, pairing);
    return;
  }
  rope_forward(q, num_heads, pairing);
  rope_forward(k, num_heads, pairing);
}

void RotaryPosition::Rotation::transform_qk_backward(Tensor3& dq, Tensor3& dk,
                                                     std::size_t num_heads) const {
  if (!positions.empty()) {
    rope_backward_at(dq, num_heads, positions, pairing);
    rope_backward_at(dk, num_heads, positions, pairing);
    return;
  }
  rope_backward(dq, num_heads, pairing);
  rope_backward(dk, num_heads, pairing);
}

// ALiBi: head h's bias −m_h·|i − j|, the slopes from the number of heads. Randomized: the
// distance |i − j| = n is s_n, drawn by the scheme's forward.
Tensor3 ALiBiPosition::forward(const Tensor3& x) {
  bias_.distances = draw_distances(x.shape(1));
  return x;
}

Tensor2 ALiBiPosition::Bias::score_bias(std::size_t head, std::size_t num_heads, std::size_t Tq,
                                        std::size_t Tk) const {
  const std::vector<double> slopes = alibi_slopes(num_heads);
  if (head >= num_heads)
    throw config_error("ALiBiPosition.score_bias: head is " + std::to_string(head) +
                       ", expected < nhead = " + std::to_string(num_heads));
  if (distances.empty()) return alibi_bias(slopes[head], Tq, Tk);
  const std::size_t T = (distances.size() + 1) / 2;
  if (Tq != T || Tk != T)
    throw shape_error("ALiBiPosition.score_bias: scores are [" + std::to_string(Tq) + ", " +
                      std::to_string(Tk) + "], expected [T, T] with T = " + std::to_string(T) +
                      " (the randomized distances of the last forward)");
  Tensor2 bias = Tensor2::from_shape({T, T});
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < T; ++j) {
      const double s = distances[T - 1 - i + j];  // sign(i − j)·s_|i−j|
      bias(i, j) = float(-slopes[head] * (s < 0 ? -s : s));
    }
  return bias;
}

float ALiBiPosition::Bias::distance_bias_slope(std::size_t head, std::size_t num_heads) const {
  if (!distances.empty()) return 0.0f;  // randomized: the kernel reads score_bias's tensor
  const std::vector<double> slopes = alibi_slopes(num_heads);
  if (head >= num_heads)
    throw config_error("ALiBiPosition.distance_bias_slope: head is " + std::to_string(head) +
                       ", expected < nhead = " + std::to_string(num_heads));
  return float(slopes[head]);
}

RelativePosition::RelativePosition(std::size_t d_model, std::size_t nhead, Rng& rng) {
  check_config(d_model > 0 && d_model % 2 == 0 && nhead > 0 && d_model % nhead == 0,
               "RelativePosition",
               "d_model is " + std::to_string(d_model) + " and nhead " + std::to_string(nhead) +
                   ", expected an even d_model (the sinusoids R) divisible by nhead > 0");
  RelativeAttentionParameters& p = terms_.parameters;
  p.content_bias = Tensor2::from_shape({nhead, d_model / nhead});
  p.position_bias = Tensor2::from_shape({nhead, d_model / nhead});
  p.position_weight = Tensor2::from_shape({d_model, d_model});
  fill_normal(p.content_bias, rng, 0.0f, 0.02f);
  fill_normal(p.position_bias, rng, 0.0f, 0.02f);
  const float bound = 1.0f / std::sqrt(float(d_model));  // scalar
  fill_uniform(p.position_weight, rng, -bound, bound);
}

Tensor3 RelativePosition::forward(const Tensor3& x) {
  terms_.parameters.distances = draw_distances(x.shape(1));
  return x;
}

void RelativePosition::collect_parameters(const std::string& prefix, ParameterList& out) {
  RelativeAttentionParameters& p = terms_.parameters;
  out.push_back(
      make_parameter(join_name(prefix, "content_bias"), p.content_bias, p.content_bias_grad));
  out.push_back(
      make_parameter(join_name(prefix, "position_bias"), p.position_bias, p.position_bias_grad));
  out.push_back(make_parameter(join_name(prefix, "position_weight"), p.position_weight,
                               p.position_weight_grad));
}

std::unique_ptr<PositionScheme> make_position_scheme(PositionKind kind, std::size_t d_model,
                                                     std::size_t max_len, Rng& rng,
                                                     std::size_t nhead) {
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
    case PositionKind::relative:
      return std::make_unique<RelativePosition>(d_model, nhead, rng);
  }
  throw config_error("make_position_scheme: unknown position kind");
}

}  // namespace xenc
