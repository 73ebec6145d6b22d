// The fuzzing entry points: one function per harness, shared by the libFuzzer executables
// (fuzz_<harness>.cpp, built with XENC_BUILD_FUZZERS) and by the regression test that replays
// every committed input in the normal build (test_fuzz_regressions.cpp, no libFuzzer needed).
//
// Each entry feeds the bytes to the library's public loading functions. An input error
// (std::invalid_argument: io_error, shape_error, config_error, encoding_error) is the expected
// answer to bad input and is swallowed. Anything else escapes and is a finding: std::bad_alloc,
// another exception, a sanitizer report, and std::logic_error thrown by a broken invariant check
// here (e.g. a loaded array that does not survive save + load).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xenc_fuzz {

/// Input: the bytes of an .npy file. parse_npy_header, parse_npy, parse_npy_bool.
void npy(const std::uint8_t* data, std::size_t size);
/// Input: the bytes of an .npz archive. parse_npz_members, parse_npz.
void npz(const std::uint8_t* data, std::size_t size);
/// Input: the bytes of an .npz archive holding a state_dict. parse_npz, then
/// load_transformer_encoder with nhead = 1 and a forward pass on a [1, 2, D] input.
void state_dict(const std::uint8_t* data, std::size_t size);
/// Input: the bytes of a checkpoint (.npz with xenc.meta JSON and the weights). parse_checkpoint,
/// then a forward pass of the model on a [1, 2] batch of token ids.
void checkpoint(const std::uint8_t* data, std::size_t size);
/// Input: text. tokenize, fold_case, Vocabulary::from_texts and encode_batch.
void tokenizer(const std::uint8_t* data, std::size_t size);

/// The harness names, as directories under tests/fuzz/corpus and tests/fuzz/regressions.
inline const std::vector<std::string>& harness_names() {
  static const std::vector<std::string> names{"npy", "npz", "state_dict", "checkpoint",
                                              "tokenizer"};
  return names;
}

/// The entry for a harness name.
using Entry = void (*)(const std::uint8_t*, std::size_t);
Entry entry_for(const std::string& harness);

}  // namespace xenc_fuzz
