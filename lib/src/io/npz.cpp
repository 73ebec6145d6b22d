// .npz archives through libzip: open the zip, check what each member claims against the file
// and the limits, read it in chunks (libzip inflates deflated members and checks each member's
// CRC-32 when it is read to the end), parse it as .npy.
#include "xenc/io/npz.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <functional>
#include <memory>
#include <new>
#include <set>
#include <vector>

#include "npz_detail.hpp"
#include "xenc/core/tensor.hpp"

#include <zip.h>

namespace xenc {

namespace {

// libzip's text for an error code, e.g. "Not a zip archive".
std::string zip_code_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }  // close without writing
};
using ZipPtr = std::unique_ptr<zip_t, ZipCloser>;

struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

std::string key_of(const std::string& member) {
  const std::string ext = ".npy";
  if (member.size() > ext.size() &&
      member.compare(member.size() - ext.size(), ext.size(), ext) == 0)
    return member.substr(0, member.size() - ext.size());
  return member;
}

}  // namespace

namespace {

// Bytes [offset, offset + n) of the archive, fewer at its end: the file or the buffer.
using ReadAt = std::function<std::string(std::uint64_t offset, std::size_t n)>;

std::uint64_t le(const std::string& b, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<std::size_t>(i)]);
  return v;
}

// The first name that appears twice in the central directory, read by hand: libzip refuses such
// an archive with only "File already exists". Empty when the directory cannot be walked.
std::string duplicate_member(const ReadAt& read_at, std::uint64_t file_size) {
  // End-of-central-directory record "PK\5\6": in the last 22 + 65535 (comment) bytes.
  const std::uint64_t tail_len = std::min<std::uint64_t>(file_size, 22 + 65535);
  const std::string tail = read_at(file_size - tail_len, static_cast<std::size_t>(tail_len));
  const std::size_t eocd = tail.rfind(std::string("PK\x05\x06", 4));
  if (eocd == std::string::npos || eocd + 22 > tail.size()) return "";
  std::uint64_t count = le(tail, eocd + 10, 2), dir_size = le(tail, eocd + 12, 4),
                dir_offset = le(tail, eocd + 16, 4);
  // zip64: a locator "PK\6\7" just before points at the zip64 end record "PK\6\6".
  if (eocd >= 20 && tail.compare(eocd - 20, 4, std::string("PK\x06\x07", 4)) == 0) {
    const std::string rec = read_at(le(tail, eocd - 20 + 8, 8), 56);
    if (rec.size() == 56 && rec.compare(0, 4, std::string("PK\x06\x06", 4)) == 0) {
      count = le(rec, 32, 8);
      dir_size = le(rec, 40, 8);
      dir_offset = le(rec, 48, 8);
    }
  }
  if (dir_size > file_size || dir_offset > file_size) return "";
  const std::string dir = read_at(dir_offset, static_cast<std::size_t>(dir_size));
  std::set<std::string> seen;
  std::size_t at = 0;
  for (std::uint64_t i = 0; i < count && at + 46 <= dir.size(); ++i) {
    if (dir.compare(at, 4, std::string("PK\x01\x02", 4)) != 0) return "";
    const std::size_t name_len = le(dir, at + 28, 2), extra_len = le(dir, at + 30, 2),
                      comment_len = le(dir, at + 32, 2);
    if (at + 46 + name_len > dir.size()) return "";
    const std::string name = dir.substr(at + 46, name_len);
    if (!seen.insert(name).second) return name;
    at += 46 + name_len + extra_len + comment_len;
  }
  return "";
}

// Deflate cannot expand data by more than 1032:1 (RFC 1951: a 258-byte match in 2 bits at best);
// a larger claim is a lie.
constexpr std::uint64_t kMaxDeflateRatio = 1032;

}  // namespace

