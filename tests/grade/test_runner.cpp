// The grader's process isolation (xenc/grade/sandbox.hpp) and its reports and settings
// (xenc/grade/runner.hpp), without a compiler: /bin/sh plays the child. The template checks
// (check_*.cmake) run the same machinery on compiled student code.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "xenc/core/error.hpp"
#include "xenc/grade/cache.hpp"
#include "xenc/grade/exercises.hpp"
#include "xenc/grade/runner.hpp"
#include "xenc/grade/sandbox.hpp"
#include "xenc/grade/wire.hpp"

#include "support/run_program.hpp"

namespace {

namespace grade = xenc::grade;
using nlohmann::json;

grade::Outcome sh(const std::string& script, grade::Limits limits = {}) {
  return grade::run_isolated("/bin/sh", {"/bin/sh", "-c", script}, limits);
}

// ---- isolation --------------------------------------------------------------------------------

// A child that answers each call with the call itself (cat copies descriptor 3 to 4).
constexpr const char* kEcho = "cat <&3 >&4";

grade::Box sandbox() {
  grade::Box box;
  box.namespaces = true;
  return box;
}

TEST(Sandbox, TheCallChannelIsNotStdout) {
  grade::Session s("/bin/sh",
                   {"/bin/sh", "-c", std::string("echo printed; echo fake 1>&2; ") + kEcho}, {}, {},
                   {});
  EXPECT_EQ(s.call("abc"), "abc");
  EXPECT_EQ(s.call(""), "");
  const grade::Outcome o = s.finish();
  EXPECT_TRUE(o.exited);
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_TRUE(o.answered);
  EXPECT_EQ(o.output, "printed\nfake\n");
  EXPECT_EQ(grade::describe_outcome(o, {}), "");
}

// A descriptor the grader inherited from whoever started it (here a pipe without close-on-exec,
// as a course platform's log or a terminal would be) is closed in the child.
TEST(Sandbox, InheritedDescriptorsAreClosedInTheChild) {
  int inherited[2];
  ASSERT_EQ(::pipe(inherited), 0);
  const std::string fd = std::to_string(inherited[1]);
  const grade::Outcome o =
      sh("if { echo leaked >&" + fd + "; } 2>/dev/null; then echo open; else echo closed; fi");
  ::close(inherited[1]);
  char buf[16];
  const ssize_t n = ::read(inherited[0], buf, sizeof buf);
  ::close(inherited[0]);
  EXPECT_EQ(n, 0) << "the child wrote to descriptor " << fd;
  EXPECT_EQ(o.output, "closed\n");
}

TEST(Sandbox, ASegfaultIsNamed) {
  const grade::Outcome o = sh("kill -SEGV $$");
  EXPECT_EQ(o.signal, SIGSEGV);
  EXPECT_EQ(grade::describe_outcome(o, {}).rfind("crashed with SIGSEGV (segmentation fault", 0), 0u)
      << grade::describe_outcome(o, {});
}

TEST(Sandbox, AnAbortIsNamed) {
  const grade::Outcome o = sh("kill -ABRT $$");
  EXPECT_EQ(grade::describe_outcome(o, {}).rfind("crashed with SIGABRT (abort", 0), 0u);
}

TEST(Sandbox, AHangIsKilledAtTheWallClockLimit) {
  grade::Limits limits;
  limits.time_seconds = 1.0;
  const grade::Outcome o = sh("while :; do :; done", limits);
  EXPECT_TRUE(o.timed_out);
  EXPECT_EQ(o.signal, SIGKILL);
  EXPECT_GE(o.seconds, 1.0);
  EXPECT_LT(o.seconds, 10.0);  // killed, not waited for (generous: the machine may be loaded)
  EXPECT_EQ(grade::describe_outcome(o, limits),
            "exceeded the time limit of 1 s (an infinite loop?) and was killed");
}

TEST(Sandbox, ACallThatHangsIsKilledAtTheWallClockLimit) {
  grade::Limits limits;
  limits.time_seconds = 1.0;
  grade::Session s("/bin/sh", {"/bin/sh", "-c", "sleep 30"}, limits, {}, {});
  EXPECT_THROW(s.call("abc"), xenc::grade::wire::WireError);
  const grade::Outcome o = s.finish();
  EXPECT_TRUE(o.timed_out);
  EXPECT_LT(o.seconds, 10.0);
}

TEST(Sandbox, ASleepingGrandchildDoesNotHoldTheParent) {
  grade::Limits limits;
  limits.time_seconds = 1.0;
  const grade::Outcome o = sh("sleep 30 & sleep 30", limits);
  EXPECT_TRUE(o.timed_out);
  EXPECT_LT(o.seconds, 10.0);
}

TEST(Sandbox, TheMemoryLimitIsTheAddressSpace) {
  grade::Limits limits;
  limits.memory_mib = 300;
  const grade::Outcome o = sh("ulimit -v", limits);
  EXPECT_EQ(o.output, std::to_string(300 * 1024) + "\n");
}

TEST(Sandbox, EndingBeforeAnsweringFails) {
  grade::Session s("/bin/sh", {"/bin/sh", "-c", "echo '11 of 11 exercises passed'; exit 0"}, {}, {},
                   {});
  EXPECT_THROW(s.call("abc"), xenc::grade::wire::WireError);
  EXPECT_EQ(grade::describe_outcome(s.finish(), {}),
            "ended with code 0 before answering every call (did the code call exit() or "
            "std::quick_exit?)");
}

TEST(Sandbox, OutputIsCappedButDrained) {
  grade::Limits limits;
  limits.output_bytes = 100;
  const grade::Outcome o = sh("yes | head -c 1000000; echo done", limits);
  EXPECT_EQ(o.output.size(), 100u);
  EXPECT_TRUE(o.output_truncated);
  EXPECT_TRUE(o.exited);
}

// ---- the namespaces (these need bubblewrap, which scripts/setup.sh installs) -----------------

// Each check below fails without the namespaces: run with namespaces = false, the same script
// sees the machine's processes, files and network.
TEST(SandboxNamespaces, BubblewrapStartsHere) {
  EXPECT_EQ(grade::namespaces_unavailable(), "") << "these tests need bwrap (scripts/setup.sh)";
}

std::string pid_namespace_of(const std::string& pid) {
  char buf[64] = {0};
  const std::string link = "/proc/" + pid + "/ns/pid";
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, std::size_t(n)) : "";
}

// A /proc file's text, or "" when it cannot be read: the process may end between the listing of
// /proc and the read, and then read() fails with ESRCH (libstdc++'s filebuf throws on that, so
// this reads with open/read).
std::string read_proc_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, std::size_t(n));
  ::close(fd);
  return text;
}

// The machine's processes whose command line holds `mark` and that have not ended (a zombie has
// ended: it waits only for its parent), each as its /proc/<pid>/stat line.
std::vector<std::string> live_processes_marked(const std::string& mark) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string args = read_proc_file("/proc/" + pid + "/cmdline");
    if (args.find(mark) == std::string::npos) continue;
    std::string line = read_proc_file("/proc/" + pid + "/stat");
    if (const std::size_t end = line.find('\n'); end != std::string::npos) line.resize(end);
    const std::size_t close = line.rfind(')');
    if (line.empty() ||
        (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z'))
      continue;
    found.push_back(line);
  }
  return found;
}

