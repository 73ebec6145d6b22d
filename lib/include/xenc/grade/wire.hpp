// The calls between the trusted grader and the process that runs a student's function.
//
// The grader never runs a student's code in its own process, and never lets that code compute a
// verdict. Its checks (xenc/grade/exercises.hpp) call a stand-in for the student's function, which
// sends the arguments, as data, to the student's process; that process (serve, below: the
// template's grade-<name>) calls the student's function and sends back its return value or the
// exception it threw. The grader compares what came back with its references, decides, and names
// the museum's exhibit. A student's process can only forge its outputs, which is as hard as
// computing them, and never sees the teacher's hidden seed: it receives the inputs drawn from it.
//
// A message is a length (8 bytes) and that many bytes: the arguments in order (a call), or a
// status byte and the return value or the exception's kind and text (an answer). Numbers are
// written as the machine holds them (both ends run on the same machine); a tensor is its shape
// then its values. Reading checks every length against what is left, so a forged answer can only
// be a wrong one (WireError), never a crash of the grader.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "xenc/core/tensor.hpp"
#include "xenc/grade/exercises.hpp"

namespace xenc::grade::wire {

/// A message that is not what the protocol says (too short, a length beyond the message, an
/// unknown status). Its text says what was wrong.
struct WireError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The most bytes one message may hold (256 MiB).
inline constexpr std::uint64_t kMaxMessage = std::uint64_t(1) << 28;

class Writer {
 public:
  void bytes(const void* p, std::size_t n) { buf_.append(static_cast<const char*>(p), n); }
  template <class T>
  void raw(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&v, sizeof v);
  }
  const std::string& str() const { return buf_; }

 private:
  std::string buf_;
};

class Reader {
 public:
  explicit Reader(const std::string& s) : s_(s) {}
  void bytes(void* p, std::size_t n) {
    if (n > s_.size() - at_)
      throw WireError("wire: the message ends " + std::to_string(n - (s_.size() - at_)) +
                      " bytes early");
    std::memcpy(p, s_.data() + at_, n);
    at_ += n;
  }
  template <class T>
  T raw() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    bytes(&v, sizeof v);
    return v;
  }
  /// A count of items of `item_bytes` each, checked against what is left.
  std::size_t count(std::size_t item_bytes) {
    const auto n = raw<std::uint64_t>();
    if (item_bytes != 0 && n > (s_.size() - at_) / item_bytes)
      throw WireError("wire: a count of " + std::to_string(n) + " is more than the message holds");
    return std::size_t(n);
  }
  void expect_end() const {
    if (at_ != s_.size())
      throw WireError("wire: " + std::to_string(s_.size() - at_) + " bytes after the message");
  }

 private:
  const std::string& s_;
  std::size_t at_ = 0;
};

// ---- values ------------------------------------------------------------------------------------

inline void put(Writer& w, std::uint64_t v) { w.raw(v); }
inline void put(Writer& w, std::int64_t v) { w.raw(v); }
inline void put(Writer& w, float v) { w.raw(v); }
inline void put(Writer& w, double v) { w.raw(v); }
inline void get(Reader& r, std::uint64_t& v) { v = r.raw<std::uint64_t>(); }
inline void get(Reader& r, std::int64_t& v) { v = r.raw<std::int64_t>(); }
inline void get(Reader& r, float& v) { v = r.raw<float>(); }
inline void get(Reader& r, double& v) { v = r.raw<double>(); }

template <class T>
void put(Writer& w, const std::vector<T>& v) {
  w.raw(std::uint64_t(v.size()));
  for (const T& x : v) put(w, x);
}
template <class T>
void get(Reader& r, std::vector<T>& v) {
  const std::size_t n = r.count(sizeof(T));
  v.assign(n, T{});
  for (T& x : v) get(r, x);
}

