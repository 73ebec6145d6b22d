// The browser page's entry points (embind): the word-order experiment and its report
// (apps/word_order), the sinusoidal table (xenc::sinusoidal_encoding, apps/pe_heatmap's records),
// and the agent/patient training and its report (apps/train_order), compiled to WebAssembly by
// cmake/XencWasm.cmake into xenc-web.js + xenc-web.wasm. Every number and every sentence the page
// shows comes from here: the page only lays out what these functions return.
//
// Each function takes and returns JSON text. No C++ exception crosses into JavaScript (embind
// would hand over a bare number): each is caught here and returned as {"error": "what()"}, which
// the page shows.
//
//     wordOrder('{"a": "cat chased mouse", "b": "mouse chased cat", "position": "rope"}')
//     sinusoidalTable('{"positions": 64, "d_model": 64}')
//     trainOrder('{"schemes": ["none", "sinusoidal"], "epochs": 6}', progress => ...)
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <xtensor/xreducer.hpp>
#include <xtensor/xview.hpp>

#include <xenc/core/error.hpp>
#include <xenc/ops/positional.hpp>
#include <xenc/text/display_width.hpp>
#include <xenc/text/tokenizer.hpp>
#include <xenc/viz/svg.hpp>

#include "../pe_heatmap/options.hpp"
#include "../train_order/experiment.hpp"
#include "../train_order/options.hpp"
#include "../train_order/report.hpp"
#include "../word_order/experiment.hpp"
#include "../word_order/options.hpp"
#include "../word_order/report.hpp"

namespace {

using json = nlohmann::ordered_json;

std::string error_json(const std::string& message) { return json{{"error", message}}.dump(); }

// Runs f() and returns its text, or {"error": ...} for any exception.
template <class F>
std::string guarded(F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return error_json(e.what());
  } catch (...) {
    return error_json("unknown C++ exception");
  }
}

