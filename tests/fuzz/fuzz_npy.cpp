// libFuzzer harness: npy (see fuzz_entries.hpp). Built with XENC_BUILD_FUZZERS=ON and clang.
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  xenc_fuzz::npy(data, size);
  return 0;
}
