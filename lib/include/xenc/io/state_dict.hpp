// Building xencoder modules from PyTorch state_dicts (read from .npz files).
//
// A torch.nn.TransformerEncoder's state_dict has, for each layer i, the keys
//     layers.{i}.self_attn.in_proj_weight [3D, D]   layers.{i}.self_attn.in_proj_bias [3D]
//     layers.{i}.self_attn.out_proj.weight [D, D]   layers.{i}.self_attn.out_proj.bias [D]
//     layers.{i}.linear1.weight [F, D]   layers.{i}.linear1.bias [F]
//     layers.{i}.linear2.weight [D, F]   layers.{i}.linear2.bias [D]
//     layers.{i}.norm1.weight [D]  .norm1.bias [D]  .norm2.weight [D]  .norm2.bias [D]
// and, when it was built with a final norm, norm.weight [D] and norm.bias [D]. A single
// torch.nn.TransformerEncoderLayer has the same keys without "layers.{i}.".
//
// The number of layers, D and F are read from the keys and shapes; what the weights cannot
// tell (nhead, activation, norm_first, layer_norm_eps) is given by the caller, as it is to
// PyTorch's constructors. A single-layer state_dict gives a 1-layer TransformerEncoder.
//
//     import torch, numpy as np
//     enc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16,
//               batch_first=True), num_layers=3, norm=torch.nn.LayerNorm(8))
//     np.savez("w.npz", **{k: v.numpy() for k, v in enc.state_dict().items()})
//
//     xenc::TransformerEncoder enc = xenc::load_transformer_encoder("w.npz", 2);  // nhead = 2
//     xenc::Tensor3 y = enc.forward(x, padding_mask);   // = PyTorch's enc(x,
//     src_key_padding_mask=...)
//
// Before anything is built, the key set is checked (inspect_encoder_state: no stray key, layer
// indices 0, 1, ..., n - 1) and then every layer's keys and shapes against one layer of the sizes
// read (D, F), so that a small crafted file cannot make the loader build a huge model.
//
// Every key is then checked once more, with its values, by the one state_dict check
// (xenc::check_state_dict, xenc/nn/module.hpp): NaN or infinite weights are refused.
//
// Throws:  io_error for a file problem (xenc/io/npz.hpp), for a missing or unexpected key, for
//          non-contiguous layer indices, for a non-finite weight, and for running out of memory
//          building the model (never std::bad_alloc);
//          shape_error for a wrongly shaped key; config_error when D % nhead != 0. Messages name
//          the source (the file), the key and both shapes, e.g.
//          "load_transformer_encoder: w.npz: key \"layers.1.linear1.weight\" has shape [16, 6],
//           expected [F, D] = [16, 8]".
#pragma once

#include <cstddef>
#include <string>

#include "xenc/core/parameter.hpp"
#include "xenc/io/npy.hpp"
#include "xenc/nn/module.hpp"
#include "xenc/nn/multihead_attention.hpp"
#include "xenc/nn/transformer_encoder.hpp"
#include "xenc/ops/activation.hpp"

namespace xenc {

/// What a TransformerEncoder(Layer) state_dict says about the model's size.
struct EncoderStateInfo {
  std::size_t num_layers = 0;       ///< 1 for a single-layer state_dict
  std::size_t d_model = 0;          ///< D, from in_proj_weight [3D, D]
  std::size_t dim_feedforward = 0;  ///< F, from linear1.weight [F, D]
  bool final_norm = false;          ///< norm.weight / norm.bias present
  bool single_layer = false;        ///< keys without "layers.{i}." (a TransformerEncoderLayer)
};

/// Reads num_layers, D, F and the final norm from the keys and shapes, and checks the key set on
/// names alone, before anything is built: every key of a stack is "layers.{i}.<parameter>" or
/// "norm.weight"/"norm.bias" with i = 0, 1, ..., n - 1 without gaps (a stray key is named as
/// unexpected; "layers.100000.linear1.weight" alone is refused because there is no layer 0).
/// Shapes beyond D and F are checked by load_transformer_encoder. `source` names the origin.
EncoderStateInfo inspect_encoder_state(const StateDict& state,
                                       const std::string& source = "state_dict");

/// A TransformerEncoder with the sizes read from `state` and its values copied in
/// (evaluation mode, dropout 0). Every key must be present with the right shape and no other
/// key may be present.
TransformerEncoder load_transformer_encoder(const StateDict& state, std::size_t nhead,
                                            Activation activation = Activation::relu,
                                            bool norm_first = false, float layer_norm_eps = 1e-5f,
                                            const std::string& source = "state_dict");
/// The same from an .npz file (load_npz + the above, messages naming the file); `limits`
/// bounds what the file may make the loader allocate (xenc/io/npy.hpp).
TransformerEncoder load_transformer_encoder(const std::string& npz_path, std::size_t nhead,
                                            Activation activation = Activation::relu,
                                            bool norm_first = false, float layer_norm_eps = 1e-5f,
                                            const LoadLimits& limits = {});

/// A MultiheadAttention from torch.nn.MultiheadAttention's state_dict (in_proj_weight [3D, D],
/// in_proj_bias [3D], out_proj.weight [D, D], out_proj.bias [D]); D from in_proj_weight.
MultiheadAttention load_multihead_attention(const StateDict& state, std::size_t num_heads,
                                            const std::string& source = "state_dict");

/// The module's state_dict written to .npz (numpy.savez; compressed: numpy.savez_compressed).
void save_state_dict(const std::string& npz_path, Module& module, bool compressed = false);

}  // namespace xenc