namespace detail {

// The .npy bytes of each member of an open archive (only its header where whole(key, claim) says
// false). `where` names the archive in messages.
std::map<std::string, std::string> read_members(zip_t* zip, std::uint64_t file_size,
                                                const std::string& where, const LoadLimits& limits,
                                                const WholeMember& whole) {
  std::map<std::string, std::string> members;
  // The most an .npy member may hold: its largest header and the largest array.
  std::uint64_t max_member = 0;
  if (__builtin_add_overflow(std::uint64_t(limits.max_array_bytes),
                             std::uint64_t(limits.max_header_bytes) + 12, &max_member))
    max_member = ~std::uint64_t(0);
  std::uint64_t total = 0;
  const zip_int64_t n = zip_get_num_entries(zip, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip, static_cast<zip_uint64_t>(i), 0, &st) != 0)
      throw io_error(where + ": cannot read entry " + std::to_string(i) + ": " + zip_strerror(zip));
    const std::string name = st.name ? st.name : "";
    if (!name.empty() && name.back() == '/') continue;  // a directory entry
    const std::string key = key_of(name);
    const std::string source = where + ": key \"" + key + "\"";
    if (members.count(key)) throw io_error(source + ": appears twice in the archive");

    // 1. The directory's claims against the file and the limits, before allocating anything.
    const std::uint64_t claim = st.size, packed = st.comp_size;
    const std::string claims = "the zip directory claims " + std::to_string(claim) + " bytes";
    if (packed > file_size)
      throw io_error(source + ": the zip directory claims " + std::to_string(packed) +
                     " compressed bytes, but the whole file has " + std::to_string(file_size));
    // numpy.savez stores, numpy.savez_compressed deflates; other methods (bzip2, xz, zstd) can
    // expand far beyond deflate's bound, so they are refused rather than trusted.
    if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE)
      throw io_error(
          source + ": compression method " + std::to_string(st.comp_method) +
          " is not supported, expected stored (0) or deflated (8) as numpy.savez writes");
    if (st.comp_method == ZIP_CM_STORE && claim != packed)
      throw io_error(source + ": " + claims + " for a stored (uncompressed) member of " +
                     std::to_string(packed) + " bytes");
    if (st.comp_method != ZIP_CM_STORE && claim / kMaxDeflateRatio > packed + 1)
      throw io_error(source + ": " + claims + " from " + std::to_string(packed) +
                     " compressed bytes, more than deflate can expand (1032:1)");
    const bool read_whole = !whole || whole(key, claim);  // may throw: a member's own limit
    // A header-only read allocates no data: the size limits are for the caller to apply.
    if (read_whole && claim > max_member)
      throw io_error(source + ": the zip directory claims " + bytes_text(double(claim)) +
                     ", more than LoadLimits::max_array_bytes = " +
                     bytes_text(double(limits.max_array_bytes)) +
                     " allows (raise the limit to load it)");
    if (read_whole &&
        (__builtin_add_overflow(total, claim, &total) || total > limits.max_total_bytes))
      throw io_error(source + ": the members so far claim " + bytes_text(double(total)) +
                     ", more than LoadLimits::max_total_bytes = " +
                     bytes_text(double(limits.max_total_bytes)) + " (raise the limit to load it)");

    // 2. Read the member in chunks: memory grows with the data that really arrives. Once the
    //    .npy header is in, its own size (header + prod(shape) · itemsize) must match the claim;
    //    a header-only read stops there.
    std::unique_ptr<zip_file_t, ZipFileCloser> file(
        zip_fopen_index(zip, static_cast<zip_uint64_t>(i), 0));
    if (!file) throw io_error(source + ": cannot open the member: " + zip_strerror(zip));
    std::string bytes;
    bool header_checked = false;
    try {
      const std::uint64_t first = read_whole ? claim : limits.max_header_bytes + 12;
      bytes.reserve(
          static_cast<std::size_t>(std::min<std::uint64_t>(first, std::uint64_t(64) << 20)));
      std::vector<char> chunk(read_whole ? 1 << 16 : 1 << 10);
      while (read_whole || !header_checked) {
        const zip_int64_t got = zip_fread(file.get(), chunk.data(), chunk.size());
        if (got < 0)
          throw io_error(source + ": cannot read the member (corrupt archive): " +
                         zip_error_strerror(zip_file_get_error(file.get())));
        if (got == 0) break;  // the end: libzip has compared the CRC
        if (bytes.size() + static_cast<std::size_t>(got) > claim)
          throw io_error(source + ": member has more than the " + std::to_string(claim) +
                         " bytes the zip directory says");
        bytes.append(chunk.data(), static_cast<std::size_t>(got));
        if (!header_checked && bytes.size() >= 12) {
          NpyHeader h;
          try {
            h = parse_npy_header(bytes, source, limits);
          } catch (const io_error&) {
            if (bytes.size() < claim && bytes.size() < limits.max_header_bytes + 12)
              continue;              // header not complete yet
            if (!read_whole) throw;  // a header-only read: the header is the answer
            header_checked = true;   // not an .npy member: the parser reports it later
            continue;
          }
          header_checked = true;
          const std::size_t expected = h.file_size();
          if (expected != 0 && expected != claim)
            throw io_error(source + ": the .npy header says " + std::to_string(expected) +
                           " bytes (shape " + shape_str(h.shape) + ", dtype '" + h.descr + "'), " +
                           claims);
          if (!read_whole) bytes.resize(h.data_offset);
        }
      }
    } catch (const std::bad_alloc&) {
      throw io_error(source + ": out of memory reading the member (" + claims + ")");
    }
    if (read_whole && bytes.size() != claim)
      throw io_error(source + ": member has " + std::to_string(bytes.size()) +
                     " bytes, the zip directory says " + std::to_string(claim));
    if (!read_whole && !header_checked)
      parse_npy_header(bytes, source, limits);  // throws: cut short
    members.emplace(key, std::move(bytes));
  }
  return members;
}

}  // namespace detail

