// Shared by the demo apps (included as "../common/options.hpp"): one record per option, as
// llama.cpp's common/arg.cpp declares each option once (flag, help, range and member in one
// line). A record holds
//
//     flag  "--d-model"       the command line's name (CLI11)
//     key   "d_model"         the web page's JSON key (apps/web/bindings.cpp reads it)
//     echo  "d_model"         the key under which a report echoes the value (nullptr: not echoed);
//                             PyTorch's names where they differ ("nhead" for --heads)
//     help                    the --help text
//     cli, page               the values accepted on the command line and on the web page
//     field                   the member of the program's options it fills
//
// and four loops read them: add_options (the CLI11 declarations), read_page_options (the web
// page's JSON), echo_options (the options as the reports' JSON echoes them) and
// read_echoed_options (that echo read back, by a program that re-reads its own JSON). The default
// is the member's initial value in the program's Options (each program sets its own sizes), shown
// by
// --help.
//
// The records are grouped: model_records (the encoder's sizes), fit_records (the optimiser and
// the batches, apps/common/training.hpp's FitOptions), guard_records (the limits of
// apps/common/cli.hpp's Guard) and output_records (--json, --quiet). A program lists its groups
// and its own records once (e.g. apps/train_order/options.hpp). A range differs between programs
// only where a program's limit demands it: `why` says so in the record.
//
// Adding an option to every training program (xenc-train-order, xenc-extrapolate and the web
// page's training tab) is one line: its line in XENC_FIT_OPTIONS, which makes both the member of
// FitGroupOptions and the record of fit_records. Adding a model option to every program that
// takes the model's sizes is one line too: its line in XENC_MODEL_OPTIONS, which makes the member
// of ModelGroupOptions and the record of model_records. apps/README.md shows both.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "cli.hpp"

