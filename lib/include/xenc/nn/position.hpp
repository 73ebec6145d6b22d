// Position schemes: how the encoder learns where each token is.
//
// Self-attention treats its input as a set: permute the tokens and the outputs permute the same
// way (permutation equivariance), so "cat chased mouse" and "mouse chased cat" give "cat" the
// same vector. A position scheme breaks that symmetry. The schemes here add a vector to each
// token's embedding before the first layer:
//   none        y = x                                   (the encoder cannot see order)
//   sinusoidal  y[b, t] = x[b, t] + PE(t)               (fixed, any length; see ops/positional.hpp)
//   learned     y[b, t] = x[b, t] + weight[t]           (a trained table, t < max_len)
// Schemes that act inside attention instead implement the same interface with forward/backward
// the identity on the embeddings (nothing is added to the input), and return an
// AttentionPosition from
// attention_position() (ops/multi_head_attention.hpp): it may transform Q and K by position
// (and their gradients in backward) and add a per-head bias to the scores. EncoderModel asks
// the scheme for it and hands it to every self-attention of the encoder
// (TransformerEncoder::set_attention_position), so adding such a scheme needs no change to
// the modules that use it. Two such schemes (math in ops/position_in_attention.hpp):
//   rope        q, k of every head rotated pair by pair by R(t)  (Su et al.; any length)
//   alibi       head h's scores get −m_h·|i − j|                  (Press et al.; any length)
//   relative    ((q_i + u)·k_j + (q_i + v)·W_R PE(i − j)) / √Dh  (Transformer-XL, Dai et al.
//               2019; ops/relative_attention.hpp; u, v, W_R learned and shared by the layers)
// Every scheme but none can be randomized (set_randomized; Ruoss et al. 2023,
// ops/randomized_positions.hpp): in training, positions are a sorted sample from [0, L).
// RoPE and ALiBi have no parameters; the words of a sentence separate only inside attention.
//
// Shapes:  x, y: [B, T, D]
// Throws:  config_error for an odd D (sinusoidal), an odd Dh = D / H (rope) or an unknown name;
// shape_error when T
//          exceeds max_len (learned) or D does not match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/nn/module.hpp"
#include "xenc/ops/multi_head_attention.hpp"
#include "xenc/ops/position_in_attention.hpp"
#include "xenc/ops/randomized_positions.hpp"
#include "xenc/ops/relative_attention.hpp"

namespace xenc {

enum class PositionKind { none, sinusoidal, learned, rope, alibi, relative };

/// "none" | "sinusoidal" | "learned" | "rope" | "alibi" | "relative". Throws config_error
/// otherwise.
PositionKind parse_position_kind(const std::string& name);
std::string to_string(PositionKind kind);
/// The schemes programs train by default, in declaration order (the registry: a new scheme
/// adds itself here, and programs such as xenc-train-order then train it without any change).
/// `relative` is not in it yet: it is chosen by name (issue #30 adds it to the study).
const std::vector<PositionKind>& all_position_kinds();

class PositionScheme : public Module {
 public:
  virtual PositionKind kind() const = 0;
  /// Adds position information to token vectors: x [B, T, D] -> [B, T, D].
  virtual Tensor3 forward(const Tensor3& x) = 0;
  /// Gradient w.r.t. x (the identity for additive schemes); parameter grads accumulate.
  virtual Tensor3 backward(const Tensor3& grad_y) = 0;
  /// What the scheme does inside attention, or null (the additive schemes here). Owned by
  /// the scheme.
  virtual const AttentionPosition* attention_position() const { return nullptr; }
  /// True for schemes that act inside attention (attention_position() is not null).
  bool acts_in_attention() const { return attention_position() != nullptr; }
  std::string name() const { return to_string(kind()); }

  /// Randomized positions (Ruoss et al., 2023; ops/randomized_positions.hpp): in training each
  /// forward draws the positions (or, for alibi and relative, the distances) as a sorted
  /// sample from [0, max_len), from a generator seeded with `seed`; in eval they are 0 .. T−1.
  /// max_len = 0 turns it off (the default). The sample of a forward serves every layer.
  /// Throws:  config_error for `none` (no positions to randomize) and for learned positions
  ///          whose table has fewer than max_len rows.
  virtual void set_randomized(std::size_t max_len, std::uint32_t seed);
  /// 0 when positions are not randomized, else L.
  std::size_t randomized_max_len() const { return randomized_max_len_; }

 protected:
  /// True when this forward uses a sample (randomized and training).
  bool samples_positions() const { return randomized_max_len_ > 0 && is_training(); }
  /// The positions of this forward for T tokens: a sample, or 0 .. T−1.
  std::vector<double> draw_positions(std::size_t T);
  /// The 2T − 1 distances of this forward (randomized_distances), or empty: the plain ones.
  std::vector<double> draw_distances(std::size_t T);

 private:
  std::size_t randomized_max_len_ = 0;
  Rng position_rng_;
};

class NoPosition : public PositionScheme {
 public:
  PositionKind kind() const override { return PositionKind::none; }
  void set_randomized(std::size_t max_len, std::uint32_t seed) override;
  Tensor3 forward(const Tensor3& x) override { return x; }
  Tensor3 backward(const Tensor3& grad_y) override { return grad_y; }
  void collect_parameters(const std::string&, ParameterList&) override {}
};

class SinusoidalPosition : public PositionScheme {
 public:
  /// Throws config_error if d_model is odd or zero.
  explicit SinusoidalPosition(std::size_t d_model);
  PositionKind kind() const override { return PositionKind::sinusoidal; }
  Tensor3 forward(const Tensor3& x) override;
  Tensor3 backward(const Tensor3& grad_y) override { return grad_y; }
  void collect_parameters(const std::string&, ParameterList&) override {}

