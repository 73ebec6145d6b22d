// A structure-aware libFuzzer mutator for .npz inputs. Byte-level mutation of a zip almost
// always breaks a member's CRC-32, so the loader refuses it before the .npy parser or the
// state_dict checks ever run. This mutator unpacks the stored members, mutates one member's
// name or bytes (or drops or copies a member) with libFuzzer's own mutator, and packs the
// archive again with correct CRCs. Inputs it cannot unpack get plain byte mutation, so the
// zip parser itself is still fuzzed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "io/zip_builder.hpp"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace xenc_fuzz {

// The stored members of a zip, read from its local headers; false if any is not stored.
inline bool unpack_stored(const std::uint8_t* data, std::size_t size,
                          std::vector<xenc_test::ZipMember>& out) {
  const std::string z(reinterpret_cast<const char*>(data), size);
  auto le = [&](std::size_t at, int n) {
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
      v = (v << 8) | static_cast<unsigned char>(z[at + static_cast<std::size_t>(i)]);
    return v;
  };
  std::size_t at = 0;
  while (at + 30 <= z.size() && z.compare(at, 4, "PK\x03\x04") == 0) {
    const std::size_t method = le(at + 8, 2), packed = le(at + 18, 4);
    const std::size_t name_len = le(at + 26, 2), extra_len = le(at + 28, 2);
    const std::size_t start = at + 30 + name_len + extra_len;
    if (method != 0 || start + packed > z.size()) return false;
    out.push_back(xenc_test::stored_member(z.substr(at + 30, name_len), z.substr(start, packed)));
    at = start + packed;
  }
  return !out.empty();
}

inline std::size_t mutate_npz(std::uint8_t* data, std::size_t size, std::size_t max_size,
                              unsigned seed) {
  std::vector<xenc_test::ZipMember> members;
  if (!unpack_stored(data, size, members)) return LLVMFuzzerMutate(data, size, max_size);
  std::mt19937 rng(seed);
  auto& m = members[rng() % members.size()];
  auto mutate = [&](std::string& s, std::size_t room) {
    if (s.empty()) s = "x";
    s.resize(s.size() + room);
    const std::size_t n =
        LLVMFuzzerMutate(reinterpret_cast<std::uint8_t*>(&s[0]), s.size() - room, s.size());
    s.resize(n);
  };
  switch (rng() % 6) {
    case 0:  // rename: a layer index, a parameter name, the ".npy" suffix
      mutate(m.name, 16);
      break;
    case 1:  // drop a member
      if (members.size() > 1)
        members.erase(members.begin() + static_cast<long>(&m - members.data()));
      break;
    case 2: {  // copy a member under a mutated name
      xenc_test::ZipMember copy = m;
      mutate(copy.name, 16);
      members.push_back(copy);
      break;
    }
    default:  // the .npy bytes: header text, shape, dtype, data
      mutate(m.data, 64);
      break;
  }
  for (auto& x : members) x = xenc_test::stored_member(x.name, x.data);  // fresh CRC and size
  const std::string out = xenc_test::zip_archive(members);
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace xenc_fuzz
