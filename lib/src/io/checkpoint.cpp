// Checkpoints: parameters + configuration + vocabulary in one .npz (see checkpoint.hpp).
#include "xenc/io/checkpoint.hpp"

#include <cstdint>
#include <map>
#include <string>

#include "xenc/core/error.hpp"
#include "xenc/io/npz.hpp"
#include "xenc/io/state_dict.hpp"

namespace xenc {

namespace {
const char* kMetaKey = "xenc.meta";
const char* kFormat = "xencoder-checkpoint";
constexpr int kVersion = 1;
}  // namespace

nlohmann::json config_to_json(const EncoderModelConfig& c) {
  return {{"vocab_size", c.vocab_size},
          {"d_model", c.layer.d_model},
          {"nhead", c.layer.nhead},
          {"dim_feedforward", c.layer.dim_feedforward},
          {"dropout", c.layer.dropout},
          {"activation", to_string(c.layer.activation)},
          {"layer_norm_eps", c.layer.layer_norm_eps},
          {"norm_first", c.layer.norm_first},
          {"num_layers", c.num_layers},
          {"position", to_string(c.position)},
          {"max_len", c.max_len},
          {"scale_embedding", c.scale_embedding},
          {"final_norm", c.final_norm},
          {"padding_idx", c.padding_idx},
          {"seed", c.seed}};
}

EncoderModelConfig config_from_json(const nlohmann::json& j, const std::string& where) {
  EncoderModelConfig c;
  try {
    c.vocab_size = j.at("vocab_size").get<std::size_t>();
    c.layer.d_model = j.at("d_model").get<std::size_t>();
    c.layer.nhead = j.at("nhead").get<std::size_t>();
    c.layer.dim_feedforward = j.at("dim_feedforward").get<std::size_t>();
    c.layer.dropout = j.at("dropout").get<float>();
    c.layer.activation = parse_activation(j.at("activation").get<std::string>());
    c.layer.layer_norm_eps = j.at("layer_norm_eps").get<float>();
    c.layer.norm_first = j.at("norm_first").get<bool>();
    c.num_layers = j.at("num_layers").get<std::size_t>();
    c.position = parse_position_kind(j.at("position").get<std::string>());
    c.max_len = j.at("max_len").get<std::size_t>();
    c.scale_embedding = j.at("scale_embedding").get<bool>();
    c.final_norm = j.at("final_norm").get<bool>();
    c.padding_idx = j.at("padding_idx").get<std::int64_t>();
    c.seed = j.at("seed").get<std::uint32_t>();
    c.validate(where);
  } catch (const nlohmann::json::exception& e) {
    throw io_error(where + ": bad \"config\" in " + kMetaKey + ": " + e.what());
  } catch (const std::invalid_argument& e) {  // config_error: a configuration the model refuses
    throw io_error(where + ": " + e.what());
  }
  return c;
}

void save_checkpoint(const std::string& path, TokenClassifier& model, const Vocabulary& vocab,
                     const std::vector<std::string>& labels, const nlohmann::json& extra) {
  check_config(labels.size() == model.num_labels(), "save_checkpoint",
               "labels has " + std::to_string(labels.size()) + " names, expected num_labels = " +
                   std::to_string(model.num_labels()));
  check_config(vocab.size() == model.config().vocab_size, "save_checkpoint",
               "vocabulary has " + std::to_string(vocab.size()) +
                   " tokens, expected config.vocab_size = " +
                   std::to_string(model.config().vocab_size));
  // 1. the weights, one float32 member per parameter
  std::map<std::string, std::string> members;
  for (const auto& kv : model.state_dict()) members[kv.first] = format_npy(kv.second);
  // 2. the metadata as UTF-8 JSON bytes
  nlohmann::json meta = {{"format", kFormat}, {"version", kVersion},
                         {"config", config_to_json(model.config())}, {"labels", labels},
                         {"extra", extra}};
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < vocab.size(); ++i) tokens.push_back(vocab.token(std::int64_t(i)));
  meta["vocab"] = tokens;
  const std::string text = meta.dump();
  xt::xarray<std::uint8_t> bytes = xt::xarray<std::uint8_t>::from_shape({text.size()});
  std::copy(text.begin(), text.end(), bytes.begin());
  members[kMetaKey] = format_npy_uint8(bytes);
  save_npz_members(path, members);
}

