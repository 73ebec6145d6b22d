// The fuzzing entry points (see fuzz_entries.hpp): thin calls into the public loaders, plus
// invariants that a successful load must satisfy.
#include "fuzz_entries.hpp"

#include <cstring>
#include <stdexcept>

#include "xenc/io/checkpoint.hpp"
#include "xenc/io/npy.hpp"
#include "xenc/io/npz.hpp"
#include "xenc/io/state_dict.hpp"
#include "xenc/text/tokenizer.hpp"
#include "xenc/text/vocabulary.hpp"

namespace xenc_fuzz {

namespace {

void check(bool ok, const std::string& what) {
  if (!ok) throw std::logic_error("fuzz invariant broken: " + what);
}

std::string as_string(const std::uint8_t* data, std::size_t size) {
  return size == 0 ? std::string() : std::string(reinterpret_cast<const char*>(data), size);
}

// Bitwise equality (NaN payloads included).
bool same_bits(const xt::xarray<float>& a, const xt::xarray<float>& b) {
  return a.shape() == b.shape() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace

void npy(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = as_string(data, size);
  try {
    const xenc::NpyHeader h = xenc::parse_npy_header(bytes, "fuzz.npy");
    check(h.data_offset <= bytes.size(), "data_offset inside the input");
  } catch (const std::invalid_argument&) {
  }
  try {
    const xt::xarray<float> a = xenc::parse_npy(bytes, "fuzz.npy");
    // What loads must survive save + load unchanged.
    check(same_bits(xenc::parse_npy(xenc::format_npy(a), "round trip"), a), "float round trip");
  } catch (const std::invalid_argument&) {
  }
  try {
    const xt::xarray<bool> m = xenc::parse_npy_bool(bytes, "fuzz.npy");
    check(xenc::parse_npy_bool(xenc::format_npy_bool(m), "round trip") == m, "bool round trip");
  } catch (const std::invalid_argument&) {
  }
}

void npz(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = as_string(data, size);
  try {
    const auto members = xenc::parse_npz_members(bytes, "fuzz.npz");
    for (const auto& kv : members) {
      try {
        xenc::parse_npy(kv.second, kv.first);
      } catch (const std::invalid_argument&) {
      }
    }
  } catch (const std::invalid_argument&) {
  }
  try {
    const xenc::StateDict state = xenc::parse_npz(bytes, "fuzz.npz");
    for (const auto& kv : state)
      check(same_bits(xenc::parse_npy(xenc::format_npy(kv.second), kv.first), kv.second),
            "member round trip");
  } catch (const std::invalid_argument&) {
  }
}

void state_dict(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = as_string(data, size);
  try {
    const xenc::StateDict state = xenc::parse_npz(bytes, "fuzz.npz");
    xenc::TransformerEncoder encoder = xenc::load_transformer_encoder(state, 1);
    const std::size_t D = encoder.layers.at(0).config().d_model;
    const xenc::Tensor3 x = xt::zeros<float>({std::size_t(1), std::size_t(2), D});
    const xenc::Tensor3 y = encoder.forward(x);
    check(y.shape() == x.shape(), "forward keeps [B, T, D]");
  } catch (const std::invalid_argument&) {
  }
}

void checkpoint(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = as_string(data, size);
  try {
    const xenc::LoadedCheckpoint ck = xenc::parse_checkpoint(bytes, "fuzz.npz");
    check(ck.vocab.size() == ck.meta.config.vocab_size, "vocabulary of config.vocab_size tokens");
    for (const auto& label : ck.meta.labels)
      for (const char c : label)
        check(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F, "printable labels");
    const xenc::Index2 ids = xt::ones<std::int64_t>({std::size_t(1), std::size_t(2)});
    const xenc::Tensor3 y = ck.model->forward(ids);
    check(y.shape(2) == ck.meta.labels.size(), "one logit per label");
  } catch (const std::invalid_argument&) {
  }
}

void tokenizer(const std::uint8_t* data, std::size_t size) {
  const std::string text = as_string(data, size);
  try {
    const auto tokens = xenc::tokenize(text);
    for (const auto& t : tokens) {
      check(!t.empty(), "no empty token");
      xenc::check_utf8(t, "token");  // every token is valid UTF-8 (an encoding_error would escape
                                     // as a finding below)
    }
    const std::string folded = xenc::fold_case(text);
    check(xenc::fold_case(folded) == folded, "NFKC_Casefold is idempotent");
    const auto vocab = xenc::Vocabulary::from_texts({text});
    // the length limit raised to the input's (16 KiB of fuzz input holds more than
    // kMaxSequenceLength tokens; the limit itself:
    // Vocabulary.EncodeBatchRefusesASentenceOverMaxLength)
    const auto batch = vocab.encode_batch({text, "cat"}, std::max<std::size_t>(tokens.size(), 1));
    check(batch.ids.shape()[1] == std::max<std::size_t>(tokens.size(), 1), "T = longest sentence");
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      check(batch.ids(0, t) >= 2 && batch.padding_mask(0, t) == false, "known tokens, not padding");
      check(vocab.token(batch.ids(0, t)) == tokens[t], "id -> token");
    }
  } catch (const xenc::encoding_error&) {
    // Invalid UTF-8 input: the expected answer. (Any other invalid_argument is a finding.)
  }
}

Entry entry_for(const std::string& harness) {
  if (harness == "npy") return &npy;
  if (harness == "npz") return &npz;
  if (harness == "state_dict") return &state_dict;
  if (harness == "checkpoint") return &checkpoint;
  if (harness == "tokenizer") return &tokenizer;
  throw std::invalid_argument("xenc_fuzz::entry_for: unknown harness \"" + harness + "\"");
}

}  // namespace xenc_fuzz
