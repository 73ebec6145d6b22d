// Notebook display: tables as HTML / text, SVG figures, and the text fallback of show().
#include "xenc/viz/display.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "svg_primitives.hpp"
#include "xenc/core/error.hpp"
#include "xenc/text/display_width.hpp"
#include "xenc/viz/svg.hpp"

namespace xenc::viz {

namespace {

using detail::fixed;

std::string row_label(const Table& t, std::size_t i) {
  return t.row_labels.empty() ? std::to_string(i) : t.row_labels[i];
}

std::string col_label(const Table& t, std::size_t j) {
  return t.col_labels.empty() ? std::to_string(j) : t.col_labels[j];
}

}  // namespace

Table table(const Tensor2& values, std::vector<std::string> row_labels,
            std::vector<std::string> col_labels, std::string caption, int precision) {
  // Labels are optional, but when given there is exactly one per row / column.
  if (!row_labels.empty() && row_labels.size() != values.shape(0))
    throw shape_error("viz::table: row_labels has " + std::to_string(row_labels.size()) +
                      " labels, expected one per row (" + std::to_string(values.shape(0)) +
                      ") for values of shape " + shape_str(values.shape()));
  if (!col_labels.empty() && col_labels.size() != values.shape(1))
    throw shape_error("viz::table: col_labels has " + std::to_string(col_labels.size()) +
                      " labels, expected one per column (" + std::to_string(values.shape(1)) +
                      ") for values of shape " + shape_str(values.shape()));
  if (precision < 0 || precision > 9)
    throw config_error("viz::table: precision is " + std::to_string(precision) +
                       ", expected 0 .. 9");
  return Table{values, std::move(row_labels), std::move(col_labels), std::move(caption), precision};
}

Table table(const Tensor1& values, std::vector<std::string> col_labels, std::string caption,
            int precision) {
  // [n] -> [1, n]
  Tensor2 row = Tensor2::from_shape({1, values.size()});
  std::copy(values.begin(), values.end(), row.begin());
  return table(row, {}, std::move(col_labels), std::move(caption), precision);
}

std::string to_html(const Table& t) {
  // A plain table: header row of column labels, one <th> per row label, numbers right-aligned.
  std::string h = "<table style=\"border-collapse: collapse; font-family: monospace\">\n";
  if (!t.caption.empty()) h += "<caption>" + xml_escape(t.caption) + "</caption>\n";
  h += "<tr><th></th>";
  for (std::size_t j = 0; j < t.values.shape(1); ++j)
    h += "<th style=\"text-align: right\">" + xml_escape(col_label(t, j)) + "</th>";
  h += "</tr>\n";
  for (std::size_t i = 0; i < t.values.shape(0); ++i) {
    h += "<tr><th style=\"text-align: left\">" + xml_escape(row_label(t, i)) + "</th>";
    for (std::size_t j = 0; j < t.values.shape(1); ++j)
      h += "<td style=\"text-align: right\">" + fixed(t.values(i, j), t.precision) + "</td>";
    h += "</tr>\n";
  }
  return h + "</table>";
}

std::string to_text(const Table& t) {
  const std::size_t rows = t.values.shape(0), cols = t.values.shape(1);
  // Column 0 holds the row labels; every other column is as wide as its widest cell.
  std::vector<std::vector<std::string>> cells(rows + 1, std::vector<std::string>(cols + 1));
  for (std::size_t j = 0; j < cols; ++j) cells[0][j + 1] = col_label(t, j);
  for (std::size_t i = 0; i < rows; ++i) {
    cells[i + 1][0] = row_label(t, i);
    for (std::size_t j = 0; j < cols; ++j) cells[i + 1][j + 1] = fixed(t.values(i, j), t.precision);
  }
  // widths in terminal columns, not bytes: "CAFÉ" is 4, "猫" is 2 (xenc::display_width)
  std::vector<std::size_t> width(cols + 1, 0);
  for (const auto& line : cells)
    for (std::size_t j = 0; j <= cols; ++j) width[j] = std::max(width[j], display_width(line[j]));

  std::string s = t.caption.empty() ? "" : t.caption + "\n";
  for (const auto& line : cells) {
    std::string out = pad_right(line[0], width[0]);
    for (std::size_t j = 1; j <= cols; ++j) out += "  " + pad_left(line[j], width[j]);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    s += out + "\n";
  }
  if (!s.empty()) s.pop_back();
  return s;
}

nlohmann::json mime_bundle_repr(const Table& t) {
  auto bundle = nlohmann::json::object();
  bundle["text/html"] = to_html(t);
  bundle["text/plain"] = to_text(t);
  return bundle;
}

nlohmann::json mime_bundle_repr(const Svg& figure) {
  // Inline SVG starts at the <svg> element: an XML declaration or DOCTYPE in front of it is
  // invalid inside HTML (nbconvert rejects it), so it is left out, as IPython's SVG does.
  const std::size_t start = figure.text.find("<svg");
  auto bundle = nlohmann::json::object();
  bundle["image/svg+xml"] = start == std::string::npos ? figure.text : figure.text.substr(start);
  bundle["text/plain"] = figure.description.empty() ? "<SVG figure>" : figure.description;
  return bundle;
}

void print_mime_bundle(const nlohmann::json& bundle, std::ostream& os) {
  const char* capture = std::getenv("XENC_MIME_CAPTURE");
  if (capture != nullptr && *capture != '\0') {
    // One line: the runner turns it into a display_data output.
    os << kMimeCapturePrefix << bundle.dump() << std::endl;
    return;
  }
  auto text = bundle.find("text/plain");
  if (text != bundle.end() && text->is_string())
    os << text->get<std::string>() << std::endl;
  else
    os << "<display: " << bundle.size() << " MIME types, no text/plain>" << std::endl;
}

}  // namespace xenc::viz