TEST(SandboxNamespaces, ThePidNamespaceIsGoneAfterTheRun) {
  // a daemon started with setsid outlives its process group, not its PID namespace. The script
  // ends only once the daemon is in its own session (it says "up" after setsid), so without the
  // sandbox the grader's group kill always misses it. It is found afterwards by its command
  // line, which holds 59.<this test's pid>, not by its namespace: the kernel gives a freed
  // namespace's number to the next namespace made on the machine (another sandbox running beside
  // this test), so processes "in that namespace" can be someone else's.
  const std::string seconds = "59." + std::to_string(::getpid());
  ASSERT_TRUE(live_processes_marked(seconds).empty());
  grade::Limits limits;
  limits.time_seconds = 5;
  const grade::Outcome o =
      grade::run_isolated("/bin/sh",
                          {"/bin/sh", "-c",
                           "readlink /proc/self/ns/pid; setsid -f sh -c 'echo up; exec sleep " +
                               seconds + "' </dev/null 2>/dev/null | head -n 1"},
                          limits, {}, sandbox());
  ASSERT_TRUE(o.sandboxed);
  EXPECT_NE(o.output.find("\nup\n"), std::string::npos) << o.output;
  const std::string ns = o.output.substr(0, o.output.find('\n'));
  ASSERT_FALSE(ns.empty());
  EXPECT_NE(ns, pid_namespace_of("self"));
  // the kernel kills what is left in the namespace when its first process ends; on a loaded
  // machine the killed daemon may take a while to go, so wait for it, at most 30 s (without the
  // sandbox it lives its 59 s: it is in no process group the grader kills)
  std::vector<std::string> left = live_processes_marked(seconds);
  for (int i = 0; i < 300 && !left.empty(); ++i) {
    ::usleep(100000);
    left = live_processes_marked(seconds);
  }
  std::string who;
  for (const std::string& line : left) who += line + "\n";
  EXPECT_TRUE(left.empty()) << left.size() << " processes left from namespace " << ns << ":\n"
                            << who;
}

TEST(SandboxNamespaces, NoPathOutsideTheBoxCanBeOpened) {
  const std::string secret = "/tmp/xenc-sandbox-secret-" + std::to_string(::getpid());
  std::ofstream(secret) << "secret\n";
  const std::string script = "cat " + secret +
                             " /etc/hostname /root/.bashrc 2>/dev/null; "
                             "ls / | tr '\\n' ' '";
  const grade::Outcome inside =
      grade::run_isolated("/bin/sh", {"/bin/sh", "-c", script}, {}, {}, sandbox());
  const grade::Outcome outside = grade::run_isolated("/bin/sh", {"/bin/sh", "-c", script}, {});
  std::remove(secret.c_str());
  EXPECT_EQ(inside.output.find("secret"), std::string::npos) << inside.output;
  EXPECT_NE(outside.output.find("secret"), std::string::npos) << outside.output;
  // the root holds the read-only system, an empty /tmp, /proc and /dev, nothing of the teacher's
  EXPECT_EQ(inside.output.find("home"), std::string::npos) << inside.output;
  EXPECT_EQ(inside.output.find("root"), std::string::npos) << inside.output;
}

// Box::hidden: a folder under /usr seen empty, a file under /usr that cannot be read (how the
// library and its full headers are hidden from a "library_calls": false exercise when they are
// installed under /usr).
TEST(SandboxNamespaces, HiddenPathsCannotBeRead) {
  const std::string script =
      "for f in /usr/include/stdio.h /usr/include/math.h; do "
      "  if cat $f > /dev/null 2>&1; then echo readable; else echo unreadable; fi; done; "
      "ls /usr/include/xtensor | wc -l";
  grade::Box box = sandbox();
  box.hidden = {"/usr/include/stdio.h", "/usr/include/xtensor"};
  const grade::Outcome inside =
      grade::run_isolated("/bin/sh", {"/bin/sh", "-c", script}, {}, {}, box);
  const grade::Outcome outside = grade::run_isolated("/bin/sh", {"/bin/sh", "-c", script}, {});
  std::istringstream in(inside.output), out(outside.output);
  std::string stdio_in, math_in, stdio_out, math_out;
  std::size_t xtensor_in = 1, xtensor_out = 0;
  in >> stdio_in >> math_in >> xtensor_in;
  out >> stdio_out >> math_out >> xtensor_out;
  EXPECT_EQ(stdio_in, "unreadable") << inside.output;
  EXPECT_EQ(xtensor_in, 0u) << inside.output;
  EXPECT_EQ(math_in, "readable") << "a path not hidden is as outside: " << inside.output;
  EXPECT_EQ(stdio_out, "readable") << outside.output;
  EXPECT_GT(xtensor_out, 0u) << outside.output;
}

TEST(SandboxNamespaces, TheNetworkIsAbsent) {
  // /proc/net/dev lists the interfaces the process can use: only the loopback inside
  const std::string script = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' '";
  const grade::Outcome inside =
      grade::run_isolated("/bin/sh", {"/bin/sh", "-c", script}, {}, {}, sandbox());
  EXPECT_EQ(inside.output, "lo ");
  const grade::Outcome outside = grade::run_isolated("/bin/sh", {"/bin/sh", "-c", script}, {});
  EXPECT_NE(outside.output, "lo ") << "this machine has no network to take away";
}

TEST(SandboxNamespaces, TheProcessLimitHolds) {
  // forks until fork fails (each child sleeps), and prints how many it started
  const std::string program =
      "import os, time\n"
      "n = 0\n"
      "for i in range(40):\n"
      "    try:\n"
      "        p = os.fork()\n"
      "    except OSError:\n"
      "        break\n"
      "    if p == 0:\n"
      "        time.sleep(2)\n"
      "        os._exit(0)\n"
      "    n += 1\n"
      "print(n)\n";
  grade::Limits limits;
  limits.processes = 6;
  limits.time_seconds = 20;
  const std::vector<std::string> args = {"/usr/bin/python3", "-c", program};
  const grade::Outcome inside = grade::run_isolated(args[0], args, limits, {}, sandbox());
  ASSERT_TRUE(inside.sandboxed);
  // python itself and the sandbox's first process count too: fewer than 6 children
  EXPECT_GE(std::stoi("0" + inside.output), 1) << inside.output;
  EXPECT_LT(std::stoi("0" + inside.output), 6) << inside.output;
  const grade::Outcome outside = grade::run_isolated(args[0], args, limits);
  EXPECT_EQ(outside.output, "40\n");
}

