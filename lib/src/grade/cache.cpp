// The grader's build cache (xenc/grade/cache.hpp).
#include "xenc/grade/cache.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace xenc::grade {

namespace fs = std::filesystem;

namespace {

std::uint64_t fnv1a(const char* data, std::size_t n, std::uint64_t h = 14695981039346656037ull) {
  for (std::size_t i = 0; i < n; ++i)
    h = (h ^ std::uint64_t(static_cast<unsigned char>(data[i]))) * 1099511628211ull;
  return h;
}

std::string hex(std::uint64_t h) {
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(h));
  return s;
}

bool read_all(const fs::path& p, std::string& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return bool(in) || in.eof();
}

}  // namespace

std::string digest(const std::string& bytes) { return hex(fnv1a(bytes.data(), bytes.size())); }

std::string file_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::uint64_t h = 14695981039346656037ull;
  std::vector<char> buf(1 << 16);
  while (in.read(buf.data(), std::streamsize(buf.size())) || in.gcount() > 0)
    h = fnv1a(buf.data(), std::size_t(in.gcount()), h);
  return hex(h);
}

std::string tree_stamp(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return "";
  std::vector<std::string> lines;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st{};
    if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    lines.push_back(fs::relative(it->path(), dir, ec).string() + " " + std::to_string(st.st_size) +
                    " " + std::to_string(st.st_mtim.tv_sec) + "." +
                    std::to_string(st.st_mtim.tv_nsec));
  }
  std::sort(lines.begin(), lines.end());
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return digest(all);
}

bool ProgramCache::fetch(const std::string& key, const std::string& to) const {
  const fs::path entry = fs::path(dir_) / digest(key);
  std::string stored;
  if (!read_all(entry / "key", stored) || stored != key) return false;
  std::error_code ec;
  fs::copy_file(entry / "program", to, fs::copy_options::overwrite_existing, ec);
  if (ec) return false;
  fs::permissions(to,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  ec);
  return !ec;
}

bool ProgramCache::store(const std::string& key, const std::string& program) const {
  static std::atomic<unsigned> serial{0};
  std::error_code ec;
  if (!fs::exists(dir_, ec)) {
    fs::create_directories(dir_, ec);
    fs::permissions(dir_, fs::perms::owner_all, ec);
  }
  const fs::path entry = fs::path(dir_) / digest(key);
  if (fs::exists(entry, ec)) return true;  // written once, never replaced
  // a fresh folder, complete before it is renamed into place
  const fs::path fresh =
      fs::path(dir_) / (".new-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
  fs::remove_all(fresh, ec);
  if (!fs::create_directory(fresh, ec) || ec) return false;
  fs::copy_file(program, fresh / "program", ec);
  bool ok = !ec;
  if (ok) {
    std::ofstream out(fresh / "key", std::ios::binary);
    out << key;
    ok = bool(out.flush());
  }
  // rename fails when another grader stored the same digest first: theirs stays
  if (!ok || std::rename(fresh.c_str(), entry.c_str()) != 0) {
    fs::remove_all(fresh, ec);
    return ok;
  }
  return true;
}

}  // namespace xenc::grade
