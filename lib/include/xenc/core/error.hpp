// Errors: every public entry point checks its input and throws; nothing aborts or exits
// (an abort would kill a notebook kernel). Every exception type xencoder throws is declared
// here, for all three libraries (math, io, viz); all derive from std::invalid_argument, so one
// `catch (const std::invalid_argument&)` catches every bad input, file or option.
//
// Messages name the function, the argument, the actual and the expected shape or value:
//   "MultiheadAttention.forward: query has shape [2, 5, 7], expected [B, T, D] with D = 8"
#pragma once

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "xenc/core/tensor.hpp"

namespace xenc {

/// A tensor argument has the wrong rank or size.
class shape_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A hyper-parameter or option is invalid (odd D for sinusoidal positions, D % H != 0, ...).
class config_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// An index argument is outside its range (a token id >= V, a class target >= C, a dimension
/// >= D). Derived from std::invalid_argument like every other input error, so one
/// `catch (const std::invalid_argument&)` catches all bad input.
class index_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A file (weights, arrays, a figure to write) is missing, unreadable or unwritable, malformed,
/// of an unsupported kind, or its keys do not match what was expected. The message names the
/// function and the file and, where there is one, the key, with what was found and what was
/// expected. Thrown by xencoder::io (xenc/io/*.hpp) and by viz::write_text_file.
class io_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Text that is not valid UTF-8 (a stray continuation byte, a truncated sequence, an overlong
/// form, a surrogate). The message names the function, the byte offset and the byte's value.
class encoding_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Wildcard for check_shape: any size is accepted in that dimension.
inline constexpr long any_dim = -1;

/// Throws shape_error unless `shape` has exactly the dimensions `expected`
/// (-1 = any size). `expected_text` says what was expected in the glossary's words,
/// e.g. "[B, T, D] with D = 8". The message reads:
///   "<where>: <arg> has shape [2, 5, 7], expected [B, T, D] with D = 8"
void check_shape(const std::string& where, const std::string& arg,
                 const std::vector<std::size_t>& shape, const std::vector<long>& expected,
                 const std::string& expected_text);

template <class E>
void check_shape(const std::string& where, const std::string& arg, const E& tensor,
                 const std::vector<long>& expected, const std::string& expected_text) {
  const auto& s = tensor.shape();
  check_shape(where, arg, std::vector<std::size_t>(s.begin(), s.end()), expected, expected_text);
}

/// The same check for hot paths: `expected_text` is a callable returning the text, so the
/// message is built only when the check fails (building it on every call costs a few
/// allocations, which shows in a forward of a small layer).
template <class E, class F, class = std::enable_if_t<std::is_invocable_r_v<std::string, F>>>
void check_shape(const char* where, const char* arg, const E& tensor,
                 std::initializer_list<long> expected, F&& expected_text) {
  const auto& s = tensor.shape();
  bool ok = s.size() == expected.size();
  auto e = expected.begin();
  for (std::size_t i = 0; ok && i < s.size(); ++i, ++e)
    ok = *e == any_dim || static_cast<long>(s[i]) == *e;
  if (!ok)
    check_shape(where, arg, std::vector<std::size_t>(s.begin(), s.end()),
                std::vector<long>(expected), expected_text());
}

/// Throws config_error(where + ": " + message) unless `ok`.
void check_config(bool ok, const std::string& where, const std::string& message);

}  // namespace xenc
