// libFuzzer harness: state_dict (see fuzz_entries.hpp), with the zip-aware mutator of
// zip_mutator.hpp. Built with XENC_BUILD_FUZZERS=ON and clang.
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"
#include "zip_mutator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  xenc_fuzz::state_dict(data, size);
  return 0;
}

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  return xenc_fuzz::mutate_npz(data, size, max_size, seed);
}