template <class T, std::size_t N>
void put(Writer& w, const xt::xtensor<T, N>& t) {
  for (std::size_t d = 0; d < N; ++d) w.raw(std::uint64_t(t.shape()[d]));
  for (const T& x : t) {
    if constexpr (std::is_same_v<T, bool>)
      w.raw(std::uint8_t(x ? 1 : 0));
    else
      w.raw(x);
  }
}
template <class T, std::size_t N>
void get(Reader& r, xt::xtensor<T, N>& t) {
  constexpr std::size_t item = std::is_same_v<T, bool> ? 1 : sizeof(T);
  std::array<std::size_t, N> shape{};
  std::size_t total = 1;
  for (std::size_t d = 0; d < N; ++d) {
    shape[d] = r.count(0);
    // the product, bounded by the message: a forged shape cannot make a huge allocation
    if (shape[d] != 0 && total > kMaxMessage / shape[d])
      throw WireError("wire: a tensor shape larger than a message");
    total *= shape[d];
  }
  if (total > kMaxMessage / item) throw WireError("wire: a tensor larger than a message");
  std::vector<T> values(total);
  for (std::size_t i = 0; i < total; ++i) {
    if constexpr (std::is_same_v<T, bool>)
      values[i] = r.raw<std::uint8_t>() != 0;
    else
      values[i] = r.raw<T>();
  }
  t = xt::xtensor<T, N>::from_shape(shape);
  std::size_t i = 0;
  for (T& x : t) x = values[i++];
}

inline void put(Writer& w, const AttentionResult& a) { put(w, a.output), put(w, a.weights); }
inline void get(Reader& r, AttentionResult& a) { get(r, a.output), get(r, a.weights); }
template <std::size_t R>
void put(Writer& w, const LayerNormGrads<R>& g) {
  put(w, g.input), put(w, g.weight), put(w, g.bias);
}
template <std::size_t R>
void get(Reader& r, LayerNormGrads<R>& g) {
  get(r, g.input), get(r, g.weight), get(r, g.bias);
}
template <std::size_t R>
void put(Writer& w, const LinearGrads<R>& g) {
  put(w, g.input), put(w, g.weight), put(w, g.bias);
}
template <std::size_t R>
void get(Reader& r, LinearGrads<R>& g) {
  get(r, g.input), get(r, g.weight), get(r, g.bias);
}
inline void put(Writer& w, const CrossEntropyOutput& c) { put(w, c.loss), put(w, c.grad_logits); }
inline void get(Reader& r, CrossEntropyOutput& c) { get(r, c.loss), get(r, c.grad_logits); }
inline void put(Writer& w, const OnlineSoftmaxState& s) { put(w, s.m), put(w, s.l), put(w, s.acc); }
inline void get(Reader& r, OnlineSoftmaxState& s) { get(r, s.m), get(r, s.l), get(r, s.acc); }

// ---- answers -----------------------------------------------------------------------------------

/// The status byte of an answer: the function returned, or threw an exception of this kind.
enum class Status : std::uint8_t {
  returned = 0,
  invalid_argument,
  out_of_range,
  length_error,
  domain_error,
  logic_error,
  runtime_error,
  range_error,
  overflow_error,
  bad_alloc,
  other_std_exception,
  not_std_exception,
};

/// In the student's process: the kind and text of the exception being handled.
inline std::pair<Status, std::string> classify_current_exception() {
  try {
    throw;
  } catch (const std::invalid_argument& e) {
    return {Status::invalid_argument, e.what()};
  } catch (const std::out_of_range& e) {
    return {Status::out_of_range, e.what()};
  } catch (const std::length_error& e) {
    return {Status::length_error, e.what()};
  } catch (const std::domain_error& e) {
    return {Status::domain_error, e.what()};
  } catch (const std::logic_error& e) {
    return {Status::logic_error, e.what()};
  } catch (const std::range_error& e) {
    return {Status::range_error, e.what()};
  } catch (const std::overflow_error& e) {
    return {Status::overflow_error, e.what()};
  } catch (const std::runtime_error& e) {
    return {Status::runtime_error, e.what()};
  } catch (const std::bad_alloc& e) {
    return {Status::bad_alloc, e.what()};
  } catch (const std::exception& e) {
    return {Status::other_std_exception, e.what()};
  } catch (...) {
    return {Status::not_std_exception, ""};
  }
}

/// The exception a student's function threw, as the grader rethrows it when the exception was a
/// std::exception of no standard kind.
struct StudentException : std::exception {
  explicit StudentException(std::string w) : what_(std::move(w)) {}
  const char* what() const noexcept override { return what_.c_str(); }
  std::string what_;
};
/// Thrown by the grader's stand-in for an exception that is not a std::exception.
struct NotStdException {};

