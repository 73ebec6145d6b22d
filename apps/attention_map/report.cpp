// xenc-attention-map's report (see report.hpp): JSON, text tables and heatmaps of a Run.
#include "report.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <xenc/text/display_width.hpp>
#include <xenc/viz/svg.hpp>
#include <xtensor/xreducer.hpp>
#include <xtensor/xview.hpp>

#include "../common/format.hpp"

namespace attention_map {

using xenc_app::format;

std::size_t column_width(const std::vector<std::string>& tokens) {
  std::size_t w = 6;
  for (const auto& t : tokens) w = std::max(w, t.size() + 2);
  return w;
}

std::string to_json(const Run& r) {
  const std::size_t T = r.tokens.size();
  nlohmann::ordered_json j;
  j["tokens"] = r.tokens;
  j["attention"] = nlohmann::ordered_json::array();
  for (const auto& w : r.attention) {
    nlohmann::ordered_json layer = nlohmann::ordered_json::array();  // [batch][H][T][T]
    for (std::size_t b = 0; b < w.shape()[0]; ++b) {
      nlohmann::ordered_json hs = nlohmann::ordered_json::array();
      for (std::size_t h = 0; h < w.shape()[1]; ++h) {
        nlohmann::ordered_json rows = nlohmann::ordered_json::array();
        for (std::size_t i = 0; i < T; ++i) {
          std::vector<float> row(T);
          for (std::size_t k = 0; k < T; ++k) row[k] = w(b, h, i, k);
          rows.push_back(row);
        }
        hs.push_back(rows);
      }
      layer.push_back(hs);
    }
    j["attention"].push_back(layer);
  }
  j["config"] = {{"d_model", r.d_model},   {"heads", r.heads}, {"layers", r.layers},
                 {"position", r.position}, {"seed", r.seed},   {"weights", r.weights}};
  return j.dump();
}

std::string table_text(const Run& r) {
  const std::size_t T = r.tokens.size(), w0 = column_width(r.tokens);
  const int w = int(w0);
  std::string s =
      "Sentence: \"" + xenc::visible(r.sentence) + "\" (" + std::to_string(T) + " tokens); " +
      (r.weights.empty() ? "random encoder" : "encoder layers from " + r.weights + ",") +
      " D = " + std::to_string(r.d_model) + ", " + std::to_string(r.heads) + " heads, " +
      std::to_string(r.layers) + " layers, " + r.position + " positions, seed " +
      std::to_string(r.seed) + "\n" +
      "Row = query token, column = key token; each row sums to 1.\n";
  for (std::size_t l = 0; l < r.attention.size(); ++l)
    for (std::size_t h = 0; h < r.heads; ++h) {
      const xenc::Tensor4& a = r.attention[l];
      s += "\nLayer " + std::to_string(l + 1) + ", head " + std::to_string(h + 1) + "\n" +
           std::string(w0 + 2, ' ');
      for (const auto& t : r.tokens) s += format("%*s", w, t.c_str());
      s += "   strongest\n";
      for (std::size_t i = 0; i < T; ++i) {
        s += format("  %-*s", w, r.tokens[i].c_str());
        std::size_t best = 0;
        for (std::size_t k = 0; k < T; ++k) {
          s += format("%*.3f", w, double(a(0, h, i, k)));
          if (a(0, h, i, k) > a(0, h, i, best)) best = k;
        }
        s += "   -> " + r.tokens[best] + "\n";
      }
    }
  return s;
}

std::size_t write_figures(const Run& r, const std::string& svg_dir) {
  const std::size_t T = r.tokens.size();
  xenc::viz::HeatmapOptions o;
  o.x_label = "key (attended to)";
  o.y_label = "query (attending)";
  o.x_ticks = r.tokens;
  o.y_ticks = r.tokens;
  o.diverging = false;
  // one colour scale for every head: 0 .. the largest weight anywhere (with T tokens the
  // weights average 1/T, so a fixed [0, 1] range would leave long sentences all dark)
  o.vmin = 0;
  o.vmax = 0;
  for (const auto& w : r.attention) o.vmax = std::max(o.vmax, double(xt::amax(w)()));
  o.colorbar_label = "attention weight";
  o.annotate = T <= 12;
  std::vector<xenc::Tensor2> panels;
  std::vector<std::string> titles;
  for (std::size_t l = 0; l < r.attention.size(); ++l)
    for (std::size_t h = 0; h < r.heads; ++h) {
      xenc::Tensor2 p = xt::view(r.attention[l], 0, h, xt::all(), xt::all());  // [T, T]
      const std::string where = std::to_string(l + 1) + ", head " + std::to_string(h + 1);
      o.title = "Attention weights, layer " + where;
      xenc::viz::write_text_file(svg_dir + "/attention_layer" + std::to_string(l + 1) + "_head" +
                                     std::to_string(h + 1) + ".svg",
                                 xenc::viz::heatmap_svg(p, o));
      panels.push_back(p);
      titles.push_back("layer " + where);
    }
  o.title = "Attention weights of every head: \"" + r.sentence + "\"";
  o.annotate = false;
  // one row per layer when the heads fit side by side, else as many per row as fit
  const int columns = r.heads <= 4 && r.heads * (T * 8 + 90) <= 560 ? int(r.heads) : 0;
  xenc::viz::write_text_file(svg_dir + "/attention_all.svg",
                             xenc::viz::heatmap_grid_svg(panels, titles, o, columns));
  return panels.size();
}

}  // namespace attention_map
