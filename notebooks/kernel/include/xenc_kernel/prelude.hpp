// The hidden first cell of xenc-kernel: the display hook, and how the value of an expression
// ending a cell is shown (clang 19's interpreter prints no values itself).
//
// A cell ending in an expression E with no semicolon runs, after its statements, as
//     xenc_kernel::show_result(((E), xenc_kernel::no_value{}));
// For a void E the built-in comma gives no_value and nothing is shown; otherwise the comma below
// passes E's value on, and show_result publishes it as the cell's execute_result:
//   - mime_bundle_repr(value) (found by ADL) when the type has one: xencoder's tables and
//     figures, as in xeus-cling;
//   - else its text from operator<< (numbers, strings, xtensor expressions, ...);
//   - else "<no printable form>".
#pragma once

#include <ios>
#include <ostream>
#include <sstream>
#include <string>
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

inline void show_result(no_value) {}

template <class T>
void show_result(const T& value) {
  if constexpr (has_mime_bundle<T>::value) {
    xenc_kernel_publish(mime_bundle_repr(value).dump().c_str(), 1);
  } else if constexpr (std::is_same_v<T, std::string>) {
    xenc_kernel_publish(text_bundle("\"" + value + "\"").c_str(), 1);
  } else if constexpr (has_stream_output<T>::value) {
    std::ostringstream text;
    text << std::boolalpha << value;
    xenc_kernel_publish(text_bundle(text.str()).c_str(), 1);
  } else {
    xenc_kernel_publish(text_bundle("<no printable form>").c_str(), 1);
  }
}

}  // namespace xenc_kernel
