// Checkpoints: parameters + configuration + vocabulary in one .npz (see checkpoint.hpp).
//
// Loading is two passes over the archive, so that nothing is allocated on a file's word:
//   1. the metadata member whole (its size checked against max_meta_bytes first), and only the
//      .npy header of every weight; the JSON is validated field by field, the memory the config
//      implies is checked against the limits, and the headers must hold exactly the parameters
//      the config needs;
//   2. the weights, then the model, then the one state_dict check (shapes, finite values).
#include "xenc/io/checkpoint.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <new>
#include <sstream>
#include <string>

#include "npz_detail.hpp"
#include "xenc/core/error.hpp"
#include "xenc/io/npz.hpp"
#include "xenc/io/state_dict.hpp"

namespace xenc {

static_assert(LoadLimits{}.max_sequence_length == kMaxSequenceLength,
              "a checkpoint's max_len and a sentence share one default limit");

namespace {
const char* kMetaKey = "xenc.meta";
const char* kFormat = "xencoder-checkpoint";
constexpr int kVersion = 1;
constexpr std::size_t kMaxJsonDepth = 64;  // the format nests 3 levels; "extra" gets the rest

using json = nlohmann::json;

// A count held in a double, as an integer ("2304").
std::string count_text(double n) {
  std::ostringstream s;
  s.precision(0);
  s << std::fixed << n;
  return s.str();
}

// Field-by-field reading of the metadata: every error names the file and the key, and never
// echoes the file's text (it may hold escape codes) or the JSON library's message.
class MetaReader {
 public:
  explicit MetaReader(std::string where) : where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw io_error(where_ + ": \"" + key + "\" " + message);
  }

  const json& member(const json& object, const std::string& parent, const char* key) const {
    const std::string path = join(parent, key);
    auto it = object.find(key);
    if (it == object.end()) fail(path, "is missing");
    return *it;
  }

  // An integer in [lo, hi]: a JSON integer, not 32.7, "32", true or -3.
  std::int64_t integer(const json& object, const std::string& parent, const char* key,
                       std::int64_t lo, std::int64_t hi, const std::string& limit = "") const {
    const std::string path = join(parent, key);
    const json& v = member(object, parent, key);
    if (v.is_number_float())
      fail(path, "is " + v.dump() + ", expected an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
    if (!v.is_number_integer())
      fail(path, "is a " + std::string(v.type_name()) + ", expected an integer in [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(hi))
      fail(path, "is " + v.dump() + ", expected an integer <= " + std::to_string(hi) +
                     (limit.empty() ? "" : " = " + limit + " (raise the limit to load it)"));
    const std::int64_t x = v.get<std::int64_t>();
    if (x < lo)
      fail(path, "is " + std::to_string(x) + ", expected an integer >= " + std::to_string(lo));
    if (x > hi)
      fail(path, "is " + std::to_string(x) + ", expected an integer <= " + std::to_string(hi) +
                     (limit.empty() ? "" : " = " + limit + " (raise the limit to load it)"));
    return x;
  }

  // A finite number in [lo, hi) (or (lo, hi) when lo_open).
  double number(const json& object, const std::string& parent, const char* key, double lo,
                double hi, bool lo_open) const {
    const std::string path = join(parent, key);
    const json& v = member(object, parent, key);
    if (!v.is_number()) fail(path, "is a " + std::string(v.type_name()) + ", expected a number");
    const double x = v.get<double>();
    std::ostringstream range;
    range << (lo_open ? "(" : "[") << lo << ", " << hi << ")";
    if (!std::isfinite(x) || (lo_open ? x <= lo : x < lo) || x >= hi)
      fail(path, "is " + v.dump() + ", expected a number in " + range.str());
    return x;
  }

  bool boolean(const json& object, const std::string& parent, const char* key) const {
    const json& v = member(object, parent, key);
    if (!v.is_boolean())
      fail(join(parent, key), "is a " + std::string(v.type_name()) + ", expected true or false");
    return v.get<bool>();
  }

  // One of `names` (the file's string is not echoed).
  std::string choice(const json& object, const std::string& parent, const char* key,
                     const std::vector<std::string>& names) const {
    const json& v = member(object, parent, key);
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "\"" : ", \"") + n + "\"";
    if (!v.is_string())
      fail(join(parent, key), "is a " + std::string(v.type_name()) + ", expected one of " + list);
    const std::string s = v.get<std::string>();
    for (const auto& n : names)
      if (s == n) return s;
    fail(join(parent, key), "is not one of " + list);
  }

  // An array of printable strings.
  std::vector<std::string> strings(const json& object, const char* key) const {
    const json& v = member(object, "", key);
    if (!v.is_array())
      fail(key, "is a " + std::string(v.type_name()) + ", expected an array of strings");
    std::vector<std::string> out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
      if (!v[i].is_string())
        fail(path, "is a " + std::string(v[i].type_name()) + ", expected a string");
      out.push_back(v[i].get<std::string>());
      check_printable(out.back(), path);
    }
    return out;
  }