namespace xenc_app {

/// The values an option accepts. whole: an integer in [lo, hi]; real: a number in [lo, hi]
/// (positive: also finite and > 0 as a float, positive_float); flag: true when given; text: any
/// text, or one of `choices`; list: comma-separated values, each whole in [lo, hi] when numeric.
struct Range {
  enum Kind { whole, real, flag, text, list } kind = whole;
  double lo = 0, hi = 0;
  bool positive = false;
  std::vector<std::string> choices = {};
  bool on = true;       ///< false: the option is not offered here (a page-only or CLI-only option)
  bool needed = false;  ///< the command line must give it (CLI11's required())
};

inline Range whole(double lo, double hi) { return {Range::whole, lo, hi}; }
inline Range real(double lo, double hi, bool positive = false) {
  return {Range::real, lo, hi, positive};
}
inline Range flag() { return {Range::flag}; }
inline Range text(std::vector<std::string> choices = {}) {
  return {Range::text, 0, 0, false, std::move(choices)};
}
inline Range list(double lo = 0, double hi = 0) { return {Range::list, lo, hi}; }
/// `r`, and the command line must give it (e.g. xenc-encode's --weights).
inline Range required(Range r) {
  r.needed = true;
  return r;
}
/// Not offered (on the web page, or on the command line).
inline Range absent() {
  Range r;
  r.on = false;
  return r;
}

/// The member a record fills, reached through the program's options `O` (nested members too:
/// XENC_FIELD(O, out.json)).
template <class O>
using Field =
    std::variant<int& (*)(O&), unsigned& (*)(O&), std::size_t& (*)(O&), double& (*)(O&),
                 float& (*)(O&), bool& (*)(O&), std::string& (*)(O&), std::vector<int>& (*)(O&),
                 std::vector<std::size_t>& (*)(O&), std::vector<std::string>& (*)(O&)>;
#define XENC_FIELD(O, member) +[](O& o) -> decltype(auto) { return (o.member); }

template <class O>
struct OptionRecord {
  const char* flag;
  const char* key;
  const char* echo;
  const char* help;
  Range cli;
  Range page;
  Field<O> field;
  const char* why = "";  ///< why this range differs from the other programs' (empty: it does not)
};

// ---- the groups ---------------------------------------------------------------------------------

// The fit group (the optimiser and the batches, training.hpp's FitOptions, and the seed of
// everything random), one line per option:
//
//     X(type, member, default, flag, JSON key, echo key, help, command-line range, page range)
//
// FitGroupOptions (the members) and fit_records (the records) are both made from this list, so
// adding a line here adds the member, the flag, the page key and the echo to every training
// program (apps/README.md shows it). `batch_help` is fit_records' argument: what a batch holds.
// clang-format off
#define XENC_FIT_OPTIONS(X)                                                                                                                                       \
  X(int,      epochs,       6,    "--epochs",       "epochs",       "epochs",         "passes over the training set",                   whole(1, 1000),         whole(1, 30))       \
  X(int,      batch_size,   32,   "--batch-size",   "batch_size",   "batch_size",     batch_help,                                       whole(1, 4096),         whole(1, 256))      \
  X(int,      warmup,       100,  "--warmup",       "warmup",       "warmup_steps",   "learning-rate warm-up steps",                    whole(0, 100000),       absent())           \
  X(double,   lr,           3e-3, "--lr",           "lr",           "lr",             "peak learning rate (AdamW)",                     real(1e-6, 1.0, true),  absent())           \
  X(double,   weight_decay, 0.01, "--weight-decay", "weight_decay", "weight_decay",   "AdamW's decoupled weight decay",                 real(0.0, 1.0),         absent())           \
  X(double,   clip,         1.0,  "--clip",         "clip",         "clip_grad_norm", "clip the gradient norm to this",                 real(1e-6, 1e6, true),  absent())           \
  X(unsigned, seed,         0,    "--seed",         "seed",         "seed",           "seed of the data, the weights and the batches",  whole(0, 4294967295.0), whole(0, 4294967295.0))
// clang-format on

/// Why the training programs take a smaller model than the inference ones (1..4096 D, 256 heads,
/// 48 layers): every model trains for minutes on two cores, once per position scheme.
constexpr const char* kTrainingLimit =
    "trained once per scheme on a CPU: sizes a run finishes in minutes";
/// Why the web page takes less again: one wasm heap (at most 2 GiB) in a browser tab, on the
/// page's single thread.
constexpr const char* kPageLimit = "the web page: one wasm heap in a browser tab";

// The model group (the encoder's sizes), one line per option, with its records for each use:
// a program that runs the model once (inference: xenc-word-order, xenc-attention-map,
// xenc-init-encoder) and one that trains it once per scheme (training: xenc-train-order,
// xenc-extrapolate, which take a smaller model, kTrainingLimit, and echo PyTorch's names in
// their JSON):
//
//     X(type, member, default, flag, JSON key,
//       inference: echo key, help, command-line range, page range,
//       training:  echo key, help, command-line range, page range)
//
// `size` is the program's integer type (ModelGroupOptions' Size: std::size_t for inference, int
// for training). ModelGroupOptions (the members) and model_records (the records) are both made
// from this list, so adding a line here adds the member, the flag, the page key and the echo to
// every program that takes the model's sizes (apps/README.md shows it). The default is
// xenc-train-order's; the other programs set theirs in their constructors. xenc-word-order's
// --ff 0 means 4 D.
// clang-format off
#define XENC_MODEL_OPTIONS(X)                                                                                                                                                                                                                                 \
  X(size, d_model, 32, "--d-model", "d_model", "d_model", "D, the vector size",                  whole(1, 4096),  whole(1, 256), "d_model",         "D, the vector size",                 whole(2, 512),  whole(2, 128)) \
  X(size, heads,   4,  "--heads",   "heads",   "heads",   "H, attention heads (must divide D)",  whole(1, 256),   whole(1, 16),  "nhead",           "H, attention heads (must divide D)", whole(1, 64),   whole(1, 16))  \
  X(size, layers,  2,  "--layers",  "layers",  "layers",  "N, encoder layers",                   whole(1, 48),    whole(1, 8),   "num_layers",      "N, encoder layers",                  whole(1, 12),   whole(1, 6))   \
  X(size, ff,      64, "--ff",      "ff",      nullptr,   "F, feed-forward width (0 = 4 D)",     whole(0, 65536), absent(),      "dim_feedforward", "F, feed-forward width",              whole(1, 4096), whole(1, 512))
// clang-format on

/// The members of the model group (XENC_MODEL_OPTIONS), with `Size` the type of the sizes: the
/// Options of every program that takes the model's sizes derive from it, and each program's
/// constructor sets its own defaults.
template <class Size>
struct ModelGroupOptions {
  using size = Size;
#define XENC_MODEL_MEMBER(type, member, init, ...) type member = init;
  XENC_MODEL_OPTIONS(XENC_MODEL_MEMBER)
#undef XENC_MODEL_MEMBER
};

/// The training programs' model group (model_records(Use::training)).
using TrainedModelOptions = ModelGroupOptions<int>;
/// The fit group's members (fit_records): the training programs' Options derive from these.
struct FitGroupOptions {
#define XENC_FIT_MEMBER(type, member, init, ...) type member = init;
  XENC_FIT_OPTIONS(XENC_FIT_MEMBER)
#undef XENC_FIT_MEMBER
};

/// Who builds the model: a program that runs it once (inference: xenc-word-order) or one that
/// trains it once per scheme (training: xenc-train-order, xenc-extrapolate).
enum class Use { inference, training };

/// The model group's records (XENC_MODEL_OPTIONS) for `use`; a training record says why its
/// ranges are smaller (kTrainingLimit).
template <class O>
std::vector<OptionRecord<O>> model_records(Use use) {
  const bool train = use == Use::training;
  const char* why = train ? kTrainingLimit : "";
#define XENC_MODEL_RECORD(type, member, init, flag, key, echo, help, cli, page, t_echo, t_help, \
                          t_cli, t_page)                                                        \
  {flag,                                                                                        \
   key,                                                                                         \
   train ? t_echo : echo,                                                                       \
   train ? t_help : help,                                                                       \
   train ? t_cli : cli,                                                                         \
   train ? t_page : page,                                                                       \
   XENC_FIELD(O, member),                                                                       \
   why},
  return {XENC_MODEL_OPTIONS(XENC_MODEL_RECORD)};
#undef XENC_MODEL_RECORD
}

