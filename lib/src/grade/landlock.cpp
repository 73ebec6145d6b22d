// Landlock for a Box without namespaces (landlock.hpp). The kernel's interface, from its
// documentation (Documentation/userspace-api/landlock.rst): a ruleset handles some access rights;
// each rule allows some of them beneath one file or folder; a process that restricts itself keeps
// only what the rules allow, for good, and so do the programs it executes. ABI 2 adds renames
// across folders (refer), 3 truncation, 4 TCP, 5 device ioctls, 6 signals and abstract sockets
// to other domains. The structures are declared here, so that the code does not depend on the
// kernel headers' age.
#include "landlock.hpp"

#include "paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define XENC_GRADE_LANDLOCK 1
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

namespace xenc::grade::detail {

namespace fs = std::filesystem;

namespace {

#ifdef XENC_GRADE_LANDLOCK
using Rights = std::uint64_t;

// the file-system rights (LANDLOCK_ACCESS_FS_*)
constexpr Rights kExecute = 1u << 0, kWriteFile = 1u << 1, kReadFile = 1u << 2, kReadDir = 1u << 3,
                 kRemoveDir = 1u << 4, kRemoveFile = 1u << 5, kMakeDir = 1u << 7,
                 kMakeReg = 1u << 8, kMakeSock = 1u << 9, kMakeFifo = 1u << 10, kMakeSym = 1u << 12,
                 kRefer = 1u << 13, kTruncate = 1u << 14, kIoctlDev = 1u << 15;
// the rights a rule on a file (not a folder) may hold
constexpr Rights kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;
constexpr Rights kRead = kExecute | kReadFile | kReadDir;
constexpr Rights kWrite = kRead | kWriteFile | kRemoveDir | kRemoveFile | kMakeDir | kMakeReg |
                          kMakeSock | kMakeFifo | kMakeSym | kRefer | kTruncate;
constexpr Rights kDevice = kReadFile | kWriteFile | kIoctlDev;

#ifndef SYS_landlock_create_ruleset  // the same numbers on x86-64 and arm64
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

// struct landlock_ruleset_attr (each ABI reads its own prefix of it)
struct RulesetAttr {
  std::uint64_t handled_access_fs = 0, handled_access_net = 0, scoped = 0;
};
// struct landlock_path_beneath_attr
struct __attribute__((packed)) PathBeneath {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};
constexpr unsigned kRulePathBeneath = 1;      // LANDLOCK_RULE_PATH_BENEATH
constexpr unsigned kCreateVersion = 1u << 0;  // LANDLOCK_CREATE_RULESET_VERSION
constexpr Rights kTcp = 3;                    // LANDLOCK_ACCESS_NET_BIND_TCP | CONNECT_TCP
constexpr Rights kScopes = 3;  // LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL

int abi_version() {
  static const int abi = [] {
    const long v = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateVersion);
    return v < 0 ? -errno : int(v);
  }();
  return abi;
}

// The rights this kernel's ABI knows (the rest cannot be handled, so stay allowed).
Rights handled_fs(int abi) {
  const int bits = abi >= 5 ? 16 : abi >= 3 ? 15 : abi >= 2 ? 14 : 13;
  return (Rights(1) << bits) - 1;
}

struct Rules {
  int fd = -1;
  Rights handled = 0;
  std::string error;
};

// One rule: rights beneath path (a file's rule keeps its file rights). A path that is not here
// adds nothing.
void add(Rules& r, const fs::path& path, Rights rights) {
  const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st{};
  Rights allowed = rights & r.handled;
  if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) allowed &= kFileRights;
  const PathBeneath rule{allowed, fd};
  if (allowed != 0 && ::syscall(SYS_landlock_add_rule, r.fd, kRulePathBeneath, &rule, 0) != 0 &&
      r.error.empty())
    r.error = "landlock_add_rule(" + path.string() + "): " + std::strerror(errno);
  ::close(fd);
}

// rights beneath path, but none for the hidden paths under it: each folder on the way to a hidden
// path is only listed, and its other entries get the rule one by one. Symbolic links get none:
// Landlock checks the file they lead to, which has its own rule or none.
void allow_beneath(Rules& r, const fs::path& path, Rights rights,
                   const std::vector<fs::path>& hidden) {
  bool holes = false;
  for (const fs::path& h : hidden) {
    if (under(path, h)) return;
    holes = holes || under(h, path);
  }
  if (!holes) return add(r, path, rights);
  add(r, path, kReadDir);
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec))
    if (!e.is_symlink(ec)) allow_beneath(r, e.path(), rights, hidden);
}
#endif

}  // namespace