 private:
  std::size_t d_model_;
  Tensor2 table_;  ///< cached PE rows, grown on demand: [T_max_seen, D]
};

class LearnedPosition : public PositionScheme {
 public:
  /// weight [max_len, D], initialised N(0, 1) like nn.Embedding.
  LearnedPosition(std::size_t max_len, std::size_t d_model, Rng& rng);
  PositionKind kind() const override { return PositionKind::learned; }
  Tensor3 forward(const Tensor3& x) override;
  Tensor3 backward(const Tensor3& grad_y) override;
  void collect_parameters(const std::string& prefix, ParameterList& out) override;
  void set_randomized(std::size_t max_len, std::uint32_t seed) override;

  Tensor2 weight, weight_grad;  ///< [max_len, D]

 private:
  std::vector<std::size_t> rows_;  ///< the rows the last forward drew (randomized; else empty)
};

/// Rotary positions (RoPE): the identity on the embeddings; inside attention q and k of every
/// head are rotated by position (rope_forward), and their gradients by the transpose.
/// Throws:  config_error at the first forward if Dh = D / H is odd (EncoderModelConfig checks
///          it up front).
class RotaryPosition : public PositionScheme {
 public:
  explicit RotaryPosition(RopePairing pairing = RopePairing::interleaved) : rotation_(pairing) {}
  PositionKind kind() const override { return PositionKind::rope; }
  /// The identity; draws this forward's positions when randomized.
  Tensor3 forward(const Tensor3& x) override;
  Tensor3 backward(const Tensor3& grad_y) override { return grad_y; }
  void collect_parameters(const std::string&, ParameterList&) override {}
  const AttentionPosition* attention_position() const override { return &rotation_; }
  RopePairing pairing() const { return rotation_.pairing; }

  struct Rotation : AttentionPosition {
    explicit Rotation(RopePairing p) : pairing(p) {}
    void transform_qk(Tensor3& q, Tensor3& k, std::size_t num_heads) const override;
    void transform_qk_backward(Tensor3& dq, Tensor3& dk, std::size_t num_heads) const override;
    RopePairing pairing;
    std::vector<double> positions;  ///< randomized positions of this forward, or empty: 0..T−1
  };

 private:
  Rotation rotation_;
};

/// ALiBi: the identity on the embeddings; inside attention head h adds −m_h·|i − j| to its
/// scores (alibi_slopes, alibi_bias). No parameters, no gradient.
class ALiBiPosition : public PositionScheme {
 public:
  PositionKind kind() const override { return PositionKind::alibi; }
  /// The identity; draws this forward's distances when randomized.
  Tensor3 forward(const Tensor3& x) override;
  Tensor3 backward(const Tensor3& grad_y) override { return grad_y; }
  void collect_parameters(const std::string&, ParameterList&) override {}
  const AttentionPosition* attention_position() const override { return &bias_; }

  struct Bias : AttentionPosition {
    bool has_score_bias() const override { return true; }
    Tensor2 score_bias(std::size_t head, std::size_t num_heads, std::size_t Tq,
                       std::size_t Tk) const override;
    /// m_h: the kernel computes −m_h·|i − j| itself (no [Tq, Tk] tensor per head).
    float distance_bias_slope(std::size_t head, std::size_t num_heads) const override;
    /// Randomized distances of this forward (row m: δ = T − 1 − m), or empty: |i − j|. With
    /// them the bias is −m_h·|distances[T − 1 − i + j]| and distance_bias_slope is 0.
    std::vector<double> distances;
  };

 private:
  Bias bias_;
};

/// Transformer-XL's relative positions (Dai et al., 2019, section 3.3), encoder form: the
/// identity on the embeddings; inside attention head h scores
///     S[i, j] = ((q_i + u_h)·k_j + (q_i + v_h)·r_h[i − j]) / √Dh,   r = PE(i − j) W_Rᵀ
/// (ops/relative_attention.hpp). One u, v [H, Dh] and W_R [D, D] serve every layer (the paper
/// shares u and v and gives each layer its own W_R; the randomized-positions authors' code gives
/// each layer all three). Initialised as in that code: u, v ~ N(0, 0.02²); W_R as a Linear,
/// U(−1/√D, 1/√D).
/// Throws:  config_error unless D is even and divisible by nhead.
class RelativePosition : public PositionScheme {
 public:
  RelativePosition(std::size_t d_model, std::size_t nhead, Rng& rng);
  PositionKind kind() const override { return PositionKind::relative; }
  /// The identity; draws this forward's distances when randomized.
  Tensor3 forward(const Tensor3& x) override;
  Tensor3 backward(const Tensor3& grad_y) override { return grad_y; }
  /// content_bias (u), position_bias (v) [H, Dh]; position_weight (W_R) [D, D].
  void collect_parameters(const std::string& prefix, ParameterList& out) override;
  const AttentionPosition* attention_position() const override { return &terms_; }
  RelativeAttentionParameters& parameters_of_attention() { return terms_.parameters; }

  struct Terms : AttentionPosition {
    bool has_relative_attention() const override { return true; }
    RelativeAttentionParameters& relative_attention() const override { return parameters; }
    mutable RelativeAttentionParameters parameters;
  };

 private:
  Terms terms_;
};

/// The scheme for `kind`; max_len is used by learned positions only, nhead by relative ones.
std::unique_ptr<PositionScheme> make_position_scheme(PositionKind kind, std::size_t d_model,
                                                     std::size_t max_len, Rng& rng,
                                                     std::size_t nhead = 0);

}  // namespace xenc
