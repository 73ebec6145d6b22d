// Checkpoints: one .npz file that rebuilds a trained TokenClassifier on its own.
//
// Members (numpy.load(path) reads them all):
//     <name>.npy          every parameter, float32, under its PyTorch state_dict name
//                         (embedding.weight, encoder.layers.0.linear1.weight, head.bias, ...)
//     xenc.meta.npy       uint8: UTF-8 JSON text with the model's configuration, the number and
//                         names of the labels and the vocabulary (tokens in id order):
//     {"format": "xencoder-checkpoint", "version": 1,
//      "config": {"vocab_size": 44, "d_model": 32, "nhead": 4, "dim_feedforward": 64,
//                 "dropout": 0.0, "activation": "relu", "layer_norm_eps": 1e-05,
//                 "norm_first": false, "num_layers": 2, "position": "learned", "max_len": 16,
//                 "scale_embedding": false, "final_norm": false, "padding_idx": 0, "seed": 1},
//      "labels": ["agent", "patient"], "vocab": ["<pad>", "<unk>", "the", ...],
//      "extra": {...}}                                     (anything the caller adds)
// In Python: json.loads(bytes(np.load(path)["xenc.meta"])); the other keys are the state_dict.
//
//     xenc::save_checkpoint("learned.npz", model, vocab, {"agent", "patient"});
//     xenc::LoadedCheckpoint ckpt = xenc::load_checkpoint("learned.npz");
//     xenc::Tensor3 logits = ckpt.model->forward(ids);     // the same numbers as `model`
//
// Limits (xenc::LoadLimits, xenc/io/npy.hpp), each checked before what it bounds is allocated:
//   max_meta_bytes       the xenc.meta text (4 MiB), from the zip directory, before it is read
//                        or parsed; nesting deeper than 64 levels is refused while parsing;
//   max_array_bytes      each array the config implies (embedding [V, D], the learned position
//                        table [max_len, D], linear1 [F, D]), named by its config key;
//   max_total_bytes      all parameters the config implies, and the members' sizes;
//   max_sequence_length  config.max_len.
//
// Validation, field by field: every config value has its JSON type (an integer is a JSON
// integer: 32.7 and "32" are refused, not read as 32), its sign and its range (a negative
// vocab_size is refused, not wrapped to 18446744073709551615); labels and vocabulary tokens are
// strings without control characters (no terminal escape codes or newlines reach a terminal);
// every weight is finite (NaN or infinity is refused, naming the key and the first bad index).
//
// Throws:  io_error, whose message starts "load_checkpoint: <file>: " once and names the key
//          ("xenc.meta: \"config.d_model\" is -3, expected an integer >= 1"): unreadable file
//          or not an .npz, no or malformed xenc.meta (the JSON parser's position, never its raw
//          message), a configuration the model refuses, a configuration whose parameter count
//          differs from the stored weights (checked from the headers before any weight is read),
//          a missing or unexpected parameter, a vocabulary whose size is not config.vocab_size,
//          a limit above; shape_error for a wrongly shaped parameter.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xenc/core/parameter.hpp"
#include "xenc/io/npy.hpp"
#include "xenc/nn/encoder_model.hpp"
#include "xenc/nn/token_classifier.hpp"
#include "xenc/text/vocabulary.hpp"

namespace xenc {

/// What a checkpoint holds besides the weights.
struct CheckpointMeta {
  EncoderModelConfig config;
  std::vector<std::string> labels;  ///< one name per output class (C = labels.size())
  std::vector<std::string> vocab;   ///< tokens in id order (vocab[0] = "<pad>", vocab[1] = "<unk>")
  nlohmann::json extra = nlohmann::json::object();  ///< free-form (training settings, results)
};

/// A model rebuilt from a checkpoint, in evaluation mode.
struct LoadedCheckpoint {
  CheckpointMeta meta;
  Vocabulary vocab;
  std::unique_ptr<TokenClassifier> model;
};

/// EncoderModelConfig <-> JSON (the "config" object above). config_from_json checks every field
/// (type, sign, integer, range; `limits` bounds the sizes) and throws io_error starting with
/// `where` and naming the key.
nlohmann::json config_to_json(const EncoderModelConfig& config);
EncoderModelConfig config_from_json(const nlohmann::json& j, const std::string& where,
                                    const LoadLimits& limits = {});

/// Writes the model's parameters and the metadata. labels.size() must equal the model's
/// num_labels (config_error otherwise). Replaces an existing file.
void save_checkpoint(const std::string& path, TokenClassifier& model, const Vocabulary& vocab,
                     const std::vector<std::string>& labels,
                     const nlohmann::json& extra = nlohmann::json::object());

/// The number of float parameters a TokenClassifier with this configuration and num_labels
/// classes holds: what load_checkpoint allocates for the model (4 bytes each), and as much again
/// for the weights read from the file. Computed in double, so a crafted config cannot wrap it.
double checkpoint_parameter_count(const EncoderModelConfig& config, std::size_t num_labels);

/// Reads and checks the metadata and every weight's .npy header, without reading the weights'
/// data or building the model: the memory a load needs can be estimated first,
///     const xenc::CheckpointMeta meta = xenc::read_checkpoint_meta("learned.npz");
///     double bytes = 2 * 4 * xenc::checkpoint_parameter_count(meta.config, meta.labels.size());
/// Also checks that the headers' shapes hold exactly the parameters the config needs.
CheckpointMeta read_checkpoint_meta(const std::string& path, const LoadLimits& limits = {});

/// Reads, checks and builds: the model has exactly the saved weights.
LoadedCheckpoint load_checkpoint(const std::string& path, const LoadLimits& limits = {});
/// The same from a checkpoint's bytes in memory; `source` names it in messages.
LoadedCheckpoint parse_checkpoint(const std::string& bytes, const std::string& source,
                                  const LoadLimits& limits = {});

}  // namespace xenc