namespace {

struct SourceFree {
  void operator()(zip_source_t* s) const { zip_source_free(s); }
};

// Opens `src` (taking it over) as an archive; a duplicate name is reported by name.
ZipPtr open_archive(zip_source_t* src, const ReadAt& read_at, std::uint64_t file_size,
                    const std::string& where) {
  // ZIP_CHECKCONS checks the central directory against the local headers, which catches
  // truncated and spliced files.
  zip_error_t error;
  zip_error_init(&error);
  zip_t* z = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (!z) {
    const int code = zip_error_code_zip(&error);
    zip_error_fini(&error);
    zip_source_free(src);
    if (code == ZIP_ER_EXISTS) {
      const std::string name = duplicate_member(read_at, file_size);
      throw io_error(where + ": two members are named \"" + name +
                     "\" (a zip archive with duplicate names; numpy.savez never writes one)");
    }
    throw io_error(where + ": cannot open as a zip archive (.npz): " + zip_code_text(code));
  }
  zip_error_fini(&error);
  return ZipPtr(z);
}

}  // namespace

namespace detail {

std::map<std::string, std::string> read_npz_file(const std::string& path, const std::string& where,
                                                 const LoadLimits& limits,
                                                 const WholeMember& whole) {
  const std::uint64_t file_size = regular_file_size(path, where);
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* src = zip_source_file_create(path.c_str(), 0, -1, &error);
  if (!src) {
    const std::string text = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw io_error(where + ": cannot open as a zip archive (.npz): " + text);
  }
  zip_error_fini(&error);
  const ReadAt read_at = [&](std::uint64_t offset, std::size_t n) {
    std::ifstream in(path, std::ios::binary);
    std::string b(n, '\0');
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(&b[0], static_cast<std::streamsize>(n));
    b.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
    return b;
  };
  ZipPtr zip = open_archive(src, read_at, file_size, where);
  return read_members(zip.get(), file_size, where, limits, whole);
}

std::map<std::string, std::string> read_npz_bytes(const std::string& bytes,
                                                  const std::string& where,
                                                  const LoadLimits& limits,
                                                  const WholeMember& whole) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  zip_error_fini(&error);
  if (!src) throw io_error(where + ": cannot create a zip source");
  const ReadAt read_at = [&](std::uint64_t offset, std::size_t n) {
    return offset >= bytes.size() ? std::string()
                                  : bytes.substr(static_cast<std::size_t>(offset), n);
  };
  ZipPtr zip = open_archive(src, read_at, bytes.size(), where);
  return read_members(zip.get(), bytes.size(), where, limits, whole);
}

StateDict parse_members(std::map<std::string, std::string>&& members, const std::string& where,
                        const LoadLimits& limits) {
  StateDict state;
  // Each member's bytes are freed once parsed: the peak is the members plus one array.
  for (auto it = members.begin(); it != members.end(); it = members.erase(it))
    state.emplace(it->first, parse_npy(it->second, where + ": key \"" + it->first + "\"", limits));
  return state;
}