// Box::one_process, the run of a student's program: every way to memory outside its one
// address space is refused, its threads still start, and it writes only a /tmp of
// Limits::file_mib. Without it, in the same sandbox, the same script forks, makes a memory file
// and a shared segment, and writes its folder (in a 512 MiB limit, 20 processes of 400 MiB, 3 GiB
// of memory files, 2 GiB of shared segments and 3 GiB in /tmp, /dev or the folder all fitted).
constexpr const char* kMemoryEscapes = R"(import ctypes, errno, os, signal, threading
libc = ctypes.CDLL(None, use_errno=True)
def outcome(r):
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
def attempt(name, f):
    try:
        r = f()
        print(name, r if isinstance(r, str) else "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
def fork():
    p = os.fork()
    if p == 0:
        os._exit(0)
    os.waitpid(p, 0)
def shm():
    i = libc.shmget(0, 1 << 20, 0o1600)
    if i >= 0:
        libc.shmctl(i, 0, None)
    return outcome(i)
def thread():
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
def write(path):
    with open(path, "wb") as f:
        f.write(b"x")
attempt("fork", fork)
attempt("memfd", lambda: os.close(os.memfd_create("x")))
attempt("shmget", shm)
attempt("unshare", lambda: outcome(libc.unshare(0x10000000)))
attempt("thread", thread)
attempt("kill", lambda: os.kill(os.getppid(), 0))
attempt("tgkill_parent", lambda: outcome(libc.tgkill(os.getppid(), os.getppid(), 0)))
attempt("ptrace", lambda: outcome(libc.ptrace(16, os.getppid(), None, None)))
signal.signal(signal.SIGUSR1, lambda *a: None)
attempt("raise", lambda: signal.raise_signal(signal.SIGUSR1))
attempt("folder", lambda: write("f"))
attempt("dev", lambda: write("/dev/f"))
mib = 0
try:
    for i in range(12):
        with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "f%d" % i), "wb") as f:
            for k in range(4):
                f.write(b"x" * (1 << 20))
                f.flush()
                mib += 1
except OSError as e:
    print("tmp", mib, errno.errorcode[e.errno])
)";

std::map<std::string, std::string> attempts(const std::string& output) {
  std::map<std::string, std::string> seen;
  std::istringstream in(output);
  for (std::string name, result; in >> name >> result;) seen[name] = result;
  return seen;
}

TEST(SandboxNamespaces, OneProcessHoldsOnlyItsAddressSpaceAndASizedTmp) {
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / ("xenc-one-process-" + std::to_string(::getpid()));
  std::filesystem::create_directories(scratch);
  if (::geteuid() == 0) ASSERT_EQ(::chown(scratch.c_str(), 65534, 65534), 0);
  grade::Box box = sandbox();
  box.scratch = scratch.string();
  grade::Limits limits;
  limits.file_mib = 16;
  limits.time_seconds = 30;
  const std::vector<std::string> args = {"/usr/bin/python3", "-c", kMemoryEscapes};
  const grade::Outcome without = grade::run_isolated(args[0], args, limits, {}, box);
  box.one_process = true;
  box.scratch_read_only = true;
  const grade::Outcome with = grade::run_isolated(args[0], args, limits, {}, box);
  std::filesystem::remove_all(scratch);
  ASSERT_TRUE(with.sandboxed && without.sandboxed);
  // operator[]: an attempt the script never reached reads as ""
  auto in = attempts(with.output), out = attempts(without.output);
  for (const char* refused : {"fork", "memfd", "shmget", "unshare", "kill", "ptrace"})
    EXPECT_EQ(in[refused], "EPERM") << refused << ":\n" << with.output;
  for (const char* works : {"thread", "raise"})
    EXPECT_EQ(in[works], "ok") << works << ":\n" << with.output;
  EXPECT_EQ(in["folder"], "EROFS") << with.output;
  EXPECT_EQ(in["dev"], "EROFS") << with.output;
  // /tmp holds file_mib: a few MiB less once the files' own blocks are counted, never more
  const int tmp_mib = std::stoi("0" + in["tmp"]);
  EXPECT_LE(tmp_mib, 16) << with.output;
  EXPECT_GE(tmp_mib, 12) << with.output;
  EXPECT_NE(with.output.find("ENOSPC"), std::string::npos) << with.output;
  // the same script, the same sandbox, not one process: each escape works
  for (const char* works : {"fork", "memfd", "shmget", "thread", "folder", "kill"})
    EXPECT_EQ(out[works], "ok") << works << ":\n" << without.output;
  EXPECT_EQ(out["dev"], "EROFS") << "/dev is read-only in any box";
}

// The filter without namespaces (the fallback where bwrap cannot start): loaded by the child
// itself, the same refusals, and signals to its own process only.
TEST(Sandbox, OneProcessWithoutNamespacesHasTheSameFilter) {
  grade::Box box;
  box.one_process = true;
  const std::vector<std::string> args = {"/usr/bin/python3", "-c", kMemoryEscapes};
  grade::Limits limits;
  limits.time_seconds = 30;
  limits.file_mib = 1;  // no /tmp of its own here: its first file ends at 1 MiB (EFBIG)
  const std::filesystem::path tmp =
      std::filesystem::temp_directory_path() / ("xenc-one-process-" + std::to_string(::getpid()));
  std::filesystem::create_directories(tmp);
  box.scratch = tmp.string();  // its working folder: the script writes "f" there
  const grade::Outcome o =
      grade::run_isolated(args[0], args, limits, {"TMPDIR=" + tmp.string()}, box);
  box.one_process = false;
  const grade::Outcome without =
      grade::run_isolated(args[0], args, limits, {"TMPDIR=" + tmp.string()}, box);
  std::filesystem::remove_all(tmp);
  ASSERT_FALSE(o.sandboxed);
  auto in = attempts(o.output), out = attempts(without.output);
  // here its parent (this test) is in its PID namespace: no signal reaches another process, a
  // tgkill only its own
  for (const char* refused :
       {"fork", "memfd", "shmget", "unshare", "kill", "tgkill_parent", "ptrace"})
    EXPECT_EQ(in[refused], "EPERM") << refused << ":\n" << o.output;
  for (const char* works : {"thread", "raise"})
    EXPECT_EQ(in[works], "ok") << works << ":\n" << o.output;
  for (const char* works : {"fork", "memfd", "kill", "tgkill_parent", "raise"})
    EXPECT_EQ(out[works], "ok") << works << ":\n" << without.output;
  EXPECT_EQ(in["tmp"], "1") << o.output;
}

// Without namespaces (bwrap cannot start, as in a container), Landlock keeps a box to its own
// files: it reads /usr, its read_only paths but the hidden ones, and /proc/self; it writes only
// its scratch folder, where TMPDIR points; it makes no TCP connection. The other files are open to
// anyone (mode 0666 in a folder of 0777), so only Landlock can refuse them, here as root's nobody
// or as any user. The same script with no sandbox reaches all of them.
constexpr const char* kFileEscapes = R"(import errno, os, socket, sys
box, other, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
def attempt(name, f):
    try:
        f()
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
def read(path):
    with open(path, "rb") as f:
        f.read()
def write(path, mode="wb"):
    with open(path, mode) as f:
        f.write(b"x")
