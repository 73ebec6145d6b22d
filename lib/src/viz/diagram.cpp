// The encoder-layer diagram: one TransformerEncoderLayer drawn top to bottom, a box per step,
// the shape of the tensor on every arrow, and the residual connections on a lane at the left.
//
// The layout is a single column of "nodes" (boxes and ⊕ circles) at fixed vertical pitch; the
// arrow from node i to node i + 1 carries label i. A residual leaves the arrow into the first
// step of its sub-block, runs down the lane and enters its ⊕ from the left.
#include <algorithm>
#include <string>
#include <vector>

#include "svg_primitives.hpp"
#include "xenc/core/error.hpp"
#include "xenc/viz/svg.hpp"

namespace xenc::viz {
namespace {

using namespace detail;

enum class NodeKind { io, attention, norm, feed_forward, add };

struct Node {
  std::string text;
  NodeKind kind;
};

struct Residual {
  std::size_t from_arrow;  // leaves the arrow from node from_arrow to node from_arrow + 1
  std::size_t to_node;     // enters this ⊕ node
};

// Layout constants (px).
constexpr double kBoxWidth = 230.0;
constexpr double kBoxHeight = 30.0;
constexpr double kGap = 36.0;      // between consecutive nodes (the arrows)
constexpr double kLaneX = 34.0;    // residual lane
constexpr double kBoxLeft = 70.0;  // left edge of the boxes
constexpr double kAddRadius = 11.0;
constexpr double kHead = 6.0;  // arrowhead length
constexpr double kBoxFont = 12.5;
constexpr const char* kLineColor = "#333333";
constexpr const char* kResidualColor = "#7b3294";

const char* fill_of(NodeKind k) {
  switch (k) {
    case NodeKind::io:
      return "#eeeeee";
    case NodeKind::attention:
      return "#d6e6f5";
    case NodeKind::norm:
      return "#dcefd6";
    case NodeKind::feed_forward:
      return "#fde3c8";
    case NodeKind::add:
      return "#ffffff";
  }
  return "#ffffff";
}

// "[B, T, D] = [2, 5, 16]": the glossary names and their bound values.
std::string shape_label(const std::vector<std::pair<std::string, std::size_t>>& dims,
                        const std::string& prefix = "") {
  std::string names, values;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    names += (i ? ", " : "") + dims[i].first;
    values += (i ? ", " : "") + std::to_string(dims[i].second);
  }
  return prefix + "[" + names + "] = [" + values + "]";
}

// A downward arrowhead whose tip is at (x, y).
std::string arrowhead_down(double x, double y, const char* color) {
  return "<polygon class=\"arrowhead\" points=\"" + px(x) + "," + px(y) + " " + px(x - 4.5) + "," +
         px(y - kHead) + " " + px(x + 4.5) + "," + px(y - kHead) + "\" fill=\"" + color + "\"/>\n";
}
// A rightward arrowhead whose tip is at (x, y).
std::string arrowhead_right(double x, double y, const char* color) {
  return "<polygon class=\"arrowhead\" points=\"" + px(x) + "," + px(y) + " " + px(x - kHead) +
         "," + px(y - 4.5) + " " + px(x - kHead) + "," + px(y + 4.5) + "\" fill=\"" + color +
         "\"/>\n";
}

void check_sizes(const EncoderLayerDiagramOptions& opt) {
  const std::string where = "encoder_layer_diagram_svg";
  check_config(opt.batch > 0 && opt.seq_len > 0 && opt.d_model > 0 && opt.nhead > 0 &&
                   opt.dim_feedforward > 0,
               where,
               "every size must be positive, got B = " + std::to_string(opt.batch) +
                   ", T = " + std::to_string(opt.seq_len) + ", D = " + std::to_string(opt.d_model) +
                   ", H = " + std::to_string(opt.nhead) +
                   ", F = " + std::to_string(opt.dim_feedforward));
  check_config(opt.d_model % opt.nhead == 0, where,
               "d_model (" + std::to_string(opt.d_model) + ") must be divisible by nhead (" +
                   std::to_string(opt.nhead) + ")");
}

// The layer's steps in order, the label of the arrow leaving each (all but the last), the
// residual connections, and [B, T, D] (the shape every residual carries).
struct Steps {
  std::vector<Node> nodes;
  std::vector<std::string> labels;
  std::vector<Residual> residuals;
  std::string btd;
};

Steps layer_steps(const EncoderLayerDiagramOptions& opt) {
  const std::pair<std::string, std::size_t> B{"B", opt.batch}, T{"T", opt.seq_len},
      D{"D", opt.d_model}, H{"H", opt.nhead}, Dh{"Dh", opt.d_model / opt.nhead},
      F{"F", opt.dim_feedforward};
  const std::string btd = shape_label({B, T, D}), btf = shape_label({B, T, F});
  const std::string qkv = shape_label({B, H, T, Dh}, "Q, K, V: "),
                    scores = shape_label({B, H, T, T}), heads = shape_label({B, H, T, Dh});
  Steps s;
  s.btd = btd;
  auto step = [&](const std::string& text, NodeKind kind, const std::string& out) {
    s.nodes.push_back({text, kind});
    if (!out.empty()) s.labels.push_back(out);
  };
  auto attention = [&] {
    step("in_proj → Q, K, V; split heads", NodeKind::attention, qkv);
    step("softmax(Q·Kᵀ / √Dh)", NodeKind::attention, scores);
    step("weights · V", NodeKind::attention, heads);
    step("merge heads; out_proj", NodeKind::attention, btd);
  };
  auto feed_forward = [&] {
    step("linear1 (D → F)", NodeKind::feed_forward, btf);
    step(opt.activation, NodeKind::feed_forward, btf);
    step("linear2 (F → D)", NodeKind::feed_forward, btd);
  };
  step("x (input)", NodeKind::io, btd);
  if (!opt.norm_first) {
    s.residuals.push_back({0, 5});
    attention();
    step("+", NodeKind::add, btd);
    step("norm1 (LayerNorm)", NodeKind::norm, btd);
    s.residuals.push_back({6, 10});
    feed_forward();
    step("+", NodeKind::add, btd);
    step("norm2 (LayerNorm)", NodeKind::norm, btd);
  } else {
    s.residuals.push_back({0, 6});
    step("norm1 (LayerNorm)", NodeKind::norm, btd);
    attention();
    step("+", NodeKind::add, btd);
    s.residuals.push_back({6, 11});
    step("norm2 (LayerNorm)", NodeKind::norm, btd);
    feed_forward();
    step("+", NodeKind::add, btd);
  }
  step("y (output)", NodeKind::io, "");
  return s;
}

// Vertical layout: the top of node i.
double node_top(std::size_t i) {
  const double top = kMargin + kTitleFont + 18.0;
  return top + double(i) * (kBoxHeight + kGap);
}
constexpr double kCenterX = kBoxLeft + kBoxWidth / 2;

// Residual connections: from the branch point on the arrow, left to the lane, down, right into
// the ⊕ (drawn first, so the boxes lie on top of the lines).
std::string residuals_svg(const Steps& s) {
  const double cx = kCenterX;
  std::string svg;
  for (const auto& r : s.residuals) {
    const double y0 = node_top(r.from_arrow) + kBoxHeight + kGap * 0.45;
    const double y1 = node_top(r.to_node) + kBoxHeight / 2;
    const double x_end = cx - kAddRadius;
    svg += "<polyline class=\"residual\" points=\"" + px(cx) + "," + px(y0) + " " + px(kLaneX) +
           "," + px(y0) + " " + px(kLaneX) + "," + px(y1) + " " + px(x_end - kHead) + "," + px(y1) +
           "\" fill=\"none\" stroke=\"" + kResidualColor + "\" stroke-width=\"1.6\"/>\n";
    svg += arrowhead_right(x_end, y1, kResidualColor);
    svg += "<circle cx=\"" + px(cx) + "\" cy=\"" + px(y0) + "\" r=\"2.5\" fill=\"" +
           kResidualColor + "\"/>\n";
    // the shape it carries, written along the lane
    const double ym = (y0 + y1) / 2;
    svg +=
        text_el(kLaneX - 6, ym, s.btd, kTickFont, "middle",
                " class=\"shape\" transform=\"rotate(-90 " + px(kLaneX - 6) + " " + px(ym) + ")\"");
  }
  return svg;
}

// Arrows between consecutive nodes, each with its shape label right of the line.
std::string arrows_svg(const Steps& s) {
  const double cx = kCenterX;
  std::string svg;
  for (std::size_t i = 0; i + 1 < s.nodes.size(); ++i) {
    const double y0 = node_top(i) + kBoxHeight, y1 = node_top(i + 1);
    const double start =
        s.nodes[i].kind == NodeKind::add ? node_top(i) + kBoxHeight / 2 + kAddRadius : y0;
    const double end =
        s.nodes[i + 1].kind == NodeKind::add ? node_top(i + 1) + kBoxHeight / 2 - kAddRadius : y1;
    svg += "<line class=\"arrow\" x1=\"" + px(cx) + "\" y1=\"" + px(start) + "\" x2=\"" + px(cx) +
           "\" y2=\"" + px(end - kHead) + "\" stroke=\"" + kLineColor +
           "\" stroke-width=\"1.4\"/>\n";
    svg += arrowhead_down(cx, end, kLineColor);
    // a residual branches off in the upper half of its arrow: put the label lower
    const bool branches = std::any_of(s.residuals.begin(), s.residuals.end(),
                                      [&](const Residual& r) { return r.from_arrow == i; });
    const double ly = (y0 + y1) / 2 + (branches ? 7.0 : 0.0);
    svg += text_el(cx + 10, ly + kBaselineShift * kTickFont, s.labels[i], kTickFont, "start",
                   " class=\"shape\"");
  }
  return svg;
}

// Boxes and ⊕ circles.
std::string nodes_svg(const Steps& s) {
  const double cx = kCenterX;
  std::string svg;
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const double y = node_top(i);
    if (s.nodes[i].kind == NodeKind::add) {
      const double cy = y + kBoxHeight / 2;
      svg += "<circle class=\"add\" cx=\"" + px(cx) + "\" cy=\"" + px(cy) + "\" r=\"" +
             px(kAddRadius) + "\" fill=\"#ffffff\" stroke=\"" + kLineColor +
             "\" stroke-width=\"1.4\"/>\n";
      svg += line_el(cx - 6, cy, cx + 6, cy, kLineColor, 1.6);
      svg += line_el(cx, cy - 6, cx, cy + 6, kLineColor, 1.6);
      continue;
    }
    svg += "<rect class=\"box\" x=\"" + px(kBoxLeft) + "\" y=\"" + px(y) + "\" width=\"" +
           px(kBoxWidth) + "\" height=\"" + px(kBoxHeight) + "\" rx=\"5\" fill=\"" +
           fill_of(s.nodes[i].kind) + "\" stroke=\"" + kLineColor + "\" stroke-width=\"1\"/>\n";
    svg += text_el(cx, y + kBoxHeight / 2 + kBaselineShift * kBoxFont, s.nodes[i].text, kBoxFont);
  }
  return svg;
}

}  // namespace

