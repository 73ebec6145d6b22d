// The hidden first cell of xenc-kernel: the display hook, and how the value of an expression
// ending a cell is shown (clang 19's interpreter prints no values itself).
//
// A cell ending in an expression E with no semicolon runs, after its statements, as
//     xenc_kernel::show_result(((E), xenc_kernel::no_value{}));
// For a void E the built-in comma gives no_value and nothing is shown; otherwise the comma below
// passes E's value on, and show_result publishes it as the cell's execute_result:
//   - mime_bundle_repr(value) (found by ADL) when the type has one: xencoder's tables and
//     figures, as in xeus-cling;
//   - else its text from operator<< (numbers, xtensor expressions, ...), a string in quotes;
//   - else, for a container (anything with begin and end: std::vector, std::array, a C array,
//     std::map, ...), a pair or a tuple, its elements as {1, 2, 3}, {"a": 1}, (1, 2.5), the
//     first kShownElements of each container and its size after them; a std::optional as its
//     value or std::nullopt;
//   - else "<no printable form>".
#pragma once

#include <cstddef>
#include <ios>
#include <iterator>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

/// Defined in the kernel (cell_interpreter.cpp): sends a MIME bundle given as JSON text, as
/// display_data (is_result 0) or as the execute_result (is_result 1).
extern "C" void xenc_kernel_publish(const char* bundle_json, int is_result);

/// Defined in the kernel: called by the first (1) and last (0) initialiser of every cell (see
/// wrap_statements in cell_text.hpp). Between the two the cell's own code runs, and Interrupt
/// or a crash may end it; outside them clang links the cell, and they wait or end the kernel.
extern "C" int xenc_kernel_user_code(int entering);

/// Defined in the kernel: the line of the cell whose code runs now. Each top-level statement and
/// declaration of a cell sets it first (wrap_statements), so a crash's message can name the line.
extern "C" volatile int xenc_kernel_line;

namespace xenc_kernel {

struct no_value {};

template <class T>
const T& operator,(const T& value, no_value) {
  return value;
}

template <class T, class = void>
struct has_mime_bundle : std::false_type {};
template <class T>
struct has_mime_bundle<T, std::void_t<decltype(mime_bundle_repr(std::declval<const T&>()).dump())>>
    : std::true_type {};

template <class T, class = void>
struct has_stream_output : std::false_type {};
template <class T>
struct has_stream_output<
    T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>>
    : std::true_type {};

/// {"text/plain": text} as JSON text.
inline std::string text_bundle(const std::string& text) {
  std::string json = "{\"text/plain\": \"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      json += '\\';
      json += static_cast<char>(c);
    } else if (c < 0x20) {
      static const char* hex = "0123456789abcdef";
      json += "\\u00";
      json += hex[c >> 4];
      json += hex[c & 15];
    } else {
      json += static_cast<char>(c);
    }
  }
  return json + "\"}";
}

template <class T, class = void>
struct is_range : std::false_type {};
template <class T>
struct is_range<T, std::void_t<decltype(std::begin(std::declval<const T&>())),
                               decltype(std::end(std::declval<const T&>()))>> : std::true_type {};
template <class T, class = void>
struct is_map : std::false_type {};
template <class T>
struct is_map<T, std::void_t<typename T::key_type, typename T::mapped_type>> : std::true_type {};
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_pair_or_tuple : std::false_type {};
template <class A, class B>
struct is_pair_or_tuple<std::pair<A, B>> : std::true_type {};
template <class... A>
struct is_pair_or_tuple<std::tuple<A...>> : std::true_type {};

/// Elements of a container shown; after them, how many it has.
constexpr std::size_t kShownElements = 100;

template <class T>
constexpr bool has_text() {
  return std::is_array_v<T> || std::is_convertible_v<const T&, std::string_view> ||
         has_stream_output<T>::value || is_pair_or_tuple<T>::value || is_range<T>::value ||
         is_optional<T>::value;
}

/// value's text, as show_result gives it; an element without one reads <no printable form>.
template <class T>
void write_value(std::ostream& out, const T& value) {
  if constexpr (std::is_same_v<T, char>) {
    out << '\'' << value << '\'';
  } else if constexpr (std::is_convertible_v<const T&, std::string_view> &&
                       !std::is_same_v<T, std::nullptr_t>) {
    if constexpr (std::is_pointer_v<T>)
      if (value == nullptr) {
        out << "nullptr";
        return;
      }
    out << '"' << std::string_view(value) << '"';
  } else if constexpr (has_stream_output<T>::value && !std::is_array_v<T>) {
    out << value;  // (a C array would print as its address)
  } else if constexpr (is_optional<T>::value) {
    if (value)
      write_value(out, *value);
    else
      out << "std::nullopt";
  } else if constexpr (is_pair_or_tuple<T>::value) {
    out << '(';
    std::apply(
        [&out](const auto&... part) {
          std::size_t n = 0;
          ((out << (n++ ? ", " : ""), write_value(out, part)), ...);
        },
        value);
    out << ')';
  } else if constexpr (is_range<T>::value) {
    out << '{';
    std::size_t n = 0;
    for (const auto& element : value) {
      if (n == kShownElements) {
        out << ", ... (" << std::distance(std::begin(value), std::end(value)) << " in all)";
        break;
      }
      if (n++ > 0) out << ", ";
      if constexpr (is_map<T>::value) {
        write_value(out, element.first);
        out << ": ";
        write_value(out, element.second);
      } else {
        write_value(out, element);
      }
    }
    out << '}';
  } else {
    out << "<no printable form>";
  }
}

inline void show_result(no_value) {}

template <class T>
void show_result(const T& value) {
  if constexpr (has_mime_bundle<T>::value) {
    xenc_kernel_publish(mime_bundle_repr(value).dump().c_str(), 1);
  } else if constexpr (has_text<T>()) {
    std::ostringstream text;
    text << std::boolalpha;
    write_value(text, value);
    xenc_kernel_publish(text_bundle(text.str()).c_str(), 1);
  } else {
    xenc_kernel_publish(text_bundle("<no printable form>").c_str(), 1);
  }
}

}  // namespace xenc_kernel