attempt("read_box", lambda: read(box + "/in_box.txt"))
attempt("list_box", lambda: os.listdir(box))
attempt("read_beside_hidden", lambda: read(box + "/sub/beside.txt"))
attempt("read_hidden", lambda: read(box + "/sub/hidden.txt"))
attempt("read_other", lambda: read(other + "/answer.txt"))
attempt("write_other", lambda: write(other + "/answer.txt", "ab"))
attempt("create_other", lambda: write(other + "/new.txt"))
attempt("read_etc", lambda: read("/etc/passwd"))
attempt("write_tmp", lambda: write(other + "-in-tmp"))
attempt("write_scratch", lambda: write("f"))
attempt("write_tmpdir", lambda: write(os.path.join(os.environ.get("TMPDIR", "/tmp"), "t")))
attempt("proc_self", lambda: read("/proc/self/status"))
attempt("dev_null", lambda: write("/dev/null"))
attempt("tcp", lambda: socket.create_connection(("127.0.0.1", port), timeout=5).close())
def local():
    s = socket.socket(socket.AF_UNIX)
    s.connect(other + "/local.sock")
    s.close()
attempt("local_socket", local)
)";

TEST(Sandbox, WithoutNamespacesLandlockKeepsABoxToItsFiles) {
  namespace fs = std::filesystem;
  const fs::path base = fs::temp_directory_path() / ("xenc-landlock-" + std::to_string(::getpid()));
  const fs::path box_dir = base / "box", other = base / "other", scratch = base / "scratch";
  fs::create_directories(box_dir / "sub");
  fs::create_directories(other);
  fs::create_directories(scratch);
  for (const fs::path& f : {box_dir / "in_box.txt", box_dir / "sub" / "beside.txt",
                            box_dir / "sub" / "hidden.txt", other / "answer.txt"})
    std::ofstream(f) << "text\n";
  fs::permissions(other / "answer.txt", fs::perms(0666));
  for (const fs::path& d : {base, other, scratch}) fs::permissions(d, fs::perms(0777));
  // a TCP port that accepts (the connection completes in its backlog)
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  // and a named local socket outside the box: Landlock lets a connect() through (it has no rule
  // for it), the one-process filter refuses every socket
  const int local = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un named{};
  named.sun_family = AF_UNIX;
  const std::string local_path = (other / "local.sock").string();
  std::snprintf(named.sun_path, sizeof named.sun_path, "%s", local_path.c_str());
  ASSERT_EQ(::bind(local, reinterpret_cast<sockaddr*>(&named), sizeof named), 0);
  ASSERT_EQ(::listen(local, 8), 0);
  const std::vector<std::string> args = {"/usr/bin/python3",
                                         "-c",
                                         kFileEscapes,
                                         box_dir.string(),
                                         (base / "other").string(),
                                         std::to_string(ntohs(addr.sin_port))};
  grade::Box box;
  box.namespaces = true;
  box.scratch = scratch.string();
  box.read_only = {box_dir.string()};
  box.hidden = {(box_dir / "sub" / "hidden.txt").string()};
  grade::Limits limits;
  limits.time_seconds = 30;
  ::setenv("XENC_GRADE_NO_NAMESPACES", "1", 1);
  const std::string landlock = grade::sandbox_caveats();
  const grade::Outcome in = grade::run_isolated(args[0], args, limits, {}, box);
  box.one_process = true;  // and the filter
  const grade::Outcome one = grade::run_isolated(args[0], args, limits, {}, box);
  const bool untouched = fs::file_size(other / "answer.txt") == 5 &&
                         !fs::exists(other / "new.txt") && !fs::exists(base / "other-in-tmp");
  // Landlock turned off (as where the kernel has none): said in a second line, and the box then
  // reads what its user may
  ::setenv("XENC_GRADE_NO_LANDLOCK", "1", 1);
  const std::string without_landlock = grade::sandbox_caveats();
  box.one_process = false;
  const grade::Outcome plain = grade::run_isolated(args[0], args, limits, {}, box);
  ::unsetenv("XENC_GRADE_NO_LANDLOCK");
  ::unsetenv("XENC_GRADE_NO_NAMESPACES");
  const grade::Outcome out =
      grade::run_isolated(args[0], args, limits, {"TMPDIR=" + scratch.string()}, grade::Box{});
  ::close(listener);
  ::close(local);
  fs::remove_all(base);
  ASSERT_FALSE(in.sandboxed);
  ASSERT_EQ(landlock.find("no Landlock"), std::string::npos) << "this kernel has Landlock";
  auto a = attempts(in.output), b = attempts(one.output), c = attempts(out.output);
  for (const char* works : {"read_box", "list_box", "read_beside_hidden", "write_scratch",
                            "write_tmpdir", "proc_self", "dev_null"}) {
    EXPECT_EQ(a[works], "ok") << works << ":\n" << in.output;
    EXPECT_EQ(c[works], "ok") << works << ":\n" << out.output;
  }
  for (const char* refused :
       {"read_hidden", "read_other", "write_other", "create_other", "read_etc", "write_tmp"}) {
    EXPECT_EQ(a[refused], "EACCES") << refused << ":\n" << in.output;
    EXPECT_EQ(b[refused], "EACCES") << refused << " (one process):\n" << one.output;
    EXPECT_EQ(c[refused], "ok") << refused << " (no sandbox):\n" << out.output;
  }
  EXPECT_EQ(a["tcp"], "EACCES") << "Landlock's TCP rule:\n" << in.output;
  EXPECT_EQ(b["tcp"], "EPERM") << "the filter's socket rule:\n" << one.output;
  EXPECT_EQ(c["tcp"], "ok") << out.output;
  EXPECT_EQ(b["local_socket"], "EPERM") << one.output;
  EXPECT_EQ(c["local_socket"], "ok") << out.output;
  EXPECT_TRUE(untouched) << "the sandboxed runs changed a file outside their box";
  EXPECT_EQ(landlock,
            "Sandbox: namespaces turned off (XENC_GRADE_NO_NAMESPACES is set); each exercise ran "
            "in a process with limits and Landlock's file rules, without namespaces.\n");
  EXPECT_EQ(without_landlock,
            "Sandbox: namespaces turned off (XENC_GRADE_NO_NAMESPACES is set); each exercise ran "
            "in a process with limits, without namespaces.\nSandbox: Landlock turned off "
            "(XENC_GRADE_NO_LANDLOCK is set): without namespaces, an exercise read and wrote what "
            "its user may.\n");
  EXPECT_EQ(attempts(plain.output)["read_etc"], "ok") << plain.output;
}

#ifdef XENC_LANDLOCK_REFUSED
// Where a container's seccomp profile refuses Landlock (played by landlock_refused.cpp on this
// kernel, which has it): the report's second line says why, and the run goes on with the limits.
// The line's claim is checked too: the run reads a file outside its box.
TEST(Sandbox, WhereLandlockIsRefusedTheReportSaysSo) {
  namespace fs = std::filesystem;
  const fs::path base =
      fs::temp_directory_path() / ("xenc-landlock-refused-" + std::to_string(::getpid()));
  fs::create_directories(base);
  fs::permissions(base, fs::perms(0755));
  const fs::path outside = base / "outside.txt";
  std::ofstream(outside) << "outside the box\n";
  fs::permissions(outside, fs::perms(0644));
  const std::string first =
      "Sandbox: namespaces turned off (XENC_GRADE_NO_NAMESPACES is set); each exercise ran in a "
      "process with limits, without namespaces.\n";
  const std::string then = ": without namespaces, an exercise read and wrote what its user may.\n";
  const std::pair<const char*, std::string> modes[] = {
      {"eperm", "Landlock is refused here (Operation not permitted)"},
      {"enosys",
       "Landlock's calls are missing here (ENOSYS: the kernel has none, or a seccomp profile "
       "hides them)"},
      {"restrict-eperm", "Landlock is refused here (a process cannot restrict itself)"}};
  for (const auto& [mode, why] : modes) {
    const xenc::test::RunResult r = xenc::test::run_program(
        XENC_LANDLOCK_REFUSED, std::string(mode) + " '" + outside.string() + "'", base.string());
    EXPECT_EQ(r.status, 0) << mode << ": " << r.err;
    EXPECT_EQ(r.out, first + "Sandbox: " + why + then + "exit 0\noutside the box\n") << mode;
  }
  fs::remove_all(base);
}
#endif