/// In the grader: throws the exception an answer reports, of the same standard kind.
[[noreturn]] inline void rethrow(Status s, const std::string& what) {
  switch (s) {
    case Status::invalid_argument:
      throw std::invalid_argument(what);
    case Status::out_of_range:
      throw std::out_of_range(what);
    case Status::length_error:
      throw std::length_error(what);
    case Status::domain_error:
      throw std::domain_error(what);
    case Status::logic_error:
      throw std::logic_error(what);
    case Status::runtime_error:
      throw std::runtime_error(what);
    case Status::range_error:
      throw std::range_error(what);
    case Status::overflow_error:
      throw std::overflow_error(what);
    case Status::bad_alloc:
      throw std::bad_alloc();
    case Status::other_std_exception:
      throw StudentException(what);
    case Status::not_std_exception:
      throw NotStdException{};
    case Status::returned:
      break;
  }
  throw WireError("wire: an unknown status " + std::to_string(int(s)));
}

// ---- the two ends ------------------------------------------------------------------------------

/// The grader's end of the channel: sends one call and returns the answer's bytes. Throws when
/// the student's process has ended, timed out or sent something that is not a message.
struct Caller {
  virtual ~Caller() = default;
  virtual std::string call(const std::string& request) = 0;
};

/// An answer's bytes as the value it carries, or the exception it reports rethrown.
template <class R>
R decode_answer(const std::string& answer) {
  Reader r(answer);
  const auto status = Status(r.raw<std::uint8_t>());
  if (status != Status::returned) {
    std::string what(r.count(1), '\0');
    r.bytes(what.data(), what.size());
    rethrow(status, what);
  }
  R out{};
  get(r, out);
  r.expect_end();
  return out;
}

/// The answer to a call: f()'s value, or the kind and text of the exception it threw.
template <class F>
std::string encode_answer(F&& f) {
  Writer w;
  try {
    const auto out = f();
    w.raw(std::uint8_t(Status::returned));
    put(w, out);
  } catch (...) {
    const auto [status, what] = classify_current_exception();
    w = Writer();
    w.raw(std::uint8_t(status));
    w.raw(std::uint64_t(what.size()));
    w.bytes(what.data(), what.size());
  }
  return w.str();
}

/// The grader's stand-in for the student's function of type Sig (signature::<name>): each call
/// goes to the student's process through `caller` and returns what that process sent back.
template <class Sig>
struct Remote;
template <class R, class... A>
struct Remote<R(A...)> {
  static std::function<R(A...)> make(Caller& caller) {
    return [&caller](A... args) -> R {
      Writer w;
      (put(w, static_cast<const std::decay_t<A>&>(args)), ...);
      return decode_answer<R>(caller.call(w.str()));
    };
  }
};

/// The descriptors of the channel in the student's process: calls come in on 3, answers go out
/// on 4 (the grader sets them up; XENC_GRADE_SERVE is set when it did).
inline constexpr int kCallsFd = 3;
inline constexpr int kAnswersFd = 4;

inline bool read_all(int fd, void* p, std::size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t k = ::read(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k, n -= std::size_t(k);
  }
  return true;
}
inline bool write_all(int fd, const void* p, std::size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t k = ::write(fd, c, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    c += k, n -= std::size_t(k);
  }
  return true;
}
/// One message (its length, then its bytes) in or out; false when the channel is closed or broken.
inline bool read_message(int fd, std::string& message) {
  std::uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n) || n > kMaxMessage) return false;
  message.assign(n, '\0');
  return read_all(fd, message.data(), n);
}
inline bool write_message(int fd, const std::string& message) {
  const std::uint64_t n = message.size();
  return write_all(fd, &n, sizeof n) && write_all(fd, message.data(), n);
}

inline bool started_by_the_grader() {
  if (std::getenv("XENC_GRADE_SERVE") != nullptr) return true;
  const char msg[] =
      "this program answers the grader's calls: run ./build/grade to grade this exercise\n";
  (void)!::write(2, msg, sizeof msg - 1);
  return false;
}

/// In the student's process (the template's grade-<name>): answers the grader's calls with the
/// student's function until the grader closes the channel. Returns the process's exit code: 0,
/// or 2 when not started by the grader (it then says so on stderr).
template <class R, class... A>
int serve(R (&fn)(A...)) {
  if (!started_by_the_grader()) return 2;
  for (std::string request;;) {
    if (!read_message(kCallsFd, request)) return 0;  // the grader closed the channel: done
    Reader r(request);
    std::tuple<std::decay_t<A>...> args;
    std::apply([&r](auto&... a) { (get(r, a), ...); }, args);
    if (!write_message(kAnswersFd, encode_answer([&] { return std::apply(fn, args); }))) return 3;
  }
}

