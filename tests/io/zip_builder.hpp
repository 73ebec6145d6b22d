// Zip archives written byte by byte, for tests that need archives no honest writer produces:
// a directory that claims more than the member holds (also as a zip64 size), two members of one
// name. Format: PKWARE APPNOTE.TXT 6.3 (local header, data, central directory, end record).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace xenc_test {

struct ZipMember {
  std::string name;
  std::string data;          ///< the bytes stored in the archive (already deflated for method 8)
  std::uint16_t method = 0;  ///< 0 stored, 8 deflated
  std::uint32_t crc = 0;     ///< CRC-32 of the uncompressed bytes (crc32_of for stored data)
  std::uint64_t size = 0;    ///< uncompressed size the headers claim
  bool zip64 = false;        ///< write both sizes as 0xFFFFFFFF plus a zip64 extra field
};

/// CRC-32 (IEEE 802.3, as zip uses), bit by bit.
inline std::uint32_t crc32_of(const std::string& bytes) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

/// A stored member whose headers tell the truth.
inline ZipMember stored_member(const std::string& name, const std::string& data) {
  return ZipMember{name, data, 0, crc32_of(data), data.size(), false};
}

inline void put_le(std::string& out, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

inline std::string zip_archive(const std::vector<ZipMember>& members) {
  std::string out, dir;
  for (const auto& m : members) {
    const std::uint64_t offset = out.size();
    const std::uint64_t packed = m.data.size();
    std::string extra;
    if (m.zip64) {  // zip64 extended information: uncompressed size, compressed size
      put_le(extra, 0x0001, 2);
      put_le(extra, 16, 2);
      put_le(extra, m.size, 8);
      put_le(extra, packed, 8);
    }
    const std::uint32_t size32 = m.zip64 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(m.size);
    const std::uint32_t packed32 = m.zip64 ? 0xFFFFFFFFu : static_cast<std::uint32_t>(packed);
    const std::uint16_t version = m.zip64 ? 45 : 20;
    // local file header
    put_le(out, 0x04034b50, 4);
    put_le(out, version, 2);
    put_le(out, 0, 2);  // flags
    put_le(out, m.method, 2);
    put_le(out, 0, 2);     // time
    put_le(out, 0x21, 2);  // date: 1980-01-01
    put_le(out, m.crc, 4);
    put_le(out, packed32, 4);
    put_le(out, size32, 4);
    put_le(out, m.name.size(), 2);
    put_le(out, extra.size(), 2);
    out += m.name + extra + m.data;
    // central directory header
    put_le(dir, 0x02014b50, 4);
    put_le(dir, version, 2);  // made by
    put_le(dir, version, 2);  // needed
    put_le(dir, 0, 2);
    put_le(dir, m.method, 2);
    put_le(dir, 0, 2);
    put_le(dir, 0x21, 2);
    put_le(dir, m.crc, 4);
    put_le(dir, packed32, 4);
    put_le(dir, size32, 4);
    put_le(dir, m.name.size(), 2);
    put_le(dir, extra.size(), 2);
    put_le(dir, 0, 2);  // comment length
    put_le(dir, 0, 2);  // disk
    put_le(dir, 0, 2);  // internal attributes
    put_le(dir, 0, 4);  // external attributes
    put_le(dir, offset, 4);
    dir += m.name + extra;
  }
  const std::uint64_t dir_offset = out.size();
  out += dir;
  // end of central directory
  put_le(out, 0x06054b50, 4);
  put_le(out, 0, 2);
  put_le(out, 0, 2);
  put_le(out, members.size(), 2);
  put_le(out, members.size(), 2);
  put_le(out, dir.size(), 4);
  put_le(out, dir_offset, 4);
  put_le(out, 0, 2);
  return out;
}

/// The first member of an archive libzip wrote (save_npz_members): its stored bytes, method,
/// CRC and sizes, read from the local header, so that a test can re-wrap real deflate data.
inline ZipMember first_member(const std::string& zip) {
  auto le = [&](std::size_t at, int n) {
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(zip[at + i]);
    return v;
  };
  ZipMember m;
  m.method = static_cast<std::uint16_t>(le(8, 2));
  m.crc = static_cast<std::uint32_t>(le(14, 4));
  const std::size_t packed = le(18, 4);
  m.size = le(22, 4);
  const std::size_t name_len = le(26, 2), extra_len = le(28, 2);
  m.name = zip.substr(30, name_len);
  m.data = zip.substr(30 + name_len + extra_len, packed);
  return m;
}

}  // namespace xenc_test