/// The fit group's records (XENC_FIT_OPTIONS). `batch_help` names what a batch holds
/// ("sentences per step", "sequences per step").
template <class O>
std::vector<OptionRecord<O>> fit_records(const char* batch_help) {
#define XENC_FIT_RECORD(type, member, init, flag, key, echo, help, cli, page) \
  {flag, key, echo, help, cli, page, XENC_FIELD(O, member)},
  return {XENC_FIT_OPTIONS(XENC_FIT_RECORD)};
#undef XENC_FIT_RECORD
}

/// --max-memory-mb: member max_memory_mb, as cli.hpp's Guard names it (the page has its own
/// fixed limits).
template <class O>
std::vector<OptionRecord<O>> memory_records() {
  return {
      {"--max-memory-mb", "max_memory_mb", nullptr,
       "refuse work whose estimated memory exceeds this (MiB)", whole(16, 1 << 24), absent(),
       XENC_FIELD(O, max_memory_mb)},
  };
}

/// --max-output-mb: member max_output_mb (Guard's), the largest file or standard output.
template <class O>
std::vector<OptionRecord<O>> output_limit_records() {
  return {
      {"--max-output-mb", "max_output_mb", nullptr,
       "refuse to write a file (or print output) larger than this (estimated, MiB)",
       whole(1, 100000), absent(), XENC_FIELD(O, max_output_mb)},
  };
}

/// --max-minutes: member max_minutes (Guard's), the time limit of a program that trains.
template <class O>
std::vector<OptionRecord<O>> time_limit_records() {
  return {
      {"--max-minutes", "max_minutes", nullptr,
       "refuse work whose estimated run time exceeds this (minutes)", real(0, 0, true), absent(),
       XENC_FIELD(O, max_minutes)},
  };
}

/// --max-memory-mb and --max-minutes (a program that trains): members max_memory_mb and
/// max_minutes.
template <class O>
std::vector<OptionRecord<O>> guard_records() {
  std::vector<OptionRecord<O>> r = memory_records<O>();
  for (auto& t : time_limit_records<O>()) r.push_back(t);
  return r;
}

/// --quiet and --json (the page shows its own progress and reads JSON always).
template <class O>
std::vector<OptionRecord<O>> output_records(const char* json_help) {
  return {
      {"--quiet", "quiet", nullptr, "no progress display", flag(), absent(), XENC_FIELD(O, quiet)},
      {"--json", "json", nullptr, json_help, flag(), absent(), XENC_FIELD(O, json)},
  };
}

/// The records of several groups, in order.
template <class O>
std::vector<OptionRecord<O>> records_of(
    std::initializer_list<std::vector<OptionRecord<O>>> groups) {
  std::vector<OptionRecord<O>> all;
  for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
  return all;
}