CheckpointMeta read_checkpoint_meta(const std::string& path, StateDict* state) {
  const std::string where = "load_checkpoint: " + path;
  const std::map<std::string, std::string> members = load_npz_members(path);
  auto it = members.find(kMetaKey);
  if (it == members.end())
    throw io_error(where + ": no \"" + std::string(kMetaKey) +
                   "\" member: not an xencoder checkpoint (a plain state_dict .npz?)");
  const xt::xarray<std::uint8_t> bytes =
      parse_npy_uint8(it->second, where + ": key \"" + kMetaKey + "\"");
  CheckpointMeta meta;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(std::string(bytes.begin(), bytes.end()));
    if (j.value("format", "") != kFormat)
      throw io_error(where + ": \"format\" is not \"" + kFormat + "\"");
    const int version = j.at("version").get<int>();
    if (version != kVersion)
      throw io_error(where + ": checkpoint version " + std::to_string(version) + ", expected " +
                     std::to_string(kVersion));
    meta.labels = j.at("labels").get<std::vector<std::string>>();
    meta.vocab = j.at("vocab").get<std::vector<std::string>>();
    if (j.contains("extra")) meta.extra = j.at("extra");
  } catch (const nlohmann::json::exception& e) {
    throw io_error(where + ": malformed " + kMetaKey + " JSON: " + e.what());
  }
  meta.config = config_from_json(j.at("config"), where);
  if (meta.labels.empty()) throw io_error(where + ": \"labels\" is empty");
  if (meta.vocab.size() != meta.config.vocab_size)
    throw io_error(where + ": vocabulary has " + std::to_string(meta.vocab.size()) +
                   " tokens, expected config.vocab_size = " +
                   std::to_string(meta.config.vocab_size));
  if (meta.vocab.size() < 2 || meta.vocab[0] != Vocabulary::pad_token ||
      meta.vocab[1] != Vocabulary::unk_token)
    throw io_error(where + ": vocabulary must start with \"<pad>\", \"<unk>\"");
  if (state) {
    state->clear();
    for (const auto& kv : members)
      if (kv.first != kMetaKey)
        state->emplace(kv.first, parse_npy(kv.second, where + ": key \"" + kv.first + "\""));
  }
  return meta;
}

namespace {
// Number of floats a TokenClassifier with this config holds, computed in double (no overflow).
double expected_parameters(const EncoderModelConfig& c, std::size_t C) {
  const double V = double(c.vocab_size), D = double(c.layer.d_model),
               F = double(c.layer.dim_feedforward), L = double(c.num_layers);
  const double layer = 3 * D * D + 3 * D        // in_proj
                       + D * D + D              // out_proj
                       + F * D + F + D * F + D  // linear1, linear2
                       + 4 * D;                 // norm1, norm2
  return V * D + (c.position == PositionKind::learned ? double(c.max_len) * D : 0.0) +
         L * layer + (c.final_norm ? 2 * D : 0.0) + C * D + C;
}
}  // namespace

LoadedCheckpoint load_checkpoint(const std::string& path) {
  const std::string where = "load_checkpoint: " + path;
  LoadedCheckpoint out;
  StateDict state;
  out.meta = read_checkpoint_meta(path, &state);
  double stored = 0.0;
  for (const auto& kv : state) stored += double(kv.second.size());
  const double expected = expected_parameters(out.meta.config, out.meta.labels.size());
  if (stored != expected)
    throw io_error(where + ": the configuration needs " + std::to_string(std::size_t(expected)) +
                   " parameters, the file stores " + std::to_string(std::size_t(stored)) +
                   " (mismatched config and weights)");
  for (const auto& token : out.meta.vocab) out.vocab.add(token);
  if (out.vocab.size() != out.meta.vocab.size())
    throw io_error(where + ": the vocabulary repeats a token");
  out.model = std::make_unique<TokenClassifier>(out.meta.config, out.meta.labels.size());
  // every key checked (missing, unexpected, shape) before anything is copied
  load_state_dict_checked(*out.model, state, "load_checkpoint", path);
  out.model->eval();
  return out;
}

}  // namespace xenc
