// The SVG writer's building blocks, shared by heatmap.cpp and line_plot.cpp (internal header,
// not installed): fonts and text widths, number formatting, colours, nice tick values, and the
// elements every figure uses (<svg> header, <text>, <line>, a title that fits).
//
// Layout is computed in pixels from estimated text widths (sans-serif at font size s is about
// kCharWidthEm·s px per character), so labels never need a browser to be measured.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace xenc::viz::detail {

// --- fonts and text ------------------------------------------------------------------------------
inline constexpr double kTickFont = 11.0;       // tick labels, legend entries
inline constexpr double kLabelFont = 13.0;      // axis labels, panel titles
inline constexpr double kTitleFont = 15.0;      // figure titles
inline constexpr double kMinTitleFont = 11.0;   // a long title shrinks down to this, then is cut
inline constexpr double kCharWidthEm = 0.6;     // average glyph width / font size (sans-serif)
inline constexpr double kBaselineShift = 0.35;  // × font size: vertically centres text on a y
// Latin first, then CJK families (Linux: fonts-noto-cjk, Adobe's Source Han Sans, WenQuanYi;
// macOS: PingFang; Windows: Microsoft YaHei), then the generic family. A renderer takes each
// glyph from the first family that has it, so "猫" is not drawn as an empty box.
inline constexpr const char* kFont =
    "DejaVu Sans, Noto Sans CJK SC, Noto Sans CJK JP, Source Han Sans SC, WenQuanYi Zen Hei, "
    "PingFang SC, Microsoft YaHei, Arial, Helvetica, sans-serif";
inline constexpr const char* kTextColor = "#222222";
inline constexpr const char* kAxisColor = "#444444";  // frames, ticks

// --- common layout -------------------------------------------------------------------------------
inline constexpr double kMargin = 10.0;          // figure edge to content
inline constexpr double kTickLength = 4.0;       // tick marks outside the frame
inline constexpr double kTickLabelGap = 6.0;     // frame to the near edge of a tick label
inline constexpr double kCos45 = 0.7071;         // rotated (-45°) labels: extent per px of text
inline constexpr double kRotatedLabelDx = 3.0;   // anchor of a rotated x label, right of its tick
inline constexpr double kRotatedLabelDy = 12.0;  // ... and below the frame

/// Estimated width in px of `s` at `font_size`: kCharWidthEm per terminal column
/// (xenc::display_width: East Asian wide characters count two, combining marks none).
double text_width(const std::string& s, double font_size);

/// Every k-th label is shown when labels `need` px apart sit on ticks `spacing` px apart: the
/// smallest k >= 1 with k * spacing >= need.
std::size_t thinning_step(double spacing, double need);

/// Extent along the axis of a label rotated by -45 degrees: one line height / cos 45.
inline constexpr double kRotatedLabelPitch = (kTickFont + 2) / kCos45;

/// A number with up to 4 significant digits, "-0" printed as "0".
std::string fmt(double v);

/// A number with exactly `precision` decimals; "-0.0000" is printed as "0.0000".
std::string fixed(float v, int precision);

/// A tick value with as many decimals as its `step` needs (0.9995 and 0.9996 stay distinct,
/// 0.25 keeps both decimals), "-0" printed as "0".
std::string fmt_tick(double v, double step);

/// A pixel coordinate with at most 2 decimals (keeps files small and exact enough).
std::string px(double v);

/// A colour with components in [0, 255] (clamped when written).
struct Rgb {
  double r, g, b;
};
/// "#rrggbb".
std::string hex(const Rgb& c);

/// "Nice" tick step (1, 2, 2.5 or 5 × 10^k) giving at most about `max_ticks` ticks over `span`.
double nice_step(double span, int max_ticks);
/// The multiples of nice_step(hi - lo, max_ticks) in [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);

/// <text> at (x, y) in the figure font; `anchor` is start / middle / end; `extra` adds
/// attributes (e.g. a rotation). The text is XML-escaped.
std::string text_el(double x, double y, const std::string& s, double size,
                    const char* anchor = "middle", const std::string& extra = "");
/// <text> rotated by -90° about its anchor (reads bottom to top): y-axis and colour-bar labels.
std::string vertical_text_el(double x, double y, const std::string& s, double size);
/// <text> rotated by -45°, its end at the tick at x below the frame edge at y_frame.
std::string rotated_tick_label_el(double x, double y_frame, const std::string& s);
/// <line> from (x1, y1) to (x2, y2).
std::string line_el(double x1, double y1, double x2, double y2, const char* color = kAxisColor,
                    double width = 1.0);
/// An unfilled rectangle outlined in the axis colour (a plot frame).
std::string frame_el(double x, double y, double w, double h);

/// A bold title centred in a figure `width` px wide: the font shrinks down to kMinTitleFont,
/// then the text is cut (at a whole UTF-8 character) and ends in "...".
std::string title_el(double width, const std::string& title);

/// The XML declaration, the <svg> element of size w × h (rounded up) and a white background.
std::string svg_open(double w, double h);

}  // namespace xenc::viz::detail
