// .npz archives through libzip: open the zip, read every member fully (libzip inflates
// deflated members and checks each member's CRC-32 when it is read to the end), parse it as .npy.
#include "xenc/io/npz.hpp"

#include <memory>
#include <vector>

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
  if (member.size() > ext.size() && member.compare(member.size() - ext.size(), ext.size(), ext) == 0)
    return member.substr(0, member.size() - ext.size());
  return member;
}

}  // namespace

std::map<std::string, std::string> load_npz_members(const std::string& path) {
  const std::string where = "load_npz: " + path;
  // 1. Open the archive (read-only; ZIP_CHECKCONS checks the central directory against the
  //    local headers, which catches truncated and spliced files).
  int code = 0;
  ZipPtr zip(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
  if (!zip) throw io_error(where + ": cannot open as a zip archive (.npz): " + zip_code_text(code));

  // 2. Read each member to the end into memory.
  std::map<std::string, std::string> members;
  const zip_int64_t n = zip_get_num_entries(zip.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(zip.get(), static_cast<zip_uint64_t>(i), 0, &st) != 0)
      throw io_error(where + ": cannot read entry " + std::to_string(i) + ": " +
                     zip_strerror(zip.get()));
    const std::string name = st.name;
    if (!name.empty() && name.back() == '/') continue;  // a directory entry
    const std::string key = key_of(name);
    const std::string source = where + ": key \"" + key + "\"";
    if (members.count(key)) throw io_error(source + ": appears twice in the archive");
    std::unique_ptr<zip_file_t, ZipFileCloser> file(zip_fopen_index(zip.get(), static_cast<zip_uint64_t>(i), 0));
    if (!file) throw io_error(source + ": cannot open the member: " + zip_strerror(zip.get()));
    std::string bytes(static_cast<std::size_t>(st.size), '\0');
    zip_int64_t got = bytes.empty() ? 0 : zip_fread(file.get(), &bytes[0], st.size);
    // One more read must hit the end: that is when libzip compares the CRC.
    char extra;
    const zip_int64_t tail = got == static_cast<zip_int64_t>(st.size) ? zip_fread(file.get(), &extra, 1) : 0;
    if (got < 0 || tail < 0)
      throw io_error(source + ": cannot read the member (corrupt archive): " +
                     zip_error_strerror(zip_file_get_error(file.get())));
    if (got != static_cast<zip_int64_t>(st.size) || tail != 0)
      throw io_error(source + ": member has " + std::to_string(got + tail) + " bytes, the zip directory says " +
                     std::to_string(st.size));
    members.emplace(key, std::move(bytes));
  }
  return members;
}

StateDict load_npz(const std::string& path) {
  StateDict state;
  for (const auto& kv : load_npz_members(path))
    state.emplace(kv.first, parse_npy(kv.second, "load_npz: " + path + ": key \"" + kv.first + "\""));
  return state;
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
      throw io_error(where + ": key \"" + kv.first + "\": cannot set compression: " +
                     zip_strerror(zip.get()));
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
