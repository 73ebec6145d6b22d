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
// Throws:  io_error naming the function and the file: unreadable file or not an .npz, no or
//          malformed xenc.meta, a configuration the model refuses, a configuration whose
//          parameter count differs from the stored weights (checked before the model is built,
//          so a crafted config cannot make it allocate), a missing or unexpected parameter, a
//          vocabulary whose size is not config.vocab_size; shape_error for a wrongly shaped one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xenc/core/parameter.hpp"
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

/// EncoderModelConfig <-> JSON (the "config" object above).
nlohmann::json config_to_json(const EncoderModelConfig& config);
EncoderModelConfig config_from_json(const nlohmann::json& j, const std::string& where);

/// Writes the model's parameters and the metadata. labels.size() must equal the model's
/// num_labels (config_error otherwise). Replaces an existing file.
void save_checkpoint(const std::string& path, TokenClassifier& model, const Vocabulary& vocab,
                     const std::vector<std::string>& labels,
                     const nlohmann::json& extra = nlohmann::json::object());

/// Reads the metadata and the state_dict without building the model.
CheckpointMeta read_checkpoint_meta(const std::string& path, StateDict* state = nullptr);

/// Reads, checks and builds: the model has exactly the saved weights.
LoadedCheckpoint load_checkpoint(const std::string& path);

}  // namespace xenc
