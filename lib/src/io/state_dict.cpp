// State_dicts to modules: read the sizes from the keys and shapes, build the module, check
// every key against its parameters (naming the file, the key and both shapes), copy.
#include "xenc/io/state_dict.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <new>
#include <set>

#include "xenc/core/error.hpp"
#include "xenc/io/npz.hpp"

namespace xenc {

namespace {

std::vector<std::size_t> shape_of(const xt::xarray<float>& a) {
  return std::vector<std::size_t>(a.shape().begin(), a.shape().end());
}

// A few keys of `state` for messages ("a, b, c, ... (14 keys)").
std::string key_list(const StateDict& state) {
  std::string s;
  std::size_t i = 0;
  for (const auto& kv : state) {
    if (i == 4) {
      s += ", ...";
      break;
    }
    s += (i ? ", " : "") + kv.first;
    ++i;
  }
  return s + " (" + std::to_string(state.size()) + " keys)";
}

const char* kWhere = "load_transformer_encoder";

// The parameter names of one TransformerEncoderLayer ("self_attn.in_proj_weight", ...), read from
// a 1-wide layer so that they are the module's own names.
const std::set<std::string>& layer_parameter_names() {
  static const std::set<std::string> names = [] {
    EncoderLayerConfig c;
    c.d_model = 1;
    c.nhead = 1;
    c.dim_feedforward = 1;
    c.dropout = 0.0f;
    TransformerEncoderLayer layer(c, 0u);
    std::set<std::string> n;
    for (const auto& p : layer.parameters()) n.insert(p.name);
    return n;
  }();
  return names;
}

// "layers.{i}.<name>" -> i and name; false for any other form (also "layers.01.x": PyTorch never
// writes a leading zero). Indices above 10^12 saturate: they can only be gaps.
bool split_layer_key(const std::string& k, std::size_t& index, std::string& name) {
  if (k.compare(0, 7, "layers.") != 0) return false;
  std::size_t i = 7;
  index = 0;
  if (i >= k.size() || !std::isdigit(static_cast<unsigned char>(k[i]))) return false;
  if (k[i] == '0' && i + 1 < k.size() && std::isdigit(static_cast<unsigned char>(k[i + 1])))
    return false;
  while (i < k.size() && std::isdigit(static_cast<unsigned char>(k[i]))) {
    if (index < 1000000000000ull) index = index * 10 + static_cast<std::size_t>(k[i] - '0');
    ++i;
  }
  if (i >= k.size() || k[i] != '.') return false;
  name = k.substr(i + 1);
  return true;
}

// Every key of a stack is "layers.{i}.<layer parameter>" or "norm.weight"/"norm.bias", and the
// layer indices run 0, 1, ..., n - 1 without a gap. Checked on the names alone, before anything is
// built: a single stray "layers.100000.linear1.weight" must not build 100,001 layers first.
std::size_t check_stack_keys(const StateDict& state, const std::string& where) {
  const auto& names = layer_parameter_names();
  std::map<std::size_t, std::string> layers;  // index -> one of its keys
  for (const auto& kv : state) {
    const std::string& k = kv.first;
    if (k == "norm.weight" || k == "norm.bias") continue;
    std::size_t index = 0;
    std::string name;
    if (!split_layer_key(k, index, name) || !names.count(name))
      throw io_error(
          where + ": unexpected key \"" + k + "\" with shape " + shape_str(kv.second.shape()) +
          " (a TransformerEncoder state_dict has only \"layers.{i}.<parameter>\" keys, i = 0, "
          "1, ..., num_layers - 1, with parameters such as \"self_attn.in_proj_weight\", "
          "and \"norm.weight\" / \"norm.bias\")");
    layers.emplace(index, k);
  }
  // The smallest absent index below the largest present one is a gap.
  std::size_t expected = 0;
  for (const auto& layer : layers) {
    if (layer.first != expected)
      throw io_error(where + ": layer indices are not contiguous: key \"" + layer.second +
                     "\" is in layer " + std::to_string(layer.first) + ", but there is no layer " +
                     std::to_string(expected) +
                     " (a TransformerEncoder's layers are numbered 0, 1, ..., num_layers - 1)");
    ++expected;
  }
  return layers.size();
}

std::size_t state_bytes(const StateDict& state) {
  std::size_t n = 0;
  for (const auto& kv : state) n += kv.second.size() * sizeof(float);
  return n;
}

}  // namespace

EncoderStateInfo inspect_encoder_state(const StateDict& state, const std::string& source) {
  const std::string where = std::string(kWhere) + ": " + source;
  if (state.empty())
    throw io_error(where + ": has no keys, expected a TransformerEncoder state_dict");
  EncoderStateInfo info;

  // 1. Which module: a stack ("layers.{i}." keys) or a single layer (no prefix).
  info.single_layer = std::none_of(state.begin(), state.end(), [](const auto& kv) {
    return kv.first.compare(0, 7, "layers.") == 0;
  });
  std::string prefix;
  if (info.single_layer) {
    info.num_layers = 1;
  } else {
    // Every key named as a stack's key, layer indices 0, 1, ..., n - 1.
    info.num_layers = check_stack_keys(state, where);
    prefix = "layers.0.";
    info.final_norm = state.count("norm.weight") || state.count("norm.bias");
  }

  // 2. D from in_proj_weight [3D, D].
  const std::string in_proj = prefix + "self_attn.in_proj_weight";
  auto it = state.find(in_proj);
  if (it == state.end())
    throw io_error(
        where + ": missing key \"" + in_proj +
        "\" (expected shape [3D, D]); not a TransformerEncoder or TransformerEncoderLayer "
        "state_dict? keys: " +
        key_list(state));
  const auto w = shape_of(it->second);
  if (w.size() != 2 || w[1] == 0 || w[0] != 3 * w[1])
    throw shape_error(where + ": key \"" + in_proj + "\" has shape " + shape_str(w) +
                      ", expected [3D, D]");
  info.d_model = w[1];

  // 3. F from linear1.weight [F, D].
  const std::string lin1 = prefix + "linear1.weight";
  it = state.find(lin1);
  if (it == state.end())
    throw io_error(where + ": missing key \"" + lin1 +
                   "\" (expected shape [F, D] with D = " + std::to_string(info.d_model) + ")");
  const auto l = shape_of(it->second);
  if (l.size() != 2 || l[0] == 0 || l[1] != info.d_model)
    throw shape_error(where + ": key \"" + lin1 + "\" has shape " + shape_str(l) +
                      ", expected [F, D] with D = " + std::to_string(info.d_model));
  info.dim_feedforward = l[0];

  // 4. A single layer: no key other than the layer's parameters.
  if (info.single_layer)
    for (const auto& kv : state)
      if (!layer_parameter_names().count(kv.first))
        throw io_error(where + ": unexpected key \"" + kv.first + "\" with shape " +
                       shape_str(kv.second.shape()) +
                       " (a TransformerEncoderLayer state_dict has only its parameters, such as "
                       "\"self_attn.in_proj_weight\" and \"linear1.weight\")");
  return info;
}

TransformerEncoder load_transformer_encoder(const StateDict& state, std::size_t nhead,
                                            Activation activation, bool norm_first,
                                            float layer_norm_eps, const std::string& source) {
  const std::string where = std::string(kWhere) + ": " + source;
  EncoderStateInfo info;
  try {
    info = inspect_encoder_state(state, source);
  } catch (const std::bad_alloc&) {
    throw io_error(where + ": out of memory checking the state_dict's " +
                   std::to_string(state.size()) + " keys");
  }
  check_config(nhead > 0 && info.d_model % nhead == 0, where,
               "d_model (" + std::to_string(info.d_model) +
                   ", from in_proj_weight) must be divisible by nhead (" + std::to_string(nhead) +
                   ")");
  check_config(layer_norm_eps > 0.0f, where,
               "layer_norm_eps is " + std::to_string(layer_norm_eps) + ", expected > 0");

  EncoderLayerConfig config;
  config.d_model = info.d_model;
  config.nhead = nhead;
  config.dim_feedforward = info.dim_feedforward;
  config.dropout = 0.0f;  // inference; train() would not add dropout either
  config.activation = activation;
  config.layer_norm_eps = layer_norm_eps;
  config.norm_first = norm_first;

  // Every layer's keys and shapes, checked against one layer of the right sizes before the
  // whole stack is built. Then the stack; memory that runs out while building it is reported
  // with the sizes, never as std::bad_alloc.
  const std::size_t param_bytes = state_bytes(state);
  auto out_of_memory = [&] {
    return io_error(where + ": out of memory building a TransformerEncoder with num_layers = " +
                    std::to_string(info.num_layers) +
                    ", d_model = " + std::to_string(info.d_model) +
                    ", dim_feedforward = " + std::to_string(info.dim_feedforward) + " (" +
                    std::to_string(param_bytes) + " bytes of parameters)");
  };
  try {
    {
      TransformerEncoderLayer probe(config, 0u);
      const ParameterList params = probe.parameters();
      for (std::size_t i = 0; i < info.num_layers; ++i)
        check_state_dict(params, state, where, /*strict=*/false,
                         info.single_layer ? "" : "layers." + std::to_string(i) + ".");
    }
    TransformerEncoder encoder(config, info.num_layers, info.final_norm);
    // A single layer's keys are the layer's own parameter names (no "layers.0." prefix).
    if (info.single_layer)
      encoder.layers[0].load_state_dict(state, true, where);
    else
      encoder.load_state_dict(state, true, where);
    encoder.eval();
    return encoder;
  } catch (const std::bad_alloc&) {
    throw out_of_memory();
  }
}

TransformerEncoder load_transformer_encoder(const std::string& npz_path, std::size_t nhead,
                                            Activation activation, bool norm_first,
                                            float layer_norm_eps, const LoadLimits& limits) {
  return load_transformer_encoder(load_npz(npz_path, limits), nhead, activation, norm_first,
                                  layer_norm_eps, npz_path);
}

MultiheadAttention load_multihead_attention(const StateDict& state, std::size_t num_heads,
                                            const std::string& source) {
  const char* where = "load_multihead_attention";
  auto it = state.find("in_proj_weight");
  if (it == state.end())
    throw io_error(
        std::string(where) + ": " + source +
        ": missing key \"in_proj_weight\" (expected shape [3D, D]); keys: " + key_list(state));
  const auto w = shape_of(it->second);
  if (w.size() != 2 || w[1] == 0 || w[0] != 3 * w[1])
    throw shape_error(std::string(where) + ": " + source + ": key \"in_proj_weight\" has shape " +
                      shape_str(w) + ", expected [3D, D]");
  const std::size_t D = w[1];
  check_config(num_heads > 0 && D % num_heads == 0, std::string(where) + ": " + source,
               "d_model (" + std::to_string(D) +
                   ", from in_proj_weight) must be divisible by nhead (" +
                   std::to_string(num_heads) + ")");
  try {
    MultiheadAttention mha(D, num_heads, 0.0f, state.count("in_proj_bias") > 0);
    mha.load_state_dict(state, true, std::string(where) + ": " + source);
    return mha;
  } catch (const std::bad_alloc&) {
    throw io_error(
        std::string(where) + ": " + source +
        ": out of memory building a MultiheadAttention with d_model = " + std::to_string(D) + " (" +
        std::to_string(state_bytes(state)) + " bytes of parameters)");
  }
}

void save_state_dict(const std::string& npz_path, Module& module, bool compressed) {
  save_npz(npz_path, module.state_dict(), compressed);
}

}  // namespace xenc