// ---- the call protocol ------------------------------------------------------------------------

namespace wire = xenc::grade::wire;

// A caller that plays the student's process in this one: it decodes the call, runs fn, encodes
// the answer (what serve does over the descriptors), optionally spoiling it.
struct LocalCaller : wire::Caller {
  std::function<std::string(const std::string&)> answer;
  std::string call(const std::string& request) override { return answer(request); }
};

TEST(Wire, ACallRoundTripsTensorsAndExceptions) {
  LocalCaller c;
  c.answer = [](const std::string& request) {
    wire::Reader r(request);
    xenc::Tensor2 x;
    wire::get(r, x);
    r.expect_end();
    wire::Writer w;
    if (x.shape()[0] == 0) {
      w.raw(std::uint8_t(wire::Status::invalid_argument));
      const std::string what = "empty";
      w.raw(std::uint64_t(what.size()));
      w.bytes(what.data(), what.size());
      return w.str();
    }
    w.raw(std::uint8_t(wire::Status::returned));
    wire::put(w, xenc::Tensor2(x * 2.0f));
    return w.str();
  };
  const auto f = wire::Remote<xenc::grade::signature::softmax>::make(c);
  const xenc::Tensor2 x = {{1.0f, -2.0f, 3.5f}, {0.25f, 0.0f, -0.0f}};
  const xenc::Tensor2 y = f(x);
  ASSERT_EQ(y.shape()[0], 2u);
  ASSERT_EQ(y.shape()[1], 3u);
  EXPECT_EQ(y(0, 2), 7.0f);
  EXPECT_EQ(y(1, 0), 0.5f);
  try {
    f(xenc::Tensor2::from_shape({0, 3}));
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "empty");
  }
}

TEST(Wire, AForgedAnswerIsAWireErrorNotACrash) {
  LocalCaller c;
  const auto f = wire::Remote<xenc::grade::signature::softmax>::make(c);
  const xenc::Tensor2 x = {{1.0f}};
  // a shape of 2^40 x 2^40 with no values
  c.answer = [](const std::string&) {
    wire::Writer w;
    w.raw(std::uint8_t(0));
    w.raw(std::uint64_t(1) << 40);
    w.raw(std::uint64_t(1) << 40);
    return w.str();
  };
  EXPECT_THROW(f(x), wire::WireError);
  c.answer = [](const std::string&) { return std::string("\0\2", 2); };  // cut short
  EXPECT_THROW(f(x), wire::WireError);
  c.answer = [](const std::string&) { return std::string(1, char(99)); };  // unknown status
  EXPECT_THROW(f(x), wire::WireError);
}

// ---- reports ----------------------------------------------------------------------------------

// Two exercises: one with a passed and a failed hidden check (2 points), one that crashed (3).
std::vector<grade::Graded> two_exercises() {
  grade::Graded a;
  a.exercise = "softmax";
  a.max_points = 2;
  grade::CheckResult pass, hidden;
  pass.name = "hand example";
  pass.passed = true;
  hidden.name = "hidden: reference values on the teacher's inputs";
  hidden.hidden = true;
  hidden.expected = "y [2, 2] = [0.1, 0.9, 0.5, 0.5]";
  hidden.computed = "y [2, 2] = [0.2, 0.8, 0.5, 0.5]";
  hidden.hint = "y[r, c] = exp(x[r, c] - max_r) / Σ exp(...). One row at a time.";
  a.result.exercise = "softmax";
  a.result.checks = {pass, hidden};
  a.points = 1;
  grade::Graded b;
  b.exercise = "merge_heads";
  b.max_points = 3;
  b.failure = "crashed with SIGSEGV (segmentation fault)";
  return {a, b};
}

TEST(Report, GradescopeFollowsTheResultsJsonSchema) {
  const json j = json::parse(
      grade::format_report(two_exercises(), grade::Format::gradescope, grade::HintLevel::full));
  EXPECT_EQ(j.at("score").get<double>(), 1.0);
  ASSERT_EQ(j.at("tests").size(), 3u);  // two checks + one failed exercise
  double sum = 0;
  for (const json& t : j.at("tests")) {
    EXPECT_TRUE(t.at("name").is_string());
    EXPECT_TRUE(t.at("output").is_string());
    const std::string status = t.at("status").get<std::string>();
    EXPECT_TRUE(status == "passed" || status == "failed") << status;
    const std::string vis = t.at("visibility").get<std::string>();
    EXPECT_TRUE(vis == "visible" || vis == "hidden") << vis;
    sum += t.at("max_score").get<double>();
  }
  EXPECT_EQ(sum, 5.0);
  EXPECT_EQ(j["tests"][1]["visibility"], "hidden");
  EXPECT_EQ(j["tests"][1]["output"].get<std::string>().find("0.9"), std::string::npos)
      << "a hidden check shows values";
  EXPECT_EQ(j["tests"][2]["score"], 0.0);
  EXPECT_EQ(j["tests"][2]["max_score"], 3.0);
  // the other top-level fields of Gradescope's specification (but the leaderboard's)
  EXPECT_TRUE(j.at("execution_time").is_number());
  EXPECT_TRUE(j.at("output").is_string());
  EXPECT_EQ(j.at("output_format"), "text");
  EXPECT_EQ(j.at("test_output_format"), "text");
  EXPECT_EQ(j.at("test_name_format"), "text");
  EXPECT_EQ(j.at("visibility"), "visible");
  EXPECT_EQ(j.at("stdout_visibility"), "hidden");
  EXPECT_EQ(j.at("extra_data"), (json{{"points", 1.0}, {"max_points", 5.0}, {"passed", false}}));
}

TEST(Report, JsonHasPointsPerCheckAndHidesHiddenValues) {
  const json j = json::parse(
      grade::format_report(two_exercises(), grade::Format::json, grade::HintLevel::brief));
  EXPECT_EQ(j["points"], 1.0);
  EXPECT_EQ(j["max_points"], 5.0);
  EXPECT_FALSE(j["passed"].get<bool>());
  const json& hidden = j["exercises"][0]["checks"][1];
  EXPECT_EQ(hidden["max_points"], 1.0);
  EXPECT_FALSE(hidden.contains("input"));
  EXPECT_FALSE(hidden.contains("computed"));
  EXPECT_EQ(j["exercises"][1]["status"], "failed: crashed with SIGSEGV (segmentation fault)");
}