/// A program that takes some records of a group (xenc-attention-map's --d-model, --heads and
/// --layers of model_records): `flag`, with the program's own `help` where it says more, and
/// required on the command line where `needed`.
struct Pick {
  const char* flag;
  const char* help = nullptr;
  bool needed = false;
};
template <class O>
std::vector<OptionRecord<O>> pick(const std::vector<OptionRecord<O>>& group,
                                  std::initializer_list<Pick> picks) {
  std::vector<OptionRecord<O>> chosen;
  for (const Pick& p : picks) {
    auto it = std::find_if(group.begin(), group.end(),
                           [&](const OptionRecord<O>& r) { return std::string(r.flag) == p.flag; });
    if (it == group.end()) throw std::logic_error(std::string("pick: no record ") + p.flag);
    chosen.push_back(*it);
    if (p.help) chosen.back().help = p.help;
    if (p.needed) chosen.back().cli = required(chosen.back().cli);
  }
  return chosen;
}

/// "20", "0.1", "4294967295": a range's bound as the messages print it.
inline std::string detail_number(double v) {
  std::ostringstream out;
  out << std::setprecision(12) << v;
  return out.str();
}

/// "a, b, c": the choices of a text option, for a message.
inline std::string choice_list(const std::vector<std::string>& choices) {
  std::string s;
  for (const auto& c : choices) s += (s.empty() ? "" : ", ") + c;
  return s;
}

// ---- the four loops ----------------------------------------------------------------------------

/// Loop 1: declares every record offered on the command line (`cli.on`) with CLI11, reading into
/// `o`; returns the CLI11 options by flag, for the program's count() checks.
template <class O>
std::vector<CLI::Option*> add_options(CLI::App& app, O& o,
                                      const std::vector<OptionRecord<O>>& records) {
  std::vector<CLI::Option*> added;
  for (const auto& r : records) {
    if (!r.cli.on) continue;
    std::visit(
        [&](auto get) {
          auto& value = get(o);
          using T = std::decay_t<decltype(value)>;
          CLI::Option* opt = nullptr;
          if constexpr (std::is_same_v<T, bool>) {
            opt = app.add_flag(r.flag, value, r.help);
          } else {
            opt = app.add_option(r.flag, value, r.help);
            if constexpr (std::is_same_v<T, std::vector<int>> ||
                          std::is_same_v<T, std::vector<std::size_t>> ||
                          std::is_same_v<T, std::vector<std::string>>)
              opt->delimiter(',');
            if (r.cli.needed) opt->required();
            if (r.cli.kind == Range::real && r.cli.positive) opt->check(positive_float());
            if (r.cli.kind == Range::whole || (r.cli.kind == Range::list && r.cli.hi > 0))
              opt->check(whole_range(std::int64_t(r.cli.lo), std::int64_t(r.cli.hi)));
            if (r.cli.kind == Range::real && r.cli.hi > 0)
              opt->check(CLI::Range(r.cli.lo, r.cli.hi));
            if (!r.cli.choices.empty()) opt->check(CLI::IsMember(r.cli.choices));
            if constexpr (!std::is_same_v<T, std::vector<std::string>> &&
                          !std::is_same_v<T, std::vector<std::size_t>>)
              if (!r.cli.needed) opt->capture_default_str();
          }
          added.push_back(opt);
        },
        r.field);
  }
  return added;
}

/// Loop 2: the web page's options: every record offered on the page (`page.on`) whose key `in`
/// holds is read into `o`, checked against the page's range. Throws std::invalid_argument naming
/// the option as the command line does: "--d-model: 300 is out of range, expected 2 .. 128".
template <class O>
void read_page_options(const nlohmann::json& in, O& o,
                       const std::vector<OptionRecord<O>>& records) {
  for (const auto& r : records) {
    if (!r.page.on || !in.contains(r.key)) continue;
    const nlohmann::json& v = in[r.key];
    std::visit(
        [&](auto get) {
          auto& value = get(o);
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            if (!v.is_number_integer())
              throw std::invalid_argument(std::string(r.flag) + ": expected a whole number, got " +
                                          v.dump());
            const long long x = v.get<long long>();
            if (x < r.page.lo || x > r.page.hi)
              throw std::invalid_argument(std::string(r.flag) + ": " + std::to_string(x) +
                                          " is out of range, expected " +
                                          std::to_string((long long)r.page.lo) + " .. " +
                                          std::to_string((long long)r.page.hi));
            value = T(x);
          } else if constexpr (std::is_same_v<T, std::string>) {
            if (!v.is_string())
              throw std::invalid_argument(std::string(r.flag) + ": expected text, got " + v.dump());
            value = v.get<std::string>();
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            value = v.get<std::vector<std::string>>();
          } else {
            throw std::logic_error(std::string("read_page_options: ") + r.flag +
                                   ": the page reads whole numbers, text and lists of text only");
          }
        },
        r.field);
  }
}