  // Text that reaches a terminal: no control characters (C0, DEL, C1: escape sequences, newlines,
  // carriage returns), no line or paragraph separators and no bidirectional overrides, which
  // would make a printed table lie. The parser has already checked that it is valid UTF-8.
  void check_printable(const std::string& s, const std::string& path) const {
    if (s.empty()) fail(path, "is empty, expected a name");
    for (std::size_t i = 0; i < s.size();) {
      const auto c = static_cast<unsigned char>(s[i]);
      std::uint32_t cp = c;
      std::size_t len = 1;
      if (c >= 0xF0) {
        cp = c & 0x07u;
        len = 4;
      } else if (c >= 0xE0) {
        cp = c & 0x0Fu;
        len = 3;
      } else if (c >= 0xC0) {
        cp = c & 0x1Fu;
        len = 2;
      }
      for (std::size_t k = 1; k < len && i + k < s.size(); ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
      const bool control = cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || cp == 0x2028 || cp == 0x2029 ||
                           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
      if (control) {
        char code[16];
        std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(cp));
        fail(path, "holds the control character " + std::string(code) + " at byte " +
                       std::to_string(i) +
                       " (escape codes, newlines and direction overrides are refused: the text is "
                       "printed to a terminal)");
      }
      i += len;
    }
  }

  const std::string& where() const { return where_; }

 private:
  static std::string join(const std::string& parent, const char* key) {
    return parent.empty() ? std::string(key) : parent + "." + key;
  }
  std::string where_;
};

const std::vector<std::string> kActivations{"relu", "gelu"};
const std::vector<std::string> kPositions{"none", "sinusoidal", "learned", "rope", "alibi"};

// The arrays the config implies, largest first among those a config key controls, checked
// against the limits before anything is built.
void check_config_sizes(const EncoderModelConfig& c, std::size_t num_labels,
                        const std::string& where, const LoadLimits& limits) {
  const double D = double(c.layer.d_model), F = double(c.layer.dim_feedforward);
  struct Array {
    const char* what;
    const char* key;
    double floats;
  };
  const Array arrays[] = {
      {"embedding.weight [V, D]", "config.vocab_size", double(c.vocab_size) * D},
      {"the position table [max_len, D]", "config.max_len",
       c.position == PositionKind::learned ? double(c.max_len) * D : 0.0},
      {"in_proj_weight [3D, D]", "config.d_model", 3 * D * D},
      {"linear1.weight [F, D]", "config.dim_feedforward", F * D},
      {"head.weight [C, D]", "labels", double(num_labels) * D}};
  for (const auto& a : arrays)
    if (4 * a.floats > double(limits.max_array_bytes))
      throw io_error(
          where + ": \"" + a.key + "\" makes " + a.what + " " + detail::bytes_text(4 * a.floats) +
          ", more than LoadLimits::max_array_bytes = " +
          detail::bytes_text(double(limits.max_array_bytes)) + " (raise the limit to load it)");
  const double total = 4 * checkpoint_parameter_count(c, num_labels);
  if (total > double(limits.max_total_bytes))
    throw io_error(where + ": \"config\" needs " + detail::bytes_text(total) +
                   " of parameters, more than LoadLimits::max_total_bytes = " +
                   detail::bytes_text(double(limits.max_total_bytes)) +
                   " (raise the limit to load it)");
}

}  // namespace