TEST(Report, TextHintLevels) {
  auto graded = two_exercises();
  graded[0].result.checks[1].hidden = false;
  graded[0].result.checks[1].input = "x [2, 2] = [1, 2, 3, 3]";
  const std::string full =
      grade::format_report(graded, grade::Format::text, grade::HintLevel::full);
  const std::string brief =
      grade::format_report(graded, grade::Format::text, grade::HintLevel::brief);
  const std::string off = grade::format_report(graded, grade::Format::text, grade::HintLevel::off);
  EXPECT_NE(full.find("hint: y[r, c] = exp(x[r, c] - max_r) / Σ exp(...). One row at a time."),
            std::string::npos)
      << full;
  EXPECT_NE(brief.find("hint: y[r, c] = exp(x[r, c] - max_r) / Σ exp(...).\n"), std::string::npos)
      << brief;
  EXPECT_EQ(off.find("hint:"), std::string::npos) << off;
  EXPECT_NE(full.find("✘ merge_heads: crashed with SIGSEGV (segmentation fault) (0 of 3 points)"),
            std::string::npos);
  EXPECT_NE(full.find("0 of 2 exercises passed, 1 of 5 points"), std::string::npos) << full;
}

TEST(Report, JunitCountsFailures) {
  const std::string x =
      grade::format_report(two_exercises(), grade::Format::junit, grade::HintLevel::full);
  EXPECT_NE(x.find("<testsuites name=\"xencoder grade\" tests=\"3\" failures=\"2\">"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("<failure message=\"hidden check failed\">"), std::string::npos) << x;
}

// The lines of a report, each without its leading blanks (the text report's indentation), empty
// lines dropped.
std::vector<std::string> trimmed_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    l.erase(0, l.find_first_not_of(' '));
    if (!l.empty()) lines.push_back(l);
  }
  return lines;
}

std::string xml_unescape(std::string s) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}})
    for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
      s.replace(at, from.size(), to);
  return s;
}

// Every line of the text report is in the JSON report's "report" lines (or its "summary"), in a
// Gradescope test's output (or the top-level output) and in a JUnit failure or system-out, the
// same text; and no format has a line the text report lacks. A hidden check, a visible one with
// values and a hint, a crash with output and a stub, at every hint level.
TEST(Report, EveryFormatHoldsTheSameLines) {
  auto graded = two_exercises();
  grade::CheckResult visible;
  visible.name = "reference values";
  visible.input = "x [1, 2] = [1, 2]";
  visible.expected = "y [1, 2] = [0.2689, 0.7311]";
  visible.computed = "y [1, 2] = [0, 0]";
  visible.first_difference = "y[0, 0]: expected 0.2689, computed 0 (<- & \"quoted\")";
  visible.hint = "subtract the row's maximum first.";
  graded[0].result.checks.push_back(visible);
  graded[0].result.signature = "Tensor2 softmax(const Tensor2& x)";
  graded[1].output = "partial line 1\nsegfault <here> & there";
  grade::Graded stub;
  stub.exercise = "attention";
  stub.result.exercise = "attention";
  grade::CheckResult not_yet;
  not_yet.name = "hand example";
  not_yet.computed = "std::logic_error: not implemented yet";
  stub.result.checks = {not_yet};
  for (const grade::HintLevel hints :
       {grade::HintLevel::full, grade::HintLevel::brief, grade::HintLevel::off}) {
    auto all = graded;
    all.push_back(stub);
    const std::vector<std::string> text =
        trimmed_lines(grade::format_report(all, grade::Format::text, hints));
    ASSERT_GT(text.size(), 10u);
    // json: the exercises' "report" lines and the summary
    const json j = json::parse(grade::format_report(all, grade::Format::json, hints));
    std::string json_text = j.at("summary").get<std::string>() + "\n";
    for (const json& e : j.at("exercises")) {
      for (const json& l : e.at("report")) json_text += l.get<std::string>() + "\n";
      // each check's lines are the exercise's too
      std::string exercise_lines;
      for (const json& l : e.at("report")) exercise_lines += l.get<std::string>() + "\n";
      for (const json& c : e.at("checks"))
        for (const json& l : c.at("report"))
          EXPECT_NE(exercise_lines.find(l.get<std::string>() + "\n"), std::string::npos)
              << l << " is in a check's report lines, not its exercise's";
    }
    // gradescope: the tests' outputs and the top-level output
    const json gs = json::parse(grade::format_report(all, grade::Format::gradescope, hints));
    std::string gs_text = gs.at("output").get<std::string>();
    for (const json& t : gs.at("tests")) gs_text += t.at("output").get<std::string>();
    // junit: the failures' bodies and the suites' system-out (it has no summary line)
    const std::string x = grade::format_report(all, grade::Format::junit, hints);
    std::string junit_text;
    for (const std::string tag : {"failure", "system-out"})
      for (std::size_t at = 0; (at = x.find("<" + tag, at)) != std::string::npos;) {
        const std::size_t body = x.find('>', at) + 1;
        const std::size_t end = x.find("</" + tag + ">", body);
        if (x[body - 2] != '/' && end != std::string::npos)
          junit_text += xml_unescape(x.substr(body, end - body));
        at = body;
      }
    const std::string summary = text.back();
    for (const auto& [name, other] : std::vector<std::pair<std::string, std::string>>{
             {"json", json_text}, {"gradescope", gs_text}, {"junit", junit_text}}) {
      const std::vector<std::string> lines = trimmed_lines(other);
      for (const std::string& l : text)
        if (!(name == "junit" && l == summary))
          EXPECT_NE(std::find(lines.begin(), lines.end(), l), lines.end())
              << name << " lacks the text report's line '" << l << "'";
      for (const std::string& l : lines)
        EXPECT_NE(std::find(text.begin(), text.end(), l), text.end())
            << name << " has a line the text report lacks: '" << l << "'";
    }
  }
}

// ---- settings ---------------------------------------------------------------------------------

// read_settings on `text`, written to a file of this test's own and removed after (ctest runs
// the tests side by side, and a teacher's /tmp/grading.json is not ours to overwrite).
grade::Settings read_settings_text(const std::string& text) {
  const std::string path = ::testing::TempDir() + "xenc_test_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                           std::to_string(::getpid()) + ".json";
  std::ofstream(path) << text;
  struct Remove {
    const std::string& path;
    ~Remove() { std::remove(path.c_str()); }
  } remove{path};
  return grade::read_settings(path);
}

TEST(Settings, ReadsEveryKey) {
  const grade::Settings s = read_settings_text(
      R"({"exercises": {"attention": 3, "softmax": 2}, "hints": "off", "hidden_seed": 7,
          "library_calls": false, "time_limit_seconds": 2.5, "memory_limit_mib": 128})");
  ASSERT_EQ(s.exercises.size(), 2u);
  EXPECT_EQ(s.exercises[0].first, "softmax");  // teaching order, not the file's
  EXPECT_EQ(s.exercises[1].second, 3.0);
  EXPECT_EQ(s.hints, grade::HintLevel::off);
  EXPECT_EQ(s.hidden_seed, 7u);
  EXPECT_FALSE(s.library_calls);
  EXPECT_EQ(s.limits.time_seconds, 2.5);
  EXPECT_EQ(s.limits.memory_mib, 128u);
}