const std::string& landlock_unavailable() {
  // read at each call, as XENC_GRADE_NO_NAMESPACES
  static const std::string off = "Landlock turned off (XENC_GRADE_NO_LANDLOCK is set)";
  if (std::getenv("XENC_GRADE_NO_LANDLOCK") != nullptr) return off;
  static const std::string why = [] {
#ifdef XENC_GRADE_LANDLOCK
    const int abi = abi_version();
    if (abi == -EOPNOTSUPP)
      return std::string("this kernel's Landlock is turned off (it is not in its lsm= list)");
    if (abi == -ENOSYS)
      return std::string(
          "Landlock's calls are missing here (ENOSYS: the kernel has none, or a seccomp profile "
          "hides them)");
    if (abi <= 0) return "Landlock is refused here (" + std::string(std::strerror(-abi)) + ")";
    // tried once in a child, as a run would (a container may refuse no_new_privs or the call)
    const pid_t pid = ::fork();
    if (pid < 0) return std::string("fork failed");
    if (pid == 0) {
      const RulesetAttr attr{kReadFile, 0, 0};
      const int fd = int(::syscall(SYS_landlock_create_ruleset, &attr, 8, 0));
      ::_exit(fd >= 0 && landlock_restrict(fd) ? 0 : 1);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::string();
    return std::string("Landlock is refused here (a process cannot restrict itself)");
#else
    return std::string("Landlock is Linux's (x86-64 and arm64 here)");
#endif
  }();
  return why;
}

int landlock_ruleset(const Box& box, std::string& error) {
#ifdef XENC_GRADE_LANDLOCK
  const int abi = abi_version();
  RulesetAttr attr;
  attr.handled_access_fs = handled_fs(abi);
  if (abi >= 4) attr.handled_access_net = kTcp;  // no rule: no TCP bind or connect
  if (abi >= 6) attr.scoped = kScopes;
  const std::size_t size = abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
  Rules r;
  r.handled = attr.handled_access_fs;
  r.fd = int(::syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (r.fd < 0) {
    error = std::string("landlock_create_ruleset: ") + std::strerror(errno);
    return -1;
  }
  std::vector<fs::path> hidden;
  std::error_code ec;
  for (const std::string& h : box.hidden) hidden.push_back(fs::weakly_canonical(h, ec));
  auto allow = [&](const fs::path& p, Rights rights) {
    allow_beneath(r, fs::weakly_canonical(p, ec), rights, hidden);
  };
  // what the box's namespaces show (bwrap_args in sandbox.cpp): /usr and the top folders that
  // are not links into it, the loader's files in /etc, the devices, the box's paths
  allow("/usr", kRead);
  for (const char* d : {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"})
    if (!fs::is_symlink(d, ec)) allow(d, kRead);
  for (const char* p :
       {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives"})
    allow(p, kRead);
  for (const char* d : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"})
    add(r, d, kDevice);
  // what a program asks the kernel about the machine (its own /proc/self is the child's rule)
  for (const char* p : {"/proc/cpuinfo", "/proc/meminfo", "/proc/stat"}) add(r, p, kReadFile);
  for (const std::string& p : box.read_only) allow(p, kRead);
  if (!box.scratch.empty()) allow(box.scratch, box.scratch_read_only ? kRead : kWrite);
  if (!r.error.empty()) {
    ::close(r.fd);
    error = r.error;
    return -1;
  }
  return r.fd;
#else
  (void)box;
  error = landlock_unavailable();
  return -1;
#endif
}

bool landlock_restrict(int ruleset) {
#ifdef XENC_GRADE_LANDLOCK
  const int self = ::open("/proc/self", O_PATH | O_CLOEXEC);
  if (self >= 0) {
    const PathBeneath rule{kReadFile | kReadDir, self};
    ::syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0);
    ::close(self);
  }
  const bool done = ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
                    ::syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  ::close(ruleset);
  return done;
#else
  (void)ruleset;
  return false;
#endif
}

}  // namespace xenc::grade::detail