// ---- test-writing exercises --------------------------------------------------------------------
//
// The student writes `bool test_softmax(const SoftmaxFn& softmax)`: a check of a function. The
// grader runs it once per candidate (the correct function or a museum exhibit), each time in a
// fresh process: it sends kRunTest; the student's process calls its check with a stand-in whose
// every call is a message kTestCall + the arguments, answered by the grader with what the
// candidate (computed in the grader, never in the student's process) returned or threw; at the
// end the process sends kTestVerdict, a byte (1: the check returned true; 0: it returned false or
// threw) and a text (the exception's, or "returned false"). The student's process never learns
// which candidate it tests except by the candidate's behaviour, and never computes a score.

inline constexpr std::uint8_t kRunTest = 'T';
inline constexpr std::uint8_t kTestCall = 1;
inline constexpr std::uint8_t kTestVerdict = 0;

/// The grader's end for a test-writing exercise: each run is a fresh process of the student's
/// program.
struct Launcher {
  virtual ~Launcher() = default;
  /// Starts a fresh process, lets `body` call it, ends it. Returns "" when the process answered
  /// and ended well; otherwise the sentence that says what happened ("crashed with SIGSEGV ...",
  /// "exceeded the time limit of 10 s ..."). A WireError thrown by body is caught here.
  virtual std::string run(const std::function<void(Caller&)>& body) = 0;
};

/// What the student's check said about one candidate.
struct TestVerdict {
  bool accepted = false;
  std::string said;  ///< "returned false", or the exception it threw ("" when it accepted)
};

/// In the grader: runs the student's check once, through `caller`, against fn (the candidate,
/// computed here). Throws WireError for a message that is not the protocol's.
template <class R, class... A>
TestVerdict run_test(Caller& caller, const std::function<R(A...)>& fn) {
  std::string message = caller.call(std::string(1, char(kRunTest)));
  for (;;) {
    Reader r(message);
    const auto tag = r.raw<std::uint8_t>();
    if (tag == kTestVerdict) {
      TestVerdict v;
      v.accepted = r.raw<std::uint8_t>() == 1;
      v.said.assign(r.count(1), '\0');
      r.bytes(v.said.data(), v.said.size());
      r.expect_end();
      return v;
    }
    if (tag != kTestCall)
      throw WireError("wire: a test's message has the unknown tag " + std::to_string(int(tag)));
    std::tuple<std::decay_t<A>...> args;
    std::apply([&r](auto&... a) { (get(r, a), ...); }, args);
    r.expect_end();
    message = caller.call(encode_answer([&] { return std::apply(fn, args); }));
  }
}

/// In the student's process: the stand-in for the function under test, of type Sig.
template <class Sig>
struct Callback;
template <class R, class... A>
struct Callback<R(A...)> {
  static std::function<R(A...)> make() {
    return [](A... args) -> R {
      Writer w;
      w.raw(kTestCall);
      (put(w, static_cast<const std::decay_t<A>&>(args)), ...);
      std::string answer;
      if (!write_message(kAnswersFd, w.str()) || !read_message(kCallsFd, answer))
        throw std::runtime_error("the grader closed the channel");
      return decode_answer<R>(answer);
    };
  }
};

/// In the student's process of a test-writing exercise: runs the student's check each time the
/// grader asks (once per process in practice), and sends back only whether it accepted.
template <class Sig>
int serve(bool (&test)(const std::function<Sig>&)) {
  if (!started_by_the_grader()) return 2;
  for (std::string request;;) {
    if (!read_message(kCallsFd, request)) return 0;
    if (request != std::string(1, char(kRunTest))) return 3;
    const std::function<Sig> under_test = Callback<Sig>::make();
    bool accepted = false;
    std::string said;
    try {
      accepted = test(under_test);
      if (!accepted) said = "returned false";
    } catch (...) {
      said = "threw an exception: " + classify_current_exception().second;
      accepted = false;
    }
    Writer w;
    w.raw(kTestVerdict);
    w.raw(std::uint8_t(accepted ? 1 : 0));
    w.raw(std::uint64_t(said.size()));
    w.bytes(said.data(), said.size());
    if (!write_message(kAnswersFd, w.str())) return 3;
  }
}

}  // namespace xenc::grade::wire