TEST(Settings, RefusesTyposWithTheKeyAndTheExpectation) {
  auto message = [](const std::string& text) {
    try {
      read_settings_text(text);
    } catch (const xenc::config_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(R"({"hint": "off"})").find("unknown key \"hint\""), std::string::npos);
  EXPECT_NE(message(R"({"exercises": {"softmaxx": 1}})").find("unknown exercise \"softmaxx\""),
            std::string::npos);
  EXPECT_NE(message(R"({"hints": "some"})")
                .find("\"hints\" is \"some\", expected \"full\", \"brief\" or \"off\""),
            std::string::npos);
  EXPECT_NE(message(R"({"memory_limit_mib": 10})")
                .find("\"memory_limit_mib\" is 10, expected an integer in [64, "),
            std::string::npos);
  EXPECT_NE(message("{").find("is not valid JSON (the first error is at byte 2)"),
            std::string::npos);
}

// Every message names the file and the key; none is a JSON library's own.
std::string settings_error(const std::string& text) {
  try {
    read_settings_text(text);
  } catch (const xenc::config_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(".json': "), std::string::npos) << m;  // the file
    EXPECT_EQ(m.find("json.exception"), std::string::npos) << m;
    return m;
  }
  return "no error";
}

TEST(Settings, AMemoryLimitThatWouldWrapIsRefused) {
  // 2^44 MiB = 2^64 bytes: multiplied into bytes it wraps to a limit of 0
  EXPECT_NE(settings_error(R"({"memory_limit_mib": 17592186044416})")
                .find("\"memory_limit_mib\" is 17592186044416, expected an integer in [64, "),
            std::string::npos);
  // the machine's memory is the upper bound, and the message says how much it has
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const std::size_t mib = std::size_t(pages) / 1024 * std::size_t(page) / 1024;
  EXPECT_NE(settings_error("{\"memory_limit_mib\": " + std::to_string(mib + 1) + "}")
                .find("this machine has " + std::to_string(mib) + ")"),
            std::string::npos);
  EXPECT_EQ(
      read_settings_text("{\"memory_limit_mib\": " + std::to_string(mib) + "}").limits.memory_mib,
      mib);
}

TEST(Settings, ADuplicatedKeyIsAnError) {
  EXPECT_NE(settings_error(R"({"hints": "off", "hints": "full"})")
                .find("the key \"hints\" is written twice"),
            std::string::npos);
  EXPECT_NE(settings_error(R"({"exercises": {"softmax": 1, "softmax": 5}})")
                .find("the key \"softmax\" is written twice"),
            std::string::npos);
}

TEST(Settings, PointsMustBeFiniteAndInRange) {
  EXPECT_NE(settings_error(R"({"exercises": {"softmax": 1e308}})")
                .find("the points of \"softmax\" are 1e+308, expected a number in [0, 1000000]"),
            std::string::npos);
  EXPECT_NE(settings_error(R"({"exercises": {"softmax": -1}})").find("the points of \"softmax\""),
            std::string::npos);
  // JSON has no NaN: the word is not valid JSON, and the message says where
  EXPECT_NE(settings_error(R"({"exercises": {"softmax": NaN}})")
                .find("is not valid JSON (the first error is at byte 27)"),
            std::string::npos);
  EXPECT_EQ(read_settings_text(R"({"exercises": {"softmax": 1000000}})").exercises[0].second, 1e6);
}

TEST(Settings, TheSeedMustFitSixtyFourBits) {
  // 2^70: a JSON reader makes it an inexact double
  EXPECT_NE(settings_error(R"({"hidden_seed": 1180591620717411303424})")
                .find("\"hidden_seed\" is 1.1805916207174113e+21, expected an integer in [0, "
                      "18446744073709551615]"),
            std::string::npos);
  EXPECT_EQ(read_settings_text(R"({"hidden_seed": 18446744073709551615})").hidden_seed,
            std::uint64_t(18446744073709551615ull));
  EXPECT_NE(settings_error(R"({"hidden_seed": -1})").find("\"hidden_seed\" is -1"),
            std::string::npos);
}

TEST(Settings, AHugeFileIsRefusedBeforeItIsRead) {
  // 100 MB of spaces around an object
  const std::string path =
      ::testing::TempDir() + "xenc_test_huge_" + std::to_string(::getpid()) + ".json";
  {
    std::ofstream out(path);
    out << "{";
    const std::string block(1 << 20, ' ');
    for (int i = 0; i < 100; ++i) out << block;
    out << "}";
  }
  std::string m;
  try {
    grade::read_settings(path);
  } catch (const xenc::config_error& e) {
    m = e.what();
  }
  std::remove(path.c_str());
  EXPECT_NE(m.find("the file is 104857602 bytes, more than a settings file may be (1 MiB)"),
            std::string::npos)
      << m;
}

// ---- the registry -----------------------------------------------------------------------------

TEST(Registry, SixteenExercisesInTeachingOrder) {
  const auto& list = grade::exercises();
  ASSERT_EQ(list.size(), 16u);
  EXPECT_EQ(list.front().name, "sinusoidal_table");
  EXPECT_EQ(list[12].name, "relative_shift");
  // the three test-writing exercises last, each naming the function whose test the student writes
  EXPECT_EQ(list[13].name, "test_softmax");
  EXPECT_EQ(list[13].tests, "softmax");
  EXPECT_TRUE(list[13].check_runs);
  EXPECT_FALSE(list[13].check_remote);
  EXPECT_EQ(list[14].tests, "layer_norm_forward");
  EXPECT_EQ(list[15].tests, "attention");
  EXPECT_TRUE(list[12].tests.empty());
  for (std::size_t i = 1; i < list.size(); ++i) EXPECT_LT(list[i - 1].order, list[i].order);
  ASSERT_NE(grade::find_exercise("rope"), nullptr);
  EXPECT_EQ(grade::find_exercise("rope")->signature.rfind("Tensor2 rope(", 0), 0u);
  EXPECT_EQ(grade::find_exercise("rotary"), nullptr);
}

// ---- messages a student can act on -------------------------------------------------------------

// A link that failed on the exercise's own function: GNU ld's log (older binutils quote `...',
// newer '...') and lld's, as the template's link of grade-softmax prints them.
const std::string kXtensor =
    "xt::xtensor_container<xt::uvector<float, xsimd::aligned_allocator<float, 16ul> >, 2ul, "
    "(xt::layout_type)1, xt::xtensor_expression_tag> const&";