std::map<std::string, NpyHeader> parse_headers(const std::map<std::string, std::string>& members,
                                               const std::string& where, const LoadLimits& limits) {
  std::map<std::string, NpyHeader> headers;
  for (const auto& kv : members)
    headers.emplace(kv.first,
                    parse_npy_header(kv.second, where + ": key \"" + kv.first + "\"", limits));
  return headers;
}

}  // namespace detail

namespace {
const detail::WholeMember kHeadersOnly = [](const std::string&, std::uint64_t) { return false; };
}  // namespace

std::map<std::string, std::string> load_npz_members(const std::string& path,
                                                    const LoadLimits& limits) {
  return detail::read_npz_file(path, "load_npz: " + path, limits, nullptr);
}

std::map<std::string, std::string> parse_npz_members(const std::string& bytes,
                                                     const std::string& source,
                                                     const LoadLimits& limits) {
  return detail::read_npz_bytes(bytes, "parse_npz: " + source, limits, nullptr);
}

StateDict load_npz(const std::string& path, const LoadLimits& limits) {
  const std::string where = "load_npz: " + path;
  return detail::parse_members(detail::read_npz_file(path, where, limits, nullptr), where, limits);
}

StateDict parse_npz(const std::string& bytes, const std::string& source, const LoadLimits& limits) {
  const std::string where = "parse_npz: " + source;
  return detail::parse_members(detail::read_npz_bytes(bytes, where, limits, nullptr), where,
                               limits);
}

std::map<std::string, NpyHeader> load_npz_headers(const std::string& path,
                                                  const LoadLimits& limits) {
  const std::string where = "load_npz_headers: " + path;
  return detail::parse_headers(detail::read_npz_file(path, where, limits, kHeadersOnly), where,
                               limits);
}

std::map<std::string, NpyHeader> parse_npz_headers(const std::string& bytes,
                                                   const std::string& source,
                                                   const LoadLimits& limits) {
  const std::string where = "parse_npz_headers: " + source;
  return detail::parse_headers(detail::read_npz_bytes(bytes, where, limits, kHeadersOnly), where,
                               limits);
}

void save_npz_members(const std::string& path, const std::map<std::string, std::string>& members,
                      bool compressed) {
  const std::string where = "save_npz: " + path;
  if (members.empty()) {
    // libzip deletes an archive left with no members; numpy.savez() writes an empty zip: just
    // the 22-byte end-of-central-directory record.
    write_file_bytes(path, std::string("PK\x05\x06", 4) + std::string(18, '\0'), "save_npz");
    return;
  }
  int code = 0;
  ZipPtr zip(zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  if (!zip) throw io_error(where + ": cannot create the archive: " + zip_code_text(code));
  // libzip reads the sources only at zip_close, so the bytes live in `members` until then.
  for (const auto& kv : members) {
    const std::string name = kv.first + ".npy";
    zip_source_t* src = zip_source_buffer(zip.get(), kv.second.data(), kv.second.size(), 0);
    if (!src) throw io_error(where + ": key \"" + kv.first + "\": " + zip_strerror(zip.get()));
    const zip_int64_t index = zip_file_add(zip.get(), name.c_str(), src, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(src);
      throw io_error(where + ": key \"" + kv.first + "\": cannot add: " + zip_strerror(zip.get()));
    }
    if (zip_set_file_compression(zip.get(), static_cast<zip_uint64_t>(index),
                                 compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0)
      throw io_error(where + ": key \"" + kv.first +
                     "\": cannot set compression: " + zip_strerror(zip.get()));
  }
  // zip_close writes the archive (to a temporary file, renamed over `path` on success).
  zip_t* z = zip.release();
  if (zip_close(z) != 0) {
    const std::string text = zip_strerror(z);
    zip_discard(z);
    throw io_error(where + ": cannot write the archive: " + text);
  }
}

void save_npz(const std::string& path, const StateDict& state, bool compressed) {
  std::map<std::string, std::string> members;
  for (const auto& kv : state) members.emplace(kv.first, format_npy(kv.second));
  save_npz_members(path, members, compressed);
}

}  // namespace xenc
