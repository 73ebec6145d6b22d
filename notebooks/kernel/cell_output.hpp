// What a cell prints, on its way to Jupyter: fd 1 and fd 2 captured into in-memory files while the
// cell runs (OutputCapture), and a second thread that sends what arrived so far every 0.1 s
// (StreamForwarder), so a long cell's output shows while it runs, as in any Jupyter kernel.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace xenc_kernel {

/// fd 1 and fd 2 redirected into two in-memory files while a cell runs. (A pipe would deadlock
/// once a cell writes more than the pipe holds; a file does not.) The files are read from where
/// the last take ended, through a mapping, so they can be read while the cell writes to them;
/// they are emptied when the capture stops. Each file has a fixed size, the cap plus a margin,
/// sealed against growing (a write past it fails), and is mapped into the kernel's address space:
/// what the capture can hold counts against the kernel's memory limit.
class OutputCapture {
 public:
  OutputCapture();
  ~OutputCapture();
  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;

  /// The cap on what one cell may print (stdout and stderr together), in bytes. Set it before
  /// the first start(), which sizes the files.
  void set_limit(std::size_t bytes) { limit_ = bytes; }
  std::size_t limit() const { return limit_; }
  /// Past the cap: points fd 1 and 2 at /dev/null for the rest of the cell, so the files (memory
  /// outside the kernel's memory limit) stop growing. Safe from the forwarder's thread (dup2).
  void enforce_limit();
  /// Whether this cell's output was cut at the cap.
  bool truncated() const { return truncated_; }

  void start();  ///< flush, then point fd 1 and 2 at the files
  void stop();   ///< flush, point fd 1 and 2 back at the kernel's own, empty the files
  /// What was written to fd 1 (stdout) or fd 2 (stderr) since the last take. With whole_lines,
  /// only up to the last newline: the rest (a line still being written, perhaps half of a UTF-8
  /// character) waits for the next take.
  std::string take_stdout(bool whole_lines = false) {
    return take(out_file_, out_taken_, whole_lines);
  }
  std::string take_stderr(bool whole_lines = false) {
    return take(err_file_, err_taken_, whole_lines);
  }

 private:
  std::string take(int file, off_t& taken, bool whole_lines);
  void reserve();  ///< sizes, seals and maps the files (once, at the first start)
  off_t written(int file) const;
  static constexpr std::size_t kMargin = std::size_t(4) << 20;
  int out_file_ = -1, err_file_ = -1;        // memfd files
  const char* map_[2] = {nullptr, nullptr};  // the files' mappings (stdout, stderr), once reserved
  std::size_t mapped_size_ = 0;
  off_t out_taken_ = 0, err_taken_ = 0;  // how much of each was taken
  int saved_out_ = -1, saved_err_ = -1;  // the kernel's own fd 1 and 2 while capturing
  std::size_t limit_ = std::size_t(4) << 20;
  std::size_t taken_total_ = 0;  // taken from both files since start()
  bool truncated_ = false;
};

/// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD: Jupyter's messages
/// are JSON, which cannot carry them (nlohmann::json throws), and a cell may print any bytes.
std::string valid_utf8(const std::string& text);

/// Calls `send` every 0.1 s, and `watch` every 10 ms, from a second thread between start() and
/// stop(). The kernel starts
/// it around each compiled cell's run, with SIGINT blocked, so the thread never takes Jupyter's
/// Interrupt (see CellInterpreter::run).

class StreamForwarder {
 public:
  ~StreamForwarder() { stop(); }
  void start(std::function<void()> send, std::function<void()> watch = [] {});
  void stop();  ///< returns when the thread has ended (after at most one more send)

 private:
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

}  // namespace xenc_kernel