std::string encoder_layer_diagram_svg(const EncoderLayerDiagramOptions& opt) {
  check_sizes(opt);
  const Steps s = layer_steps(opt);
  const std::string title = !opt.title.empty() ? opt.title
                            : opt.norm_first   ? "Pre-norm encoder layer"
                                               : "Post-norm encoder layer";
  const double cx = kCenterX;
  double label_right = 0;
  for (const auto& l : s.labels)
    label_right = std::max(label_right, cx + 10 + text_width(l, kTickFont));
  if (!s.residuals.empty())
    label_right =
        std::max(label_right, kBoxLeft + kBoxWidth + 10 + text_width("residual", kTickFont));
  const double width = std::max(label_right, kBoxLeft + kBoxWidth) + kMargin + 6;
  const double bottom = node_top(s.nodes.size() - 1) + kBoxHeight;
  const std::string note = "dropout (training only) follows out_proj, the activation and linear2";
  const double height = bottom + 14 + kTickFont + kMargin;

  std::string svg = svg_open(std::max(width, text_width(note, kTickFont) + 2 * kMargin), height);
  svg += title_el(std::max(width, text_width(note, kTickFont) + 2 * kMargin), title);
  svg += residuals_svg(s);
  svg += arrows_svg(s);
  svg += nodes_svg(s);
  svg += text_el(kMargin, bottom + 14 + kTickFont * 0.5, note, kTickFont, "start",
                 " font-style=\"italic\"");
  svg += "</svg>\n";
  return svg;
}

}  // namespace xenc::viz