namespace {

// The JSON text parsed, nesting bounded (a deeply nested value is a recursion hazard for every
// later copy), errors by byte offset only. While it is parsed, the "config" object is checked as
// soon as it closes (nlohmann writes keys sorted, so "config" comes before "vocab"), and the
// "vocab" array may then not grow past config.vocab_size: a 10-million-word list behind a small
// or a huge config is refused while it is read, not after it is built.
json parse_meta_text(const char* first, const char* last, const std::string& where,
                     const LoadLimits& limits) {
  std::string top_key;
  std::size_t vocab_size = 0, vocab_seen = 0;  // vocab_size 0: config not seen yet
  const json::parser_callback_t guard = [&](int depth, json::parse_event_t event, json& parsed) {
    if (static_cast<std::size_t>(depth) > kMaxJsonDepth)
      throw io_error(where + ": nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (event == json::parse_event_t::key && depth == 1) top_key = parsed.get<std::string>();
    if (event == json::parse_event_t::object_end && depth == 1 && top_key == "config") {
      const EncoderModelConfig c = config_from_json(parsed, where, limits);
      check_config_sizes(c, 1, where, limits);
      vocab_size = c.vocab_size;
    }
    if (event == json::parse_event_t::value && depth == 2 && top_key == "vocab" &&
        vocab_size != 0 && ++vocab_seen > vocab_size)
      throw io_error(where + ": \"vocab\" has more than config.vocab_size = " +
                     std::to_string(vocab_size) + " tokens");
    return true;
  };
  try {
    return json::parse(first, last, guard);
  } catch (const json::parse_error& e) {
    throw io_error(where + ": is not valid JSON (UTF-8): the parser stopped at byte " +
                   std::to_string(e.byte) + " of " + std::to_string(last - first));
  } catch (const json::exception&) {  // out_of_range 406: a number beyond double, e.g. 1e400
    throw io_error(where +
                   ": is not valid JSON for xencoder: it holds a number out of range "
                   "(beyond a double)");
  }
}

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

EncoderModelConfig config_from_json(const nlohmann::json& j, const std::string& where,
                                    const LoadLimits& limits) {
  const MetaReader r(where);
  const std::string p = "config";
  if (!j.is_object()) r.fail(p, "is a " + std::string(j.type_name()) + ", expected an object");
  // Integers are bounded where their products are formed in double (2^31 each: no product of a
  // few of them loses its meaning); the memory they imply is checked against the limits next.
  constexpr std::int64_t kBig = std::int64_t(1) << 31;
  EncoderModelConfig c;
  c.vocab_size = std::size_t(r.integer(j, p, "vocab_size", 2, kBig));
  c.layer.d_model = std::size_t(r.integer(j, p, "d_model", 1, kBig));
  c.layer.nhead = std::size_t(r.integer(j, p, "nhead", 1, std::int64_t(c.layer.d_model)));
  c.layer.dim_feedforward = std::size_t(r.integer(j, p, "dim_feedforward", 1, kBig));
  c.layer.dropout = float(r.number(j, p, "dropout", 0.0, 1.0, false));
  c.layer.activation = parse_activation(r.choice(j, p, "activation", kActivations));
  c.layer.layer_norm_eps = float(r.number(j, p, "layer_norm_eps", 0.0, 1.0, true));
  c.layer.norm_first = r.boolean(j, p, "norm_first");
  c.num_layers = std::size_t(r.integer(j, p, "num_layers", 1, 1024));
  c.position = parse_position_kind(r.choice(j, p, "position", kPositions));
  c.max_len = std::size_t(r.integer(j, p, "max_len", 1, std::int64_t(limits.max_sequence_length),
                                    "LoadLimits::max_sequence_length"));
  c.scale_embedding = r.boolean(j, p, "scale_embedding");
  c.final_norm = r.boolean(j, p, "final_norm");
  c.padding_idx = r.integer(j, p, "padding_idx", -1, std::int64_t(c.vocab_size) - 1);
  c.seed = std::uint32_t(r.integer(j, p, "seed", 0, std::numeric_limits<std::uint32_t>::max()));
  // The rules between fields (d_model % nhead, even head dimension for rope, ...): the model's
  // own check, its message starting with `where` once.
  try {
    c.validate(where + ": \"config\"");
  } catch (const config_error& e) {
    throw io_error(e.what());
  }
  return c;
}

void save_checkpoint(const std::string& path, TokenClassifier& model, const Vocabulary& vocab,
                     const std::vector<std::string>& labels, const nlohmann::json& extra) {
  check_config(labels.size() == model.num_labels(), "save_checkpoint",
               "labels has " + std::to_string(labels.size()) +
                   " names, expected num_labels = " + std::to_string(model.num_labels()));
  check_config(
      vocab.size() == model.config().vocab_size, "save_checkpoint",
      "vocabulary has " + std::to_string(vocab.size()) +
          " tokens, expected config.vocab_size = " + std::to_string(model.config().vocab_size));
  // 1. the weights, one float32 member per parameter
  std::map<std::string, std::string> members;
  for (const auto& kv : model.state_dict()) members[kv.first] = format_npy(kv.second);
  // 2. the metadata as UTF-8 JSON bytes
  nlohmann::json meta = {{"format", kFormat},
                         {"version", kVersion},
                         {"config", config_to_json(model.config())},
                         {"labels", labels},
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

double checkpoint_parameter_count(const EncoderModelConfig& c, std::size_t num_labels) {
  const double V = double(c.vocab_size), D = double(c.layer.d_model),
               F = double(c.layer.dim_feedforward), L = double(c.num_layers),
               C = double(num_labels);
  const double layer = 3 * D * D + 3 * D        // in_proj
                       + D * D + D              // out_proj
                       + F * D + F + D * F + D  // linear1, linear2
                       + 4 * D;                 // norm1, norm2
  return V * D + (c.position == PositionKind::learned ? double(c.max_len) * D : 0.0) + L * layer +
         (c.final_norm ? 2 * D : 0.0) + C * D + C;
}

namespace {

// Reads an archive: `read(whole)` returns the members (whole or header-only per member).
using ReadArchive = std::function<std::map<std::string, std::string>(const detail::WholeMember&)>;

// Pass 1: the metadata whole, the weights' headers; everything checked that can be without the
// weights' data.
CheckpointMeta read_meta(const ReadArchive& read, const std::string& where,
                         const LoadLimits& limits) {
  const std::string meta_where = where + ": " + kMetaKey;
  // 1. The metadata's size, from the zip directory, before a byte of it is read.
  const detail::WholeMember meta_whole = [&](const std::string& key, std::uint64_t claim) {
    if (key != kMetaKey) return false;
    if (claim > limits.max_meta_bytes + limits.max_header_bytes + 12)
      throw io_error(
          meta_where + ": the zip directory claims " + detail::bytes_text(double(claim)) +
          ", more than LoadLimits::max_meta_bytes = " +
          detail::bytes_text(double(limits.max_meta_bytes)) + " (raise the limit to load it)");
    return true;
  };
  const std::map<std::string, std::string> members = read(meta_whole);
  auto it = members.find(kMetaKey);
  if (it == members.end())
    throw io_error(where + ": no \"" + std::string(kMetaKey) +
                   "\" member: not an xencoder checkpoint (a plain state_dict .npz?)");
  const NpyHeader mh = parse_npy_header(it->second, meta_where, limits);
  if (mh.size() > limits.max_meta_bytes)
    throw io_error(meta_where + ": holds " + detail::bytes_text(double(mh.size())) +
                   " of JSON, more than LoadLimits::max_meta_bytes = " +
                   detail::bytes_text(double(limits.max_meta_bytes)) +
                   " (raise the limit to load it)");
  // uint8, one dimension, all of it there; parsed in place (a 4 MiB text is not copied twice).
  if (mh.descr != "|u1" || mh.shape.size() != 1 || mh.fortran_order ||
      it->second.size() - mh.data_offset != mh.size())
    parse_npy_uint8(it->second, meta_where, limits);  // throws, naming what is wrong
  const char* text = it->second.data() + mh.data_offset;

  // 2. The JSON, field by field.
  const json j = parse_meta_text(text, text + mh.size(), meta_where, limits);
  const MetaReader r(meta_where);
  if (!j.is_object())
    r.fail("(top level)", "is a " + std::string(j.type_name()) + ", expected an object");
  const json& format = r.member(j, "", "format");
  if (!format.is_string() || format.get<std::string>() != kFormat)
    r.fail("format", "is not \"" + std::string(kFormat) + "\"");
  const std::int64_t version =
      r.integer(j, "", "version", 0, std::numeric_limits<std::int32_t>::max());
  if (version != kVersion)
    r.fail("version", "is " + std::to_string(version) + ", expected " + std::to_string(kVersion) +
                          " (a checkpoint from another xencoder version)");
  CheckpointMeta meta;
  meta.labels = r.strings(j, "labels");
  if (meta.labels.empty()) r.fail("labels", "is empty, expected at least one label");
  meta.config = config_from_json(r.member(j, "", "config"), meta_where, limits);
  // Checked before the vocabulary is copied: a 10-million-word list is refused by the limits,
  // not built.
  check_config_sizes(meta.config, meta.labels.size(), meta_where, limits);
  const json& vocab = r.member(j, "", "vocab");
  if (vocab.is_array() && vocab.size() != meta.config.vocab_size)
    r.fail("vocab",
           "has " + std::to_string(vocab.size()) +
               " tokens, expected config.vocab_size = " + std::to_string(meta.config.vocab_size));
  meta.vocab = r.strings(j, "vocab");
  if (meta.vocab[0] != Vocabulary::pad_token || meta.vocab[1] != Vocabulary::unk_token)
    r.fail("vocab", "must start with \"<pad>\", \"<unk>\"");
  if (j.contains("extra")) meta.extra = j.at("extra");

  // 3. The weights' headers: float arrays that hold exactly the parameters the config needs.
  double stored = 0.0;
  for (const auto& kv : members) {
    if (kv.first == kMetaKey) continue;
    const std::string source = where + ": key \"" + kv.first + "\"";
    const NpyHeader h = parse_npy_header(kv.second, source, limits);
    if (h.descr != "<f4" && h.descr != "<f8")
      throw io_error(source + ": dtype is '" + h.descr +
                     "', expected float32 '<f4' or float64 '<f8'");
    stored += double(h.size());
  }
  const double expected = checkpoint_parameter_count(meta.config, meta.labels.size());
  if (stored != expected)
    throw io_error(where + ": the configuration needs " + count_text(expected) +
                   " parameters, the file stores " + count_text(stored) +
                   " (mismatched config and weights)");
  return meta;
}

LoadedCheckpoint load(const ReadArchive& read, const std::string& where, const LoadLimits& limits) {
  LoadedCheckpoint out;
  out.meta = read_meta(read, where, limits);
  for (const auto& token : out.meta.vocab) out.vocab.add(token);
  if (out.vocab.size() != out.meta.vocab.size())
    throw io_error(where + ": " + kMetaKey + ": \"vocab\" repeats a token");
  try {
    // Pass 2: the weights (the metadata's header only, it is read), then the model.
    std::map<std::string, std::string> members =
        read([](const std::string& key, std::uint64_t) { return key != kMetaKey; });
    members.erase(kMetaKey);
    const StateDict state = detail::parse_members(std::move(members), where, limits);
    out.model = std::make_unique<TokenClassifier>(out.meta.config, out.meta.labels.size());
    // the one state_dict check (missing, unexpected, shape, finite) before anything is copied
    out.model->load_state_dict(state, true, where);
  } catch (const std::bad_alloc&) {
    throw io_error(where + ": out of memory loading " +
                   detail::bytes_text(
                       4 * checkpoint_parameter_count(out.meta.config, out.meta.labels.size())) +
                   " of parameters");
  }
  out.model->eval();
  return out;
}

}  // namespace

CheckpointMeta read_checkpoint_meta(const std::string& path, const LoadLimits& limits) {
  const std::string where = "read_checkpoint_meta: " + path;
  return read_meta(
      [&](const detail::WholeMember& whole) {
        return detail::read_npz_file(path, where, limits, whole);
      },
      where, limits);
}

LoadedCheckpoint load_checkpoint(const std::string& path, const LoadLimits& limits) {
  const std::string where = "load_checkpoint: " + path;
  return load(
      [&](const detail::WholeMember& whole) {
        return detail::read_npz_file(path, where, limits, whole);
      },
      where, limits);
}

LoadedCheckpoint parse_checkpoint(const std::string& bytes, const std::string& source,
                                  const LoadLimits& limits) {
  const std::string where = "parse_checkpoint: " + source;
  return load(
      [&](const detail::WholeMember& whole) {
        return detail::read_npz_bytes(bytes, where, limits, whole);
      },
      where, limits);
}

}  // namespace xenc
