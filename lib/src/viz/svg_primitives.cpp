// The SVG writer's building blocks (svg_primitives.hpp) and the two public helpers every figure
// needs: xml_escape and write_text_file.
#include "svg_primitives.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "xenc/core/error.hpp"
#include "xenc/text/display_width.hpp"
#include "xenc/viz/svg.hpp"

namespace xenc::viz {

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // control characters other than tab/newline are not allowed in XML 1.0
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw io_error("write_text_file: cannot open '" + path + "' for writing");
  f << text;
  f.close();
  if (!f) throw io_error("write_text_file: writing '" + path + "' failed");
}

namespace detail {

double text_width(const std::string& s, double font_size) {
  std::size_t columns = 0;
  try {
    columns = display_width(s);
  } catch (const encoding_error&) {  // not UTF-8: estimate one column per non-continuation byte
    for (unsigned char c : s) columns += (c & 0xC0) != 0x80;
  }
  return kCharWidthEm * font_size * double(columns);
}

std::size_t thinning_step(double spacing, double need) {
  if (!(spacing > 0)) return 1;
  return std::max<std::size_t>(1, std::size_t(std::ceil(need / spacing - 1e-9)));
}

std::string fixed(float v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, static_cast<double>(v));
  std::string s = buf;
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string fmt_tick(double v, double step) {
  if (!(step > 0) || !std::isfinite(step)) return fmt(v);
  // decimals of the step: 0.1 -> 1, 0.25 -> 2, 0.0005 -> 4, 5 -> 0
  int decimals = 0;
  while (decimals < 12 && std::abs(step * std::pow(10.0, decimals) -
                                   std::round(step * std::pow(10.0, decimals))) > 1e-6)
    ++decimals;
  if (std::abs(v) < step * 1e-6) v = 0.0;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string fmt(double v) {
  if (std::abs(v) < 1e-12) v = 0.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

std::string hex(const Rgb& c) {
  auto clamp8 = [](double v) { return int(std::lround(std::clamp(v, 0.0, 255.0))); };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", clamp8(c.r), clamp8(c.g), clamp8(c.b));
  return buf;
}

double nice_step(double span, int max_ticks) {
  if (!(span > 0)) return 1.0;
  const double raw = span / std::max(1, max_ticks);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw * (1 - 1e-9)) return m * mag;
  return 10 * mag;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
  const double step = nice_step(hi - lo, max_ticks);
  std::vector<double> t;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return t;
}

std::string text_el(double x, double y, const std::string& s, double size, const char* anchor,
                    const std::string& extra) {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" font-family=\"" + kFont +
         "\" font-size=\"" + px(size) + "\" text-anchor=\"" + anchor + "\" fill=\"" + kTextColor +
         "\"" + extra + ">" + xml_escape(s) + "</text>\n";
}

std::string vertical_text_el(double x, double y, const std::string& s, double size) {
  return text_el(x, y, s, size, "middle", " transform=\"rotate(-90 " + px(x) + " " + px(y) + ")\"");
}

std::string rotated_tick_label_el(double x, double y_frame, const std::string& s) {
  const double ax = x + kRotatedLabelDx, ay = y_frame + kRotatedLabelDy;
  return text_el(ax, ay, s, kTickFont, "end",
                 " class=\"xtick\" transform=\"rotate(-45 " + px(ax) + " " + px(ay) + ")\"");
}

std::string line_el(double x1, double y1, double x2, double y2, const char* color, double width) {
  return "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) +
         "\" stroke=\"" + color + "\" stroke-width=\"" + px(width) + "\"/>\n";
}

std::string frame_el(double x, double y, double w, double h) {
  return "<rect x=\"" + px(x) + "\" y=\"" + px(y) + "\" width=\"" + px(w) + "\" height=\"" + px(h) +
         "\" fill=\"none\" stroke=\"" + kAxisColor + "\" stroke-width=\"1\"/>\n";
}

std::string title_el(double width, const std::string& title) {
  const double room = width - 2 * kMargin;
  double size = kTitleFont;
  while (size > kMinTitleFont && text_width(title, size) > room) size -= 1;
  std::string t = title;
  if (text_width(t, size) > room) {
    // drop whole UTF-8 characters (continuation bytes, then the lead byte) from the end until
    // the text and "..." fit; a wide CJK character counts two columns
    while (!t.empty() && text_width(t + "...", size) > room) {
      while (!t.empty() && (static_cast<unsigned char>(t.back()) & 0xC0) == 0x80) t.pop_back();
      if (!t.empty()) t.pop_back();
    }
    t += "...";
  }
  return text_el(width / 2, kMargin + kTitleFont, t, size, "middle", " font-weight=\"bold\"");
}

std::string svg_open(double w, double h) {
  const std::string W = px(std::ceil(w)), H = px(std::ceil(h));
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
         W + "\" height=\"" + H + "\" viewBox=\"0 0 " + W + " " + H +
         "\">\n<rect x=\"0\" y=\"0\" width=\"" + W + "\" height=\"" + H + "\" fill=\"#ffffff\"/>\n";
}

}  // namespace detail
}  // namespace xenc::viz