std::string fixed6(double v) {
  if (std::isnan(v)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

// 'text' quoted for a POSIX shell.
std::string shell_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// ---- word order -----------------------------------------------------------------------------

// The page draws attention heatmaps with a word on every row and column: longer sentences go to
// the command line.
constexpr std::size_t kMaxPageWords = 32;

// Every head of every layer of one sentence (row 0: A, row 1: B) of a run, words on the axes.
// vmax: the top of the colour scale (the largest weight on the page: with T words the weights
// average 1/T, so a fixed [0, 1] scale would leave every figure dark).
std::string attention_svg(const word_order::Run& run, std::size_t row,
                          const std::vector<std::string>& tokens, const std::string& label,
                          const std::string& sentence, double vmax) {
  const std::size_t n = tokens.size();
  std::vector<xenc::Tensor2> panels;
  std::vector<std::string> titles;
  for (std::size_t l = 0; l < run.attention.size(); ++l)
    for (std::size_t h = 0; h < run.attention[l].shape(1); ++h) {
      panels.push_back(
          xenc::Tensor2(xt::view(run.attention[l], row, h, xt::range(0, n), xt::range(0, n))));
      titles.push_back("layer " + std::to_string(l + 1) + ", head " + std::to_string(h + 1));
    }
  xenc::viz::HeatmapOptions o;
  o.title = "Attention, position: " + run.scheme + ", sentence " + label + ": \"" + sentence + "\"";
  o.x_label = "key (attended to)";
  o.y_label = "query";
  o.x_ticks = tokens;
  o.y_ticks = tokens;
  o.diverging = false;
  o.vmin = 0.0;
  o.vmax = vmax;
  o.colorbar_label = "attention weight";
  o.annotate = n <= 6;
  // cells wide enough for the longest word under its column (about 7 px a column of text), as
  // long as a panel stays within about 640 px; 14 to 56 px
  std::size_t longest = 1;
  for (const auto& t : tokens) longest = std::max(longest, xenc::display_width(t));
  const std::size_t cap = std::max<std::size_t>(14, 640 / std::max<std::size_t>(1, n));
  o.cell_size = int(std::clamp<std::size_t>(std::min(7 * longest + 8, cap), 14, 56));
  return xenc::viz::heatmap_grid_svg(panels, titles, o);
}

std::string word_order_page(const std::string& options_text) {
  const json in = json::parse(options_text);
  // the keys and their page ranges are the records' (apps/word_order/options.hpp)
  word_order::CommandLine c;
  xenc_app::read_page_options(in, c, word_order::option_records());
  word_order::Options o = c;
  if (o.position == "all")
    throw std::invalid_argument(
        "--position: the page compares none with one scheme at a time, got \"all\"");
  o.keep_attention = true;
  for (const auto& [flag, text] : {std::pair<std::string, std::string>{"--a", o.a}, {"--b", o.b}}) {
    const std::size_t words = xenc::tokenize(text).size();
    if (words > kMaxPageWords)
      throw std::invalid_argument(
          flag + ": " + std::to_string(words) + " words, the page takes at most " +
          std::to_string(kMaxPageWords) +
          " (its heatmaps put a word on every row and column); xenc-word-order takes longer "
          "sentences");
  }
  const word_order::Result r = word_order::run_experiment(o);
  const word_order::Context ctx = word_order::context_of(r);

  std::ostringstream text;
  word_order::print_text(text, r);
  json out;
  out["command"] = "xenc-word-order --a " + shell_quote(o.a) + " --b " + shell_quote(o.b) +
                   " --position " + o.position +
                   (o.d_model != 16 ? " --d-model " + std::to_string(o.d_model) : "") +
                   (o.heads != 2 ? " --heads " + std::to_string(o.heads) : "") +
                   (o.layers != 2 ? " --layers " + std::to_string(o.layers) : "") +
                   (o.seed != 42 ? " --seed " + std::to_string(o.seed) : "");
  out["text"] = text.str();
  out["report"] = json::parse(word_order::to_json(r));
  std::vector<std::string> words;
  for (const auto& m : r.matches) words.push_back(m.key);
  out["words"] = words;
  double vmax = 0.0;  // one colour scale for every figure: 0 .. the largest weight of a word
  for (const auto& run : r.runs)
    for (const auto& w : run.attention)
      for (std::size_t row = 0; row < 2; ++row) {
        const std::size_t n = (row == 0 ? r.tokens_a : r.tokens_b).size();
        vmax = std::max(
            vmax,
            double(xt::amax(xt::view(w, row, xt::all(), xt::range(0, n), xt::range(0, n)))()));
      }
  json runs = json::array();
  for (const auto& run : r.runs) {
    json j;
    j["scheme"] = run.scheme;
    j["json_key"] = run.json_key;
    j["heading"] = run.scheme == "none" ? "Without positional information (--position none)"
                                        : "With " + run.scheme + " positional encoding";
    json stages = json::array();
    for (const auto& s : run.stages) {
      json cells = json::array();
      for (double c : s.token) cells.push_back(fixed6(c));
      stages.push_back({{"name", s.name},
                        {"token", s.token},
                        {"cells", cells},
                        {"sentence", s.sentence},
                        {"sentence_cell", fixed6(s.sentence)}});
    }
    j["stages"] = stages;
    j["narration"] = word_order::explain(run, ctx);
    j["attention_a"] = attention_svg(run, 0, r.tokens_a, "A", o.a, vmax);
    j["attention_b"] = attention_svg(run, 1, r.tokens_b, "B", o.b, vmax);
    runs.push_back(j);
  }
  out["runs"] = runs;
  return out.dump();
}

// ---- the sinusoidal table -------------------------------------------------------------------

std::string sinusoidal_page(const std::string& options_text) {
  const json in = json::parse(options_text);
  // the keys and their page ranges are xenc-pe-heatmap's records (apps/pe_heatmap/options.hpp)
  pe_heatmap::CommandLine c;
  xenc_app::read_page_options(in, c, pe_heatmap::option_records());
  const std::size_t positions = c.positions, d_model = c.d_model;
  if (d_model % 2 != 0)
    throw std::invalid_argument("--d-model: " + std::to_string(d_model) +
                                ", expected an even number (sin and cos fill dimension pairs)");
  const xenc::Tensor2 pe =
      xenc::sinusoidal_encoding(std::size_t(positions), std::size_t(d_model));  // [T, D]
  xenc::viz::HeatmapOptions h;
  h.title = "Sinusoidal positional encoding, " + std::to_string(positions) +
            " positions x D = " + std::to_string(d_model);
  h.x_label = "dimension j (pairs 2i, 2i+1 share a frequency)";
  h.y_label = "position p";
  h.vmin = -1;
  h.vmax = 1;
  h.colorbar_label = "PE(p, j)";
  json out;
  out["svg"] = xenc::viz::heatmap_svg(pe, h);
  // the first positions' numbers, for the table under the figure
  out["first_rows"] = json::array();
  for (std::size_t p = 0; p < std::min<std::size_t>(4, std::size_t(positions)); ++p) {
    std::vector<double> row;
    for (std::size_t j = 0; j < std::size_t(d_model); ++j) row.push_back(pe(p, j));
    out["first_rows"].push_back(row);
  }
  return out.dump();
}

// ---- training -------------------------------------------------------------------------------

// The page's browser tab has one wasm heap (at most 2 GiB): a run is refused above this.
constexpr std::size_t kPageMaxMemoryMb = 1024;
constexpr double kPageMaxMinutes = 10;

std::string train_page(const std::string& options_text, emscripten::val on_progress) {
  const json in = json::parse(options_text);
  // the keys and their page ranges are the records' (apps/train_order/options.hpp)
  train_order::CommandLine c;
  xenc_app::read_page_options(in, c, train_order::option_records());
  const train_order::Options& o = c;
  if (o.schemes.empty())
    throw std::invalid_argument("--schemes: name at least one position scheme");

  xenc_app::Progress progress(false);           // the page draws its own bar from on_step
  std::vector<train_order::SchemeResult> done;  // the models trained so far (for the curves)
  std::size_t scheme_index = 0, points = 0;
  auto last_post = std::chrono::steady_clock::time_point{};
  const train_order::Result res = train_order::run_experiment(
      o, progress,
      [&](const train_order::Result& r) {
        const xenc_app::TrainingPlan plan = train_order::training_plan(o, r.data, o.schemes.size());
        xenc_app::check_training_plan(plan, kPageMaxMemoryMb, kPageMaxMinutes,
                                      train_order::training_plan_sizes(o, r.data));
        progress.set_time_limit(plan.models * plan.steps, kPageMaxMinutes,
                                "fewer epochs or sentences per pair, or a smaller model");
        on_progress(json{{"type", "ready"}, {"header", train_order::header_text(r)}}.dump());
      },
      [&](const train_order::Result&, const train_order::SchemeResult& s, xenc::TokenClassifier&) {
        done.push_back(s);
        ++scheme_index;
        points = 0;
        on_progress(json{{"type", "trained"},
                         {"scheme", s.name},
                         {"heldout_accuracy", s.test.accuracy},
                         {"seconds", s.seconds},
                         {"curves_svg", train_order::curves_svg(done)},
                         {"attention_svg", train_order::attention_svg(s)}}
                        .dump());
      },
      [&](const train_order::SchemeResult& so_far, std::size_t step, std::size_t steps) {
        const auto now = std::chrono::steady_clock::now();
        const bool new_point = so_far.curve.epoch.size() != points;
        if (!new_point && step != steps && now - last_post < std::chrono::milliseconds(100)) return;
        last_post = now;
        points = so_far.curve.epoch.size();
        json msg{{"type", "step"},
                 {"scheme", so_far.name},
                 {"scheme_index", scheme_index},
                 {"schemes", o.schemes.size()},
                 {"step", step},
                 {"steps", steps}};
        if (new_point && points >= 2) {  // a curve needs two points
          std::vector<train_order::SchemeResult> shown = done;
          shown.push_back(so_far);
          msg["curves_svg"] = train_order::curves_svg(shown);
          msg["heldout_accuracy"] = so_far.curve.heldout_accuracy.back();
          msg["epoch"] = so_far.curve.epoch.back();
        }
        on_progress(msg.dump());
      });
  json out;
  out["table"] = train_order::table_text(res);
  out["curves_svg"] = train_order::curves_svg(res.schemes);
  json results = json::array();
  for (const auto& s : res.schemes)
    results.push_back({{"scheme", s.name},
                       {"train", train_order::eval_json(s.train)},
                       {"heldout", train_order::eval_json(s.test)},
                       {"seconds", s.seconds},
                       {"steps", s.steps}});
  out["results"] = results;
  return out.dump();
}

}  // namespace

std::string wordOrder(const std::string& options) {
  return guarded([&] { return word_order_page(options); });
}
std::string sinusoidalTable(const std::string& options) {
  return guarded([&] { return sinusoidal_page(options); });
}
std::string trainOrder(const std::string& options, emscripten::val on_progress) {
  return guarded([&] { return train_page(options, on_progress); });
}

EMSCRIPTEN_BINDINGS(xenc_web) {
  emscripten::function("wordOrder", &wordOrder);
  emscripten::function("sinusoidalTable", &sinusoidalTable);
  emscripten::function("trainOrder", &trainOrder);
}