/// Loop 3: the options as a report echoes them: {echo key: value} for every record with an echo
/// key.
template <class O>
nlohmann::json echo_options(O o, const std::vector<OptionRecord<O>>& records) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& r : records)
    if (r.echo) std::visit([&](auto get) { j[r.echo] = get(o); }, r.field);
  return j;
}

/// Loop 4, the inverse of loop 3: reads back the options a report echoed (`echo`, the object
/// echo_options wrote) into `o`, for a program that re-reads its own JSON (xenc-extrapolate
/// --study-from). Every record with an echo key must be there, with the member's type, and a
/// number within the command line's range. Throws std::invalid_argument naming `where` (the
/// option and the file), the key and what was found: "--study-from run.json: options.seeds:
/// expected a whole number in 1 .. 20, got 0".
template <class O>
void read_echoed_options(const nlohmann::json& echo, O& o,
                         const std::vector<OptionRecord<O>>& records, const std::string& where) {
  if (!echo.is_object())
    throw std::invalid_argument(where + ": options: expected an object, got " +
                                std::string(echo.type_name()));
  for (const auto& r : records) {
    if (!r.echo) continue;
    const std::string key = std::string("options.") + r.echo;
    if (!echo.contains(r.echo))
      throw std::invalid_argument(where + ": " + key + " is missing (the option " + r.flag + ")");
    const nlohmann::json& v = echo[r.echo];
    std::visit(
        [&](auto get) {
          auto& value = get(o);
          using T = std::decay_t<decltype(value)>;
          auto bad = [&](const std::string& expected) {
            return std::invalid_argument(where + ": " + key + ": expected " + expected + ", got " +
                                         v.dump());
          };
          auto in_range = [&](double x) {
            return r.cli.kind != Range::whole && r.cli.kind != Range::real
                       ? true
                       : !(r.cli.hi > r.cli.lo) || (x >= r.cli.lo && x <= r.cli.hi);
          };
          auto range_text = [&] {
            return r.cli.hi > r.cli.lo
                       ? " in " + detail_number(r.cli.lo) + " .. " + detail_number(r.cli.hi)
                       : std::string();
          };
          if constexpr (std::is_same_v<T, bool>) {
            if (!v.is_boolean()) throw bad("true or false");
            value = v.get<bool>();
          } else if constexpr (std::is_integral_v<T>) {
            if (!v.is_number_integer() || !in_range(v.get<double>()) ||
                (std::is_unsigned_v<T> && v.get<double>() < 0))
              throw bad("a whole number" + range_text());
            value = v.get<T>();
          } else if constexpr (std::is_floating_point_v<T>) {
            if (!v.is_number() || !in_range(v.get<double>())) throw bad("a number" + range_text());
            value = v.get<T>();
          } else if constexpr (std::is_same_v<T, std::string>) {
            if (!v.is_string()) throw bad("text");
            const auto& choices = r.cli.choices;
            if (!choices.empty() &&
                std::find(choices.begin(), choices.end(), v.get<std::string>()) == choices.end())
              throw bad("one of " + choice_list(choices));
            value = v.get<std::string>();
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            if (!v.is_array()) throw bad("a list of text");
            for (const auto& e : v)
              if (!e.is_string()) throw bad("a list of text");
            value = v.get<T>();
          } else {  // lists of whole numbers
            if (!v.is_array()) throw bad("a list of whole numbers");
            const bool ranged = r.cli.hi > r.cli.lo;
            for (const auto& e : v)
              if (!e.is_number_integer() || e.get<double>() < 0 ||
                  (ranged && (e.get<double>() < r.cli.lo || e.get<double>() > r.cli.hi)))
                throw bad("a list of whole numbers" + range_text());
            value = v.get<T>();
          }
        },
        r.field);
  }
}

/// The flags of the records offered on the command line (for the test that compares them with
/// each program's --help).
template <class O>
std::vector<std::string> cli_flags(const std::vector<OptionRecord<O>>& records) {
  std::vector<std::string> flags;
  for (const auto& r : records)
    if (r.cli.on) flags.push_back(r.flag);
  return flags;
}

}  // namespace xenc_app
