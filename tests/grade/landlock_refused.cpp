// A container that refuses Landlock, played on a kernel that has it: a seccomp filter makes the
// Landlock calls fail, then a box with namespaces turned off runs /bin/cat on a file outside it.
// Prints the report's Sandbox lines, then the run's exit code and output (test_runner.cpp).
//
//   landlock_refused MODE FILE
//     eperm           every Landlock call fails with EPERM (a seccomp profile that does not
//                     list them: Docker's default before moby#43199, 2022)
//     enosys          every Landlock call fails with ENOSYS (as in gVisor)
//     restrict-eperm  a ruleset can be made, restricting oneself fails with EPERM
#include <xenc/grade/sandbox.hpp>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#ifndef SYS_landlock_create_ruleset  // the same numbers on x86-64 and arm64
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

namespace {

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
#endif

// Refuses the calls in nrs with err; everything else is allowed.
bool refuse(const std::vector<unsigned>& nrs, unsigned err) {
  std::vector<sock_filter> code = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
                                   BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
                                   BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
                                   BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr))};
  for (unsigned nr : nrs) {
    code.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1));
    code.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | err));
  }
  code.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  const sock_fprog prog{static_cast<unsigned short>(code.size()), code.data()};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  const std::vector<unsigned> all = {SYS_landlock_create_ruleset, SYS_landlock_add_rule,
                                     SYS_landlock_restrict_self};
  bool ok = false;
  if (mode == "eperm") ok = refuse(all, EPERM);
  if (mode == "enosys") ok = refuse(all, ENOSYS);
  if (mode == "restrict-eperm") ok = refuse({SYS_landlock_restrict_self}, EPERM);
  if (!ok) {
    std::fprintf(stderr, "usage: landlock_refused eperm|enosys|restrict-eperm FILE\n");
    return 2;
  }
  ::setenv("XENC_GRADE_NO_NAMESPACES", "1", 1);
  namespace grade = xenc::grade;
  const std::filesystem::path scratch = std::filesystem::temp_directory_path() /
                                        ("xenc-landlock-refused-" + std::to_string(::getpid()));
  std::filesystem::create_directories(scratch);
  grade::Box box;
  box.namespaces = true;
  box.scratch = scratch.string();
  grade::Limits limits;
  limits.time_seconds = 30;
  const grade::Outcome o = grade::run_isolated("/bin/cat", {"/bin/cat", argv[2]}, limits, {}, box);
  std::filesystem::remove_all(scratch);
  std::printf("%sexit %d\n%s%s", grade::sandbox_caveats().c_str(), o.exit_code, o.failure.c_str(),
              o.output.c_str());
  return 0;
}
