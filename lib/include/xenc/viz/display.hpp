// Rich display in notebooks: a tensor as an HTML table, a figure as SVG.
//
// xeus-cling (and xeus-cpp) display any object x for which a function
//     nlohmann::json mime_bundle_repr(const T& x)
// is found by argument-dependent lookup; it returns a MIME bundle such as
//     {"text/html": "<table>...</table>", "text/plain": "..."}
// The types here live in xenc::viz, so ADL finds their mime_bundle_repr:
//
//     xenc::viz::show(xenc::viz::table(pe, {}, {}, "PE, 4 positions x 6 dims"));
//     xenc::viz::show(xenc::viz::Svg{heatmap_svg(pe, options), "PE heatmap"});
//
// show(x) calls xcpp::display(x) when the code runs inside a xeus kernel (cling or clang-repl,
// with the xcpp headers available). Everywhere else (compiled programs, plain clang-repl in CI)
// it prints the bundle's "text/plain" part; with the environment variable XENC_MIME_CAPTURE set
// it prints the whole bundle on one line after the prefix kMimeCapturePrefix instead, so the
// notebook runner (notebooks/tools/nbtool.cpp) can store it as a display_data output.
// Nothing here needs xeus: the library builds and works without it.
//
// Throws:  xenc::shape_error when a label list does not match the table's shape,
//          xenc::config_error for a precision outside [0, 9] (both from xenc/core/error.hpp).
#pragma once

#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "xenc/core/error.hpp"
#include "xenc/core/tensor.hpp"

#if (defined(__CLING__) || defined(__CLANG_REPL__)) && defined(__has_include)
#if __has_include(<xcpp/xdisplay.hpp>)
#include <xcpp/xdisplay.hpp>
#define XENC_VIZ_HAVE_XCPP_DISPLAY 1
#endif
#endif

namespace xenc::viz {

/// A matrix shown as a table of numbers: HTML in a notebook, aligned text elsewhere.
struct Table {
  Tensor2 values;                       ///< [rows, cols]
  std::vector<std::string> row_labels;  ///< one per row, or empty (rows are numbered)
  std::vector<std::string> col_labels;  ///< one per column, or empty (columns are numbered)
  std::string caption;
  int precision = 4;  ///< digits after the decimal point
};

/// A Table of `values` [rows, cols]. Throws xenc::shape_error if a non-empty label list
/// does not have one label per row / column.
Table table(const Tensor2& values, std::vector<std::string> row_labels = {},
            std::vector<std::string> col_labels = {}, std::string caption = {}, int precision = 4);
/// A vector [n] as a one-row table.
Table table(const Tensor1& values, std::vector<std::string> col_labels = {},
            std::string caption = {}, int precision = 4);

/// An SVG figure (from viz/svg.hpp), with a one-line description for text-only outputs.
struct Svg {
  std::string text;         ///< the complete <svg ...>...</svg> document
  std::string description;  ///< "text/plain" part; empty = "<SVG figure>"
};

/// {"text/html": ..., "text/plain": ...}
nlohmann::json mime_bundle_repr(const Table& t);
/// {"image/svg+xml": ..., "text/plain": ...}; the SVG from its <svg> element on (no XML
/// declaration, which is invalid inline in HTML).
nlohmann::json mime_bundle_repr(const Svg& figure);

/// The table as HTML (<table> with a caption, header row and right-aligned numbers).
std::string to_html(const Table& t);
/// The table as aligned plain text, one line per row. Columns are aligned in terminal columns
/// (xenc::display_width: "CAFÉ" is 4 wide, "猫" 2), not bytes.
/// Throws xenc::encoding_error for a label that is not valid UTF-8.
std::string to_text(const Table& t);

/// Lines of captured bundles start with this prefix (see the file comment).
inline constexpr const char* kMimeCapturePrefix = "@@xenc-mime-bundle@@ ";

/// Prints a bundle without a notebook: its "text/plain" part, or (XENC_MIME_CAPTURE set) the
/// prefix and the bundle as one line of JSON. Flushes `os`.
void print_mime_bundle(const nlohmann::json& bundle, std::ostream& os = std::cout);

/// Displays x: xcpp::display(x) inside a xeus kernel, print_mime_bundle otherwise.
template <class T>
void show(const T& x) {
#ifdef XENC_VIZ_HAVE_XCPP_DISPLAY
  xcpp::display(x);
#else
  print_mime_bundle(mime_bundle_repr(x));
#endif
}

}  // namespace xenc::viz