TEST(Messages, TheLinkersUndefinedReferencesAreParsed) {
  const std::string gnu =
      "/usr/bin/ld: CMakeFiles/child_softmax.dir/child.cpp.o: in function `main':\n"
      "child.cpp:(.text.startup+0x2d): undefined reference to `assignment::softmax(" +
      kXtensor +
      ")'\n"
      "/usr/bin/ld: child.cpp:(.text.startup+0x51): undefined reference to "
      "`assignment::softmax(" +
      kXtensor +
      ")'\n"
      "/usr/bin/ld: softmax.o: in function `assignment::softmax': softmax.cpp:(.text+0x9): "
      "undefined reference to 'helper(int)'\n"
      "collect2: error: ld returned 1 exit status\n";
  EXPECT_EQ(grade::undefined_references(gnu),
            (std::vector<std::string>{"assignment::softmax(" + kXtensor + ")", "helper(int)"}));
  const std::string lld =
      "ld.lld: error: undefined symbol: assignment::softmax(" + kXtensor +
      ")\n>>> referenced by child.cpp\nclang++: error: linker command failed with exit code 1\n";
  EXPECT_EQ(grade::undefined_references(lld),
            (std::vector<std::string>{"assignment::softmax(" + kXtensor + ")"}));
  EXPECT_TRUE(grade::undefined_references("collect2: error: ld returned 1 exit status").empty());

  // the sentence names the exercise's function and its signature, not "ld returned 1"
  const std::string signature = "Tensor2 softmax(const Tensor2& x)";
  EXPECT_EQ(grade::missing_function_message(gnu, "softmax", signature),
            "exercises/softmax.cpp does not define assignment::softmax, the function `Tensor2 "
            "softmax(const Tensor2& x)` (renamed, misspelled, outside namespace assignment, or "
            "with other parameter types?)");
  // another undefined function: the first one named
  EXPECT_EQ(grade::missing_function_message(
                "x.cpp:(.text+0x9): undefined reference to `helper(int)'\n", "softmax", signature),
            "exercises/softmax.cpp calls helper, which is declared but defined nowhere (write its "
            "body, or remove the call)");
  EXPECT_EQ(grade::missing_function_message("collect2: error: ld returned 1", "softmax", signature),
            "");
}

TEST(Messages, EditDistance) {
  EXPECT_EQ(grade::edit_distance("", ""), 0u);
  EXPECT_EQ(grade::edit_distance("softmax", ""), 7u);
  EXPECT_EQ(grade::edit_distance("kitten", "sitting"), 3u);                    // k->s, e->i, +g
  EXPECT_EQ(grade::edit_distance("softmax.cc", "softmax.cpp"), 2u);            // c->p, +p
  EXPECT_EQ(grade::edit_distance("softmax_\xc3\xa9.cpp", "softmax.cpp"), 3u);  // "_é": 3 bytes
  EXPECT_EQ(grade::edit_distance("flaw", "lawn"), 2u);
}

// Every file of a submission's exercises/ that is not an exercise, with the closest exercise.
TEST(Messages, StrayFilesAreNamedWithTheClosestExercise) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("xenc_strays_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "sub.cpp");  // a folder is not a file
  for (const char* f : {"softmax.cpp", "Softmax.cpp", "softmax.cc", "softmax_\xc3\xa9.cpp",
                        "merge_head.cpp", "attention.cpp", "notes.txt"})
    std::ofstream(dir / f) << "x";
  const std::vector<std::string> names = {"softmax", "merge_heads", "split_heads"};
  std::vector<std::string> got;
  for (const grade::StrayFile& f : grade::stray_files(dir.string(), names))
    got.push_back(f.file + " -> " + f.closest);
  EXPECT_EQ(got, (std::vector<std::string>{
                     "Softmax.cpp -> softmax.cpp", "attention.cpp -> softmax.cpp",
                     "merge_head.cpp -> merge_heads.cpp", "notes.txt -> softmax.cpp",
                     "softmax.cc -> softmax.cpp", "softmax_\xc3\xa9.cpp -> softmax.cpp"}));
  EXPECT_EQ(grade::stray_message({"Softmax.cpp", "softmax.cpp"}, "exercises/"),
            "exercises/Softmax.cpp is not an exercise of this assignment and was not graded (did "
            "you mean exercises/softmax.cpp?)");
  EXPECT_TRUE(grade::stray_files((dir / "missing").string(), names).empty());
  std::filesystem::remove_all(dir);
}

}  // namespace

// ---- the build cache (xenc/grade/cache.hpp)
// ------------------------------------------------------

namespace {
std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}
}  // namespace

TEST(Cache, DigestIsFnv1a64) {
  // FNV-1a 64's published test vectors (the offset basis for "", then "a" and "foobar")
  EXPECT_EQ(xenc::grade::digest(""), "cbf29ce484222325");
  EXPECT_EQ(xenc::grade::digest("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(xenc::grade::digest("foobar"), "85944171f73967e8");
}

TEST(Cache, AProgramComesBackOnlyForTheSameKey) {
  namespace fs = std::filesystem;
  const fs::path dir = ::testing::TempDir() + "xenc_cache_" + std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  write(dir / "built", "program of file A");
  const xenc::grade::ProgramCache cache((dir / "cache").string());
  const std::string key_a = "source 1\nA", key_b = "source 1\nB";
  EXPECT_FALSE(cache.fetch(key_a, (dir / "out").string()));
  ASSERT_TRUE(cache.store(key_a, (dir / "built").string()));
  // only the grader may enter the cache's folder
  EXPECT_EQ(fs::status(dir / "cache").permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_FALSE(cache.fetch(key_b, (dir / "out").string()));
  EXPECT_FALSE(fs::exists(dir / "out"));
  ASSERT_TRUE(cache.fetch(key_a, (dir / "out").string()));
  EXPECT_EQ(slurp(dir / "out"), "program of file A");
  EXPECT_NE(fs::status(dir / "out").permissions() & fs::perms::owner_exec, fs::perms::none);
  // an entry is never replaced: a second store of the same key keeps the first program
  write(dir / "built", "another program");
  EXPECT_TRUE(cache.store(key_a, (dir / "built").string()));
  ASSERT_TRUE(cache.fetch(key_a, (dir / "out").string()));
  EXPECT_EQ(slurp(dir / "out"), "program of file A");
  // the digest only finds the folder: an entry whose stored key is another file's (as two keys
  // of the same digest would be) is not handed out
  write(dir / "cache" / xenc::grade::digest(key_a) / "key", key_b);
  EXPECT_FALSE(cache.fetch(key_a, (dir / "out2").string()));
  EXPECT_FALSE(fs::exists(dir / "out2"));
  fs::remove_all(dir);
}

TEST(Cache, TreeStampSeesAChangedFile) {
  namespace fs = std::filesystem;
  const fs::path dir = ::testing::TempDir() + "xenc_stamp_" + std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  write(dir / "sub" / "a.hpp", "int a;");
  const std::string before = xenc::grade::tree_stamp(dir.string());
  EXPECT_EQ(before.size(), 16u);
  EXPECT_EQ(xenc::grade::tree_stamp(dir.string()), before);
  write(dir / "sub" / "a.hpp", "int ab;");  // one byte longer
  EXPECT_NE(xenc::grade::tree_stamp(dir.string()), before);
  EXPECT_EQ(xenc::grade::tree_stamp((dir / "none").string()), "");
  EXPECT_EQ(xenc::grade::file_digest((dir / "sub" / "a.hpp").string()),
            xenc::grade::digest("int ab;"));
  fs::remove_all(dir);
}
