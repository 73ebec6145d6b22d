#include "cell_output.hpp"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <stdexcept>

namespace xenc_kernel {

// ---------------------------------------------------------------------------------------------
OutputCapture::OutputCapture()
    : out_file_(memfd_create("xenc-kernel-stdout", MFD_CLOEXEC | MFD_ALLOW_SEALING)),
      err_file_(memfd_create("xenc-kernel-stderr", MFD_CLOEXEC | MFD_ALLOW_SEALING)) {
  if (out_file_ < 0 || err_file_ < 0) throw std::runtime_error("xenc-kernel: memfd_create failed");
}

OutputCapture::~OutputCapture() {
  stop();
  for (const char* map : map_)
    if (map != nullptr) munmap(const_cast<char*>(map), mapped_size_);
  close(out_file_);
  close(err_file_);
}

// Each file gets its final size once, the cap and a margin (the forwarder checks the cap every
// 10 ms; what arrives past it is dropped anyway), and is sealed against growing: a write past the
// end fails, so a cell printing without end cannot fill the machine's memory, whatever the
// forwarder's delay. Each file is also mapped into the kernel's address space, so the memory it
// can hold counts against the kernel's memory limit (RLIMIT_AS, main.cpp): the cells may
// allocate that much less.
void OutputCapture::reserve() {
  if (map_[0] != nullptr) return;
  mapped_size_ = limit_ + kMargin;
  const int files[2] = {out_file_, err_file_};
  for (int i = 0; i < 2; ++i) {
    if (ftruncate(files[i], static_cast<off_t>(mapped_size_)) != 0 ||
        fcntl(files[i], F_ADD_SEALS, F_SEAL_GROW) != 0)
      throw std::runtime_error("xenc-kernel: cannot size the output file");
    void* map = mmap(nullptr, mapped_size_, PROT_READ, MAP_SHARED, files[i], 0);
    if (map == MAP_FAILED) throw std::runtime_error("xenc-kernel: cannot map the output file");
    map_[i] = static_cast<const char*>(map);
  }
}

// What was written to the file so far: its write position, which fd 1 or 2 shares (dup2).
off_t OutputCapture::written(int file) const { return lseek(file, 0, SEEK_CUR); }

void OutputCapture::enforce_limit() {
  if (saved_out_ < 0 || truncated_) return;
  const off_t out = written(out_file_), err = written(err_file_);
  if (out < 0 || err < 0) return;
  if (static_cast<std::size_t>(out) + static_cast<std::size_t>(err) <= limit_) return;
  truncated_ = true;
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (devnull < 0) return;
  dup2(devnull, 1);
  dup2(devnull, 2);
  close(devnull);
}

void OutputCapture::start() {
  if (saved_out_ >= 0) return;
  reserve();
  taken_total_ = 0;
  truncated_ = false;
  std::cout.flush();
  std::fflush(nullptr);
  saved_out_ = dup(1);
  saved_err_ = dup(2);
  dup2(out_file_, 1);
  dup2(err_file_, 2);
}

void OutputCapture::stop() {
  if (saved_out_ < 0) return;
  std::cout.flush();
  std::fflush(nullptr);
  dup2(saved_out_, 1);
  dup2(saved_err_, 2);
  close(saved_out_);
  close(saved_err_);
  saved_out_ = saved_err_ = -1;
  // Empty the files (free their pages; their size stays, sealed) and rewind them (fd 1 and 2
  // shared their write position): otherwise the next cell's text would be written after the
  // old text. A write that failed past the end left stdio's error flags set: cleared.
  for (int file : {out_file_, err_file_})
    if (fallocate(file, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                  static_cast<off_t>(mapped_size_)) != 0 ||
        lseek(file, 0, SEEK_SET) != 0)
      throw std::runtime_error("xenc-kernel: cannot empty the output file");
  out_taken_ = err_taken_ = 0;
  std::clearerr(stdout);
  std::clearerr(stderr);
  std::cout.clear();
  std::cerr.clear();
}

std::string OutputCapture::take(int file, off_t& taken, bool whole_lines) {
  // The cell's thread (whole_lines false) first flushes what stdio still buffers. The forwarder
  // must not touch stdio: an interrupted cell may have left a stdio lock held.
  if (!whole_lines) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(stdout);
    std::fflush(stderr);
  }
  enforce_limit();
  // at most what the cap leaves (the rest of a truncated cell's output is dropped)
  const std::size_t budget = limit_ > taken_total_ ? limit_ - taken_total_ : 0;
  // the bytes written since the last take, read through the mapping
  const off_t end = written(file);
  const std::size_t available = end > taken ? static_cast<std::size_t>(end - taken) : 0;
  std::string text(map_[file == out_file_ ? 0 : 1] + taken, std::min(available, budget));
  if (available > budget) truncated_ = true;  // more than the cap: the rest is dropped
  if (whole_lines && !truncated_) text.erase(text.rfind('\n') + 1);  // npos+1 = 0: no line yet
  taken += static_cast<off_t>(text.size());
  taken_total_ += text.size();
  return valid_utf8(text);
}

std::string valid_utf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = byte(i);
    // the sequence's length, and the range of its second byte (RFC 3629's table)
    std::size_t n = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (c < 0x80)
      n = 1;
    else if (c >= 0xC2 && c <= 0xDF)
      n = 2;
    else if (c == 0xE0)
      n = 3, low = 0xA0;
    else if (c == 0xED)
      n = 3, high = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF)
      n = 3;
    else if (c == 0xF0)
      n = 4, low = 0x90;
    else if (c == 0xF4)
      n = 4, high = 0x8F;
    else if (c >= 0xF1 && c <= 0xF3)
      n = 4;
    bool ok = n > 0 && i + n <= text.size();
    for (std::size_t k = 1; ok && k < n; ++k)
      ok = k == 1 ? byte(i + 1) >= low && byte(i + 1) <= high : (byte(i + k) & 0xC0) == 0x80;
    if (ok) {
      out.append(text, i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD, for this one byte
      ++i;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
void StreamForwarder::start(std::function<void()> send, std::function<void()> watch) {
  stop();
  stopping_ = false;
  thread_ = std::thread([this, send = std::move(send), watch = std::move(watch)] {
    std::unique_lock<std::mutex> lock(mutex_);
    for (int tick = 1;
         !wake_.wait_for(lock, std::chrono::milliseconds(10), [this] { return stopping_; });
         ++tick) {
      lock.unlock();
      watch();
      if (tick % 10 == 0) send();
      lock.lock();
    }
  });
}

void StreamForwarder::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

}  // namespace xenc_kernel
