// nbtool: checks, runs and updates the xeus-cling notebooks without Jupyter or Python.
//
//   nbtool validate NB.ipynb...           nbformat 4, kernel xenc-cpp17, and the cling cell rules
//   nbtool run NB.ipynb OUT.json -- CMD...
//       feeds every code cell, in order, to the interpreter command CMD (clang-repl-19 ...),
//       one cell per input, and fails on any error in any cell. OUT.json gets each code cell's
//       outputs in nbformat form (stdout text, and display_data bundles printed by
//       xenc::viz::show under XENC_MIME_CAPTURE=1).
//   nbtool run NB.ipynb OUT.json --solutions DIR -- CMD...
//       the same, with the source of every exercise cell (cell metadata
//       "xenc": {"exercise": "<id>"}) replaced by the file DIR/<id>.cpp, without its
//       `#include "exercises.hpp"` line (the compiled assignment's header; the notebook declares
//       the same names in namespace assignment): the run with the reference solutions.
//   nbtool check NB.ipynb OUT.json        fails unless the committed outputs equal OUT.json
//       (decimals up to one unit in their last digit; a cell whose metadata declares
//       "xenc": {"tolerance": {...}} is compared within that tolerance, see Tolerance below)
//   nbtool update NB.ipynb OUT.json       writes OUT.json's outputs into the notebook
//   nbtool same-text EXPECTED.txt ACTUAL.txt [--noise N] [--abs A]
//       the comparison of `check` on two text files (a README's copy of a program's output and
//       the output now), with the tolerance fields noise and abs of a cell (see Tolerance)
//   nbtool grades NB.ipynb OUT.json pass|fail
//       reads the grader's reports (xenc::grade::print_report headings "✔ softmax: 6 of 6 checks
//       passed") in OUT.json. pass: every exercise cell of NB has a report, every report passed
//       and no line shows ✘. fail: every exercise cell's report shows failed checks (the stubs).
//   nbtool with-solutions NB.ipynb DIR OUT.ipynb
//       writes NB with the exercise cells' sources replaced as `run --solutions DIR` does (for
//       the Jupyter run of notebooks/kernel/tests/run_notebook.py).
//
// clang-repl reads each command-line argument as one input and keeps going after an error (it
// exits 1 at the end), so after every cell the runner adds an input that prints a marker line
// to stdout and stderr; the text between two markers belongs to one cell.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

extern char** environ;

namespace {

using nlohmann::json;

const std::string kCellEnd = "@@xenc-cell-end@@";
const std::string kMimePrefix = "@@xenc-mime-bundle@@ ";  // xenc::viz::kMimeCapturePrefix

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << text;
}

json load_json(const std::string& path) {
  try {
    return json::parse(read_file(path));
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path + ": invalid JSON: " + e.what());
  }
}

// nbformat stores multi-line strings either as one string or as a list of lines.
std::string joined(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string s;
  for (const auto& line : v) s += line.get<std::string>();
  return s;
}

// "a\nb\n" -> ["a\n", "b\n"] (Jupyter's on-disk form).
json split_lines(const std::string& s) {
  json lines = json::array();
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t end = s.find('\n', start);
    end = end == std::string::npos ? s.size() : end + 1;
    lines.push_back(s.substr(start, end - start));
    start = end;
  }
  return lines;
}

// Cell source with comments blanked and string/char literal contents blanked (quotes kept),
// so the rule checks below see only code tokens.
std::string strip_comments_and_strings(const std::string& src) {
  std::string out = src;
  std::size_t i = 0, n = src.size();
  while (i < n) {
    if (src.compare(i, 2, "//") == 0) {
      while (i < n && src[i] != '\n') out[i++] = ' ';
    } else if (src.compare(i, 2, "/*") == 0) {
      std::size_t end = src.find("*/", i + 2);
      end = end == std::string::npos ? n : end + 2;
      for (; i < end; ++i)
        if (out[i] != '\n') out[i] = ' ';
    } else if (src[i] == '"' || src[i] == '\'') {
      char q = src[i++];
      while (i < n && src[i] != q) {
        if (src[i] == '\\' && i + 1 < n) out[i++] = ' ';
        if (src[i] != '\n') out[i] = ' ';
        ++i;
      }
      ++i;
    } else {
      ++i;
    }
  }
  return out;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// Code without preprocessor lines (a cell may start with #include lines).
std::string without_preprocessor(const std::string& code) {
  std::istringstream in(code);
  std::string line, out;
  while (std::getline(in, line)) {
    if (trim(line).rfind("#", 0) == 0) line.assign(line.size(), ' ');
    out += line + "\n";
  }
  return out;
}

// Does the (stripped) cell start with a definition: a function, class, struct, enum, union,
// namespace or template?
bool starts_with_definition(const std::string& code) {
  static const std::regex keyword(R"(^\s*(struct|class|namespace|template|enum|union)\b)");
  static const std::regex function_head(
      R"(^\s*(?:(?:inline|static|constexpr)\s+)*[A-Za-z_][\w:<>,\s\*&]*?[\s\*&>]([A-Za-z_]\w*)\s*\()");
  static const std::set<std::string> control = {"if", "for", "while", "switch", "return", "do"};
  if (std::regex_search(code, keyword)) return true;
  std::smatch m;
  if (!std::regex_search(code, m, function_head)) return false;
  std::string first = trim(code).substr(0, trim(code).find_first_of(" \t\n("));
  if (control.count(first)) return false;
  // Balanced parameter list, then optional qualifiers, then the body.
  std::size_t i = static_cast<std::size_t>(m.position(0) + m.length(0)), depth = 1;
  while (i < code.size() && depth > 0) {
    if (code[i] == '(') ++depth;
    if (code[i] == ')') --depth;
    ++i;
  }
  static const std::regex tail(R"(^\s*(const\s*)?(noexcept\s*)?(->[^{;]*)?\{)");
  return std::regex_search(code.substr(i), tail);
}

// After the first top-level { ... } (and an optional ';'), is anything left?
std::string after_first_definition(const std::string& code) {
  std::size_t open = code.find('{');
  if (open == std::string::npos) return "";
  int depth = 0;
  for (std::size_t i = open; i < code.size(); ++i) {
    if (code[i] == '{') ++depth;
    if (code[i] == '}' && --depth == 0) {
      std::string rest = trim(code.substr(i + 1));
      if (!rest.empty() && rest[0] == ';') rest = trim(rest.substr(1));
      return rest;
    }
  }
  return "";
}

// Names declared by top-level statements of a non-definition cell ("Tensor2 pe = ...;").
std::set<std::string> declared_variables(const std::string& code) {
  std::set<std::string> names;
  static const std::regex decl(
      R"(^\s*(?:(?:const|static)\s+)*(?:[A-Za-z_][\w:]*(?:<[^;={}]*>)?[\s\*&]+)+([A-Za-z_]\w*)\s*(?:=|\{|\(|\[|$))");
  std::string stmt;
  int depth = 0;
  for (char c : code) {
    if (c == '{' || c == '(') ++depth;
    if (c == '}' || c == ')') --depth;
    if (c == ';' && depth == 0) {
      std::smatch m;
      std::string s = trim(stmt);
      if (std::regex_search(s, m, decl)) names.insert(m[1]);
      stmt.clear();
    } else {
      stmt += c;
    }
  }
  return names;
}

// Identifiers a definition declares itself (parameters, locals): "<type> name" followed by one
// of , ) = ; { [ ( :
std::set<std::string> locally_declared(const std::string& code) {
  std::set<std::string> names;
  static const std::regex local(
      R"(([A-Za-z_]\w*|[>&\*])\s*[&\*]?\s+([A-Za-z_]\w*)\s*[,\)=;\{\[\(:])");
  static const std::set<std::string> not_types = {"return", "else",   "case",      "throw", "new",
                                                  "delete", "sizeof", "co_return", "goto"};
  for (auto it = std::sregex_iterator(code.begin(), code.end(), local);
       it != std::sregex_iterator(); ++it)
    if (!not_types.count((*it)[1])) names.insert((*it)[2]);
  return names;
}

struct Problems {
  std::vector<std::string> list;
  void add(const std::string& s) { list.push_back(s); }
};

// A cell's declared comparison tolerance (see the comparison rules below).
struct Tolerance {
  double abs = 0.0;
  double svg = 0.0;
  double noise = 0.0;
  double colour = 0.0;
};

// The tolerance a cell declares (all zero when it declares none). Throws on an unknown key, a
// non-positive value or a missing reason, so a typo cannot switch the comparison off.
Tolerance cell_tolerance(const json& cell, const std::string& where) {
  Tolerance t;
  if (!cell.contains("metadata") || !cell["metadata"].contains("xenc")) return t;
  const json& x = cell["metadata"]["xenc"];
  if (!x.is_object() || !x.contains("tolerance")) return t;
  const json& tol = x["tolerance"];
  if (!tol.is_object())
    throw std::runtime_error(where + ": metadata xenc.tolerance must be an object");
  if (!tol.contains("why") || !tol["why"].is_string() || tol["why"].get<std::string>().size() < 10)
    throw std::runtime_error(where +
                             ": metadata xenc.tolerance needs \"why\": the reason, in words");
  for (auto it = tol.begin(); it != tol.end(); ++it) {
    if (it.key() == "why") continue;
    double* field = it.key() == "abs"      ? &t.abs
                    : it.key() == "svg"    ? &t.svg
                    : it.key() == "noise"  ? &t.noise
                    : it.key() == "colour" ? &t.colour
                                           : nullptr;
    if (field == nullptr)
      throw std::runtime_error(where + ": metadata xenc.tolerance has unknown key \"" + it.key() +
                               "\" (expected why, abs, svg, noise, colour)");
    if (!it.value().is_number() || !(it.value().get<double>() > 0.0))
      throw std::runtime_error(where + ": metadata xenc.tolerance." + it.key() +
                               " must be a positive number, got " + it.value().dump());
    *field = it.value().get<double>();
  }
  return t;
}

bool number_start(const std::string& s, std::size_t i) {
  auto digit = [&](std::size_t k) {
    return k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]));
  };
  if (digit(i))
    return i == 0 || !(std::isalpha(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_');
  return (s[i] == '-' || s[i] == '.') &&
         (digit(i + 1) || (s[i] == '-' && i + 2 < s.size() && s[i + 1] == '.' && digit(i + 2)));
}

// One unit in the last printed place of the number s[begin, end): 0.25 -> 0.01, 12 -> 1.
double last_digit_unit(const std::string& s, std::size_t begin, std::size_t end) {
  const std::size_t dot = s.find('.', begin);
  std::size_t e = s.find_first_of("eE", begin);
  if (e >= end) e = end;
  const int decimals = dot < e ? static_cast<int>(e - dot - 1) : 0;
  const int exponent = e < end ? std::atoi(s.c_str() + e + 1) : 0;
  return std::pow(10.0, exponent - decimals);
}

// A colour #rrggbb at s[i]: its three channels (0..255) in rgb. A colour is compared as a colour,
// channel by channel, never as a number ("#3e3577" would read as 3e3577, an infinite float).
bool colour_at(const std::string& s, std::size_t i, int rgb[3]) {
  if (s[i] != '#' || i + 7 > s.size()) return false;
  for (std::size_t k = i + 1; k < i + 7; ++k)
    if (!std::isxdigit(static_cast<unsigned char>(s[k]))) return false;
  if (i + 7 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 7]))) return false;
  for (int c = 0; c < 3; ++c) rgb[c] = std::stoi(s.substr(i + 1 + 2 * c, 2), nullptr, 16);
  return true;
}

// An integer: the number s[begin, end) has neither a decimal point nor an exponent.
bool is_integer(const std::string& s, std::size_t begin, std::size_t end) {
  return s.substr(begin, end - begin).find_first_of(".eE") == std::string::npos;
}

void validate(const std::string& path, Problems& p) {
  json nb = load_json(path);
  auto where = [&](const std::string& s) { p.add(path + ": " + s); };
  if (nb.value("nbformat", 0) != 4) where("nbformat must be 4");
  if (!nb.contains("nbformat_minor") || !nb["nbformat_minor"].is_number_integer())
    where("nbformat_minor must be an integer");
  const json meta = nb.value("metadata", json::object());
  // xenc-kernel's kernelspec name: Jupyter opens the notebook on it without asking
  if (!meta.contains("kernelspec") || meta["kernelspec"].value("name", "") != "xenc-cpp17")
    where("metadata.kernelspec.name must be \"xenc-cpp17\" (xenc-kernel, notebooks/kernel)");
  if (!meta.contains("language_info") || meta["language_info"].value("name", "") != "c++")
    where("metadata.language_info.name must be \"c++\"");
  if (!nb.contains("cells") || !nb["cells"].is_array() || nb["cells"].empty()) {
    where("no cells");
    return;
  }

  // Pass 1: structure of each cell, and the notebook's variables.
  std::set<std::string> variables;
  std::vector<std::string> codes;  // stripped code of each code cell ("" for others)
  std::vector<bool> is_definition;
  bool first_code = true, mentions_setup = false;
  std::string last_code;
  for (std::size_t i = 0; i < nb["cells"].size(); ++i) {
    const json& cell = nb["cells"][i];
    std::string tag = "cell " + std::to_string(i) + ": ";
    std::string type = cell.value("cell_type", "");
    if (!cell.contains("source") || !(cell["source"].is_string() || cell["source"].is_array()))
      where(tag + "source must be a string or a list of strings");
    if (!cell.contains("metadata") || !cell["metadata"].is_object())
      where(tag + "metadata must be an object");
    std::string src = cell.contains("source") ? joined(cell["source"]) : "";
    codes.push_back("");
    is_definition.push_back(false);
    if (type == "markdown" || type == "raw") {
      if (cell.contains("outputs")) where(tag + "a " + type + " cell has no outputs");
      if (src.find("xenc/xenc_cling.hpp") != std::string::npos &&
          src.find("(README.md)") != std::string::npos)
        mentions_setup = true;
      continue;
    }
    if (type != "code") {
      where(tag + "unknown cell_type \"" + type + "\"");
      continue;
    }
    if (!cell.contains("outputs") || !cell["outputs"].is_array())
      where(tag + "a code cell needs an outputs list");
    try {
      cell_tolerance(cell, "cell " + std::to_string(i));
    } catch (const std::exception& e) {
      where(e.what());
    }
    if (!cell.contains("execution_count") ||
        !(cell["execution_count"].is_null() || cell["execution_count"].is_number_integer()))
      where(tag + "execution_count must be null or an integer");
    std::string code = strip_comments_and_strings(src);
    if (first_code && src.find("xenc/xenc_cling.hpp") == std::string::npos)
      where(tag + "the first code cell must #include \"xenc/xenc_cling.hpp\" (the setup header)");
    first_code = false;
    static const std::regex main_fn(R"(\bmain\s*\()");
    if (std::regex_search(code, main_fn))
      where(tag + "defines or calls main(): notebooks have no main");
    std::string body = without_preprocessor(code);
    codes.back() = body;
    last_code = src;
    if (starts_with_definition(body)) {
      is_definition.back() = true;
      std::string rest = after_first_definition(body);
      if (!rest.empty())
        where(tag +
              "a definition cell holds one leading definition and nothing after it; found "
              "more code after the definition: \"" +
              rest.substr(0, 60) + "\"");
    } else {
      for (const auto& v : declared_variables(body)) variables.insert(v);
    }
  }
  if (!mentions_setup)
    where(
        "no markdown cell names the setup header (xenc/xenc_cling.hpp) and links the README "
        "((README.md)) for the set-up of other kernels");
  if (last_code.find("expected") == std::string::npos)
    where("the last code cell should check results, printing expected and computed values");

  // Pass 2: definitions must not use notebook variables (cling keeps them in a different
  // scope and xeus-cling may re-run cells in any order).
  static const std::regex identifier(R"([A-Za-z_]\w*)");
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (!is_definition[i]) continue;
    std::set<std::string> own = locally_declared(codes[i]);
    std::set<std::string> reported;
    const std::string& c = codes[i];
    for (auto it = std::sregex_iterator(c.begin(), c.end(), identifier);
         it != std::sregex_iterator(); ++it) {
      std::string name = it->str();
      std::size_t pos = static_cast<std::size_t>(it->position());
      bool member = pos > 0 && (c[pos - 1] == '.' || c[pos - 1] == ':' ||
                                (pos > 1 && c[pos - 1] == '>' && c[pos - 2] == '-'));
      if (variables.count(name) && !own.count(name) && !member && !reported.count(name)) {
        where("cell " + std::to_string(i) + ": the definition uses the notebook variable \"" +
              name + "\"; pass it as an argument instead");
        reported.insert(name);
      }
    }
  }
}

// Runs `cmd inputs...` with XENC_MIME_CAPTURE=1; stdout and stderr go to files.
int spawn(const std::vector<std::string>& argv, const std::string& out_path,
          const std::string& err_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  setenv("XENC_MIME_CAPTURE", "1", 1);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// Splits the interpreter's output at the cell markers; one entry per marker.
std::vector<std::string> split_at_markers(const std::string& text, std::string& tail) {
  std::vector<std::string> parts;
  std::string marker = "\n" + kCellEnd + "\n";
  std::size_t start = 0;
  for (;;) {
    std::size_t pos = text.find(marker, start);
    if (pos == std::string::npos) break;
    parts.push_back(text.substr(start, pos - start));
    start = pos + marker.size();
  }
  tail = text.substr(start);
  return parts;
}

// stdout of one cell -> nbformat outputs: stream text, and a display_data per captured bundle.
json cell_outputs(const std::string& out) {
  json outputs = json::array();
  std::string text;
  auto flush_text = [&] {
    if (text.empty()) return;
    outputs.push_back({{"name", "stdout"}, {"output_type", "stream"}, {"text", split_lines(text)}});
    text.clear();
  };
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(kMimePrefix, 0) == 0) {
      flush_text();
      json bundle = json::parse(line.substr(kMimePrefix.size()));
      json data = json::object();
      for (auto& [mime, value] : bundle.items()) {
        bool textual = mime.rfind("text/", 0) == 0 || mime == "image/svg+xml";
        data[mime] = textual && value.is_string() ? split_lines(value.get<std::string>()) : value;
      }
      outputs.push_back(
          {{"data", data}, {"metadata", json::object()}, {"output_type", "display_data"}});
    } else {
      text += line;
      if (!in.eof()) text += "\n";
    }
  }
  flush_text();
  return outputs;
}

bool has_error(const std::string& err) {
  return err.find("error:") != std::string::npos || err.find("error: ") != std::string::npos ||
         err.find("terminate called") != std::string::npos ||
         err.find("JIT session error") != std::string::npos;
}

std::string clip(const std::string& s, std::size_t n = 3000) {
  return s.size() <= n ? s
                       : s.substr(0, n) + "\n... (" + std::to_string(s.size() - n) + " more bytes)";
}

// The exercise id of a cell (metadata "xenc": {"exercise": "<id>"}), or "".
std::string exercise_id(const json& cell) {
  const json meta = cell.value("metadata", json::object());
  if (!meta.contains("xenc") || !meta["xenc"].is_object()) return "";
  const json& x = meta["xenc"];
  return x.contains("exercise") && x["exercise"].is_string() ? x["exercise"].get<std::string>()
                                                             : "";
}

// A reference solution as the source of an exercise cell: the file without its
// `#include "exercises.hpp"` line.
std::string solution_source(const std::string& dir, const std::string& id) {
  std::istringstream in(read_file(dir + "/" + id + ".cpp"));
  std::string line, out;
  while (std::getline(in, line))
    if (trim(line) != "#include \"exercises.hpp\"") out += line + "\n";
  return out;
}

int run(const std::string& nb_path, const std::string& out_path,
        const std::vector<std::string>& command, const std::string& solutions_dir = "") {
  json nb = load_json(nb_path);
  int substituted = 0;
  // The inputs: a prelude for the markers, then each code cell followed by a marker.
  std::vector<std::string> argv = command;
  argv.push_back("#include <cstdio>");
  const std::string marker_input = "std::fflush(stdout); std::fputs(\"\\n" + kCellEnd +
                                   "\\n\", stdout); std::fflush(stdout); std::fputs(\"\\n" +
                                   kCellEnd + "\\n\", stderr);";
  std::vector<std::string> sources;
  for (const auto& cell : nb["cells"]) {
    if (cell.value("cell_type", "") != "code") continue;
    std::string id = exercise_id(cell);
    if (!solutions_dir.empty() && !id.empty()) {
      sources.push_back(solution_source(solutions_dir, id));
      ++substituted;
    } else {
      sources.push_back(joined(cell["source"]));
    }
    argv.push_back(sources.back());
    argv.push_back(marker_input);
  }
  std::string out_file = out_path + ".stdout", err_file = out_path + ".stderr";
  int rc = spawn(argv, out_file, err_file);
  std::string out_tail, err_tail;
  std::vector<std::string> outs = split_at_markers(read_file(out_file), out_tail);
  std::vector<std::string> errs = split_at_markers(read_file(err_file), err_tail);

  int failures = 0;
  json all = json::array();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    std::string cell_tag =
        nb_path + ": code cell " + std::to_string(i + 1) + " of " + std::to_string(sources.size());
    if (i >= outs.size() || i >= errs.size()) {
      if (failures > 0) return 1;  // already reported; the markers are out of step after errors
      std::cerr << cell_tag << ": the interpreter stopped before this cell finished (exit code "
                << rc << ")\n--- cell ---\n"
                << sources[i] << "\n--- output ---\n"
                << clip(out_tail) << "\n--- errors ---\n"
                << clip(err_tail) << "\n";
      return 1;
    }
    if (has_error(errs[i])) {
      // The first failure in full; later cells often fail only because of it.
      if (failures == 0)
        std::cerr << cell_tag << " failed\n--- cell ---\n"
                  << sources[i] << "\n--- errors ---\n"
                  << clip(errs[i]) << "\n";
      else
        std::cerr << cell_tag << " failed too: "
                  << clip(errs[i].substr(0, errs[i].find('\n', errs[i].find("error"))), 300)
                  << "\n";
      ++failures;
    } else if (!trim(errs[i]).empty()) {
      std::cerr << cell_tag << " wrote to stderr (not an error):\n" << clip(errs[i]) << "\n";
    }
    all.push_back(cell_outputs(outs[i]));
  }
  if (has_error(err_tail)) {
    std::cerr << nb_path << ": errors after the last cell:\n" << clip(err_tail) << "\n";
    ++failures;
  }
  if (failures == 0 && rc != 0) {
    std::cerr << nb_path << ": the interpreter exited with code " << rc << "\n";
    ++failures;
  }
  write_file(out_path, all.dump(1) + "\n");
  std::cout << nb_path << ": " << sources.size() << " code cells, " << failures << " failed";
  if (!solutions_dir.empty())
    std::cout << "; " << substituted << " exercise cells replaced by solutions from "
              << solutions_dir;
  std::cout << "\n";
  return failures == 0 ? 0 : 1;
}

// Two printed texts are the same result when each decimal number differs at most by one unit in
// its last printed digit, every integer is the same, and only the amount of white space may
// differ: a different CPU may pick another OpenBLAS kernel, whose rounding can flip the last
// digit of a decimal (0.940001 vs 0.940002). Integers (counts, shapes, ids: [2, 3, 5]) are not
// rounded, so they must match exactly. Any other change is a real difference.
//
// Some outputs depend on the kernels' rounding by more than a digit: a model trained for a few
// hundred steps ends elsewhere when every GEMM rounds differently (an accuracy of 0.340 under
// OpenBLAS's Haswell kernels is 0.343 under Cooperlake's), and a difference of two equal
// quantities is pure rounding (3.6e-07 here, 1.5e-07 there). Such a cell says so in its metadata,
// with the reason:
//   "xenc": {"tolerance": {"why": "...", "abs": 0.02, "svg": 4, "noise": 1e-5}}
//   abs    numbers in text, HTML and plain outputs may differ by up to abs (integers too)
//   svg    numbers in image/svg+xml outputs (pixel coordinates) may differ by up to svg
//   noise  two numbers that are both below noise in magnitude are the same (rounding noise;
//          the cell prints the bound it claims, e.g. "(< 1e-5: yes)", and that text must match)
//   colour colours #rrggbb (a heatmap's cells) may differ by up to colour in each channel (0..255)
// A colour #rrggbb is always compared as one, channel by channel (exactly without a colour
// tolerance), never as a number.
// Everything else is compared as above, so a deliberately changed number still fails.
// abs: the allowed difference of any two numbers (0: the rules above); noise, colour: see
// Tolerance.
bool same_text_up_to_rounding(const std::string& a, const std::string& b, double abs = 0.0,
                              double noise = 0.0, double colour = 0.0) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool wa = std::isspace(static_cast<unsigned char>(a[i])),
               wb = std::isspace(static_cast<unsigned char>(b[j]));
    if (wa || wb) {  // any run of white space matches any other
      if (!(wa && wb)) return false;
      while (i < a.size() && std::isspace(static_cast<unsigned char>(a[i]))) ++i;
      while (j < b.size() && std::isspace(static_cast<unsigned char>(b[j]))) ++j;
      continue;
    }
    int ca[3], cb[3];
    if (colour_at(a, i, ca) && colour_at(b, j, cb)) {
      for (int c = 0; c < 3; ++c)
        if (std::abs(ca[c] - cb[c]) > colour) return false;
      i += 7;
      j += 7;
      continue;
    }
    if (number_start(a, i) && number_start(b, j)) {
      char* ea = nullptr;
      char* eb = nullptr;
      const double x = std::strtod(a.c_str() + i, &ea), y = std::strtod(b.c_str() + j, &eb);
      const std::size_t ni = static_cast<std::size_t>(ea - a.c_str()),
                        nj = static_cast<std::size_t>(eb - b.c_str());
      if (std::fabs(x) < noise && std::fabs(y) < noise) {
        // both are rounding noise below the bound the cell claims
      } else if (abs > 0.0) {
        const double unit = std::max(last_digit_unit(a, i, ni), last_digit_unit(b, j, nj));
        if (!(std::fabs(x - y) <= std::max(abs, 1.01 * unit))) return false;
      } else if (is_integer(a, i, ni) || is_integer(b, j, nj)) {  // exactly the same characters
        if (a.compare(i, ni - i, b, j, nj - j) != 0) return false;
      } else {
        const double unit = std::max(last_digit_unit(a, i, ni), last_digit_unit(b, j, nj));
        if (std::fabs(x - y) > 1.01 * unit) return false;
      }
      i = ni;
      j = nj;
      continue;
    }
    if (a[i++] != b[j++]) return false;
  }
  while (i < a.size() && std::isspace(static_cast<unsigned char>(a[i]))) ++i;
  while (j < b.size() && std::isspace(static_cast<unsigned char>(b[j]))) ++j;
  return i == a.size() && j == b.size();
}

// key: the JSON key the value sits under ("image/svg+xml" selects the tolerance's svg field).
bool same_up_to_rounding(const json& a, const json& b, const Tolerance& tol = {},
                         const std::string& key = "") {
  if (a.is_string() && b.is_string())
    return same_text_up_to_rounding(a.get<std::string>(), b.get<std::string>(),
                                    key == "image/svg+xml" ? tol.svg : tol.abs, tol.noise,
                                    tol.colour);
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_array()) {
    for (std::size_t k = 0; k < a.size(); ++k)
      if (!same_up_to_rounding(a[k], b[k], tol, key)) return false;
    return true;
  }
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!b.contains(it.key()) || !same_up_to_rounding(it.value(), b[it.key()], tol, it.key()))
        return false;
    return true;
  }
  return a == b;
}

json normalised(const json& outputs) {
  // Compare text as joined strings (a string and a list of lines are the same content).
  json n = json::array();
  for (const auto& o : outputs) {
    json c = o;
    if (c.contains("text")) c["text"] = joined(c["text"]);
    if (c.contains("data"))
      for (auto& [mime, value] : c["data"].items())
        if (value.is_array()) value = joined(value);
    n.push_back(c);
  }
  return n;
}

// The first line that differs beyond the tolerance (abs, noise, colour: as
// same_text_up_to_rounding).
std::string first_difference(const std::string& a, const std::string& b, double abs = 0.0,
                             double noise = 0.0, double colour = 0.0) {
  std::istringstream ia(a), ib(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool ga = static_cast<bool>(std::getline(ia, la)), gb = static_cast<bool>(std::getline(ib, lb));
    if (!ga && !gb) return "(no line differs)";
    if (!ga || !gb || !same_text_up_to_rounding(la, lb, abs, noise, colour))
      return "line " + std::to_string(line) + ":\n  committed: " + (ga ? clip(la, 300) : "<end>") +
             "\n  now:       " + (gb ? clip(lb, 300) : "<end>");
  }
}

// Where two normalised output lists first differ, line by line inside the text that differs.
std::string describe_difference(const json& committed, const json& now, const Tolerance& tol) {
  if (committed.size() != now.size())
    return std::to_string(committed.size()) + " outputs committed, " + std::to_string(now.size()) +
           " produced now; " + first_difference(committed.dump(1), now.dump(1));
  for (std::size_t i = 0; i < committed.size(); ++i) {
    const json& a = committed[i];
    const json& b = now[i];
    if (same_up_to_rounding(a, b, tol)) continue;
    std::string where = "output " + std::to_string(i + 1) + ", ";
    if (a.contains("text") && b.contains("text") &&
        !same_up_to_rounding(a["text"], b["text"], tol, "text"))
      return where + "stdout " +
             first_difference(a["text"].get<std::string>(), b["text"].get<std::string>(), tol.abs,
                              tol.noise, tol.colour);
    if (a.contains("data") && b.contains("data"))
      for (auto& [mime, value] : b["data"].items())
        if (a["data"].contains(mime) && value.is_string() && a["data"][mime].is_string() &&
            !same_up_to_rounding(a["data"][mime], value, tol, mime))
          return where + mime + " " +
                 first_difference(a["data"][mime].get<std::string>(), value.get<std::string>(),
                                  mime == "image/svg+xml" ? tol.svg : tol.abs, tol.noise,
                                  tol.colour);
    return where + first_difference(a.dump(1), b.dump(1));
  }
  return "(no output differs)";
}

int check_or_update(const std::string& nb_path, const std::string& out_path, bool update) {
  json nb = load_json(nb_path);
  json outputs = load_json(out_path);
  std::size_t k = 0;
  int stale = 0;
  for (auto& cell : nb["cells"]) {
    if (cell.value("cell_type", "") != "code") continue;
    if (k >= outputs.size()) throw std::runtime_error(out_path + " has too few cells");
    const json& fresh = outputs[k++];
    json count = static_cast<int>(k);
    if (update) {
      cell["outputs"] = fresh;
      cell["execution_count"] = count;
      continue;
    }
    const Tolerance tol = cell_tolerance(cell, nb_path + ": code cell " + std::to_string(k));
    json a = normalised(cell["outputs"]), b = normalised(fresh);
    if (!same_up_to_rounding(a, b, tol)) {
      ++stale;
      std::cerr << nb_path << ": code cell " << k << " has stale outputs";
      if (tol.abs > 0 || tol.svg > 0 || tol.noise > 0 || tol.colour > 0)
        std::cerr << " (beyond its tolerance: abs " << tol.abs << ", svg " << tol.svg << ", noise "
                  << tol.noise << ", colour " << tol.colour << ")";
      std::cerr << ", " << describe_difference(a, b, tol) << "\n";
    } else if (cell["execution_count"] != count) {
      ++stale;
      std::cerr << nb_path << ": code cell " << k << " has execution_count "
                << cell["execution_count"].dump() << ", expected " << k << "\n";
    }
  }
  if (update) {
    write_file(nb_path, nb.dump(1, ' ', false) + "\n");
    std::cout << "updated " << nb_path << "\n";
    return 0;
  }
  if (stale > 0)
    std::cerr << nb_path << ": " << stale
              << " cells differ from what the code produces now; regenerate with "
                 "`cmake --build build --target notebooks_update` and commit\n";
  else
    std::cout << nb_path << ": committed outputs are current\n";
  return stale == 0 ? 0 : 1;
}

// The grader's report headings in the outputs, and whether any line shows a failed check.
struct Report {
  std::string exercise;
  bool passed = false;
  long num_passed = 0, num_checks = 0;
};

int grades(const std::string& nb_path, const std::string& out_path, const std::string& expect) {
  if (expect != "pass" && expect != "fail")
    throw std::runtime_error("grades: expected pass or fail, got \"" + expect + "\"");
  json nb = load_json(nb_path);
  json outputs = load_json(out_path);
  std::vector<std::string> ids;
  for (const auto& cell : nb["cells"])
    if (cell.value("cell_type", "") == "code" && !exercise_id(cell).empty())
      ids.push_back(exercise_id(cell));
  if (ids.empty())
    throw std::runtime_error(nb_path + " has no exercise cells (metadata xenc.exercise)");

  static const std::regex heading(R"(^(✔|✘) (\S+): (\d+) of (\d+) checks passed$)");
  std::vector<Report> reports;
  std::size_t crosses = 0;
  for (const auto& cell_outputs : outputs)
    for (const auto& o : cell_outputs) {
      if (o.value("output_type", "") != "stream") continue;
      std::istringstream in(joined(o["text"]));
      std::string line;
      while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_match(line, m, heading))
          reports.push_back({m[2], m[1] == "✔", std::stol(m[3]), std::stol(m[4])});
        if (line.find("✘") != std::string::npos) ++crosses;
      }
    }

  int problems = 0;
  auto problem = [&](const std::string& s) {
    std::cerr << nb_path << ": " << s << "\n";
    ++problems;
  };
  for (const auto& id : ids) {
    auto it = std::find_if(reports.begin(), reports.end(),
                           [&](const Report& r) { return r.exercise == id; });
    if (it == reports.end()) {
      problem("exercise \"" + id + "\" printed no grader report");
      continue;
    }
    std::string counts = std::to_string(it->num_passed) + " of " + std::to_string(it->num_checks);
    bool all = it->passed && it->num_checks > 0 && it->num_passed == it->num_checks;
    if (expect == "pass" && !all)
      problem("exercise \"" + id + "\" failed: " + counts + " checks passed");
    if (expect == "fail" && (it->passed || it->num_passed >= it->num_checks))
      problem("exercise \"" + id + "\" passed (" + counts + " checks) but its stub should fail");
  }
  if (expect == "pass" && crosses > 0)
    problem(std::to_string(crosses) + " output lines show a failed check (✘)");
  if (problems == 0)
    std::cout << nb_path << ": " << ids.size() << " exercises, "
              << (expect == "pass" ? "every check passed" : "every stub fails its checks") << "\n";
  return problems == 0 ? 0 : 1;
}

// For running the notebook in Jupyter (notebooks/kernel/tests/run_notebook.py): the notebook
// with every exercise cell's source replaced by its reference solution, as `run --solutions`
// feeds it to clang-repl, written to out_path.
int with_solutions(const std::string& nb_path, const std::string& solutions_dir,
                   const std::string& out_path) {
  json nb = load_json(nb_path);
  int substituted = 0;
  for (auto& cell : nb["cells"]) {
    std::string id = cell.value("cell_type", "") == "code" ? exercise_id(cell) : "";
    if (id.empty()) continue;
    cell["source"] = split_lines(solution_source(solutions_dir, id));
    ++substituted;
  }
  write_file(out_path, nb.dump(1, ' ', false) + "\n");
  std::cout << out_path << ": " << substituted << " exercise cells replaced by solutions from "
            << solutions_dir << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() >= 2 && args[0] == "validate") {
      Problems p;
      for (std::size_t i = 1; i < args.size(); ++i) validate(args[i], p);
      for (const auto& s : p.list) std::cerr << s << "\n";
      if (p.list.empty()) std::cout << "valid: " << args.size() - 1 << " notebook(s)\n";
      return p.list.empty() ? 0 : 1;
    }
    if (args.size() >= 5 && args[0] == "run" && args[3] == "--")
      return run(args[1], args[2], std::vector<std::string>(args.begin() + 4, args.end()));
    if (args.size() >= 7 && args[0] == "run" && args[3] == "--solutions" && args[5] == "--")
      return run(args[1], args[2], std::vector<std::string>(args.begin() + 6, args.end()), args[4]);
    if (args.size() == 4 && args[0] == "grades") return grades(args[1], args[2], args[3]);
    if (args.size() == 4 && args[0] == "with-solutions")
      return with_solutions(args[1], args[2], args[3]);
    if (args.size() >= 3 && args.size() % 2 == 1 && args[0] == "same-text") {
      double noise = 0.0, abs = 0.0;
      for (std::size_t k = 3; k + 1 < args.size(); k += 2) {
        if (args[k] != "--noise" && args[k] != "--abs")
          throw std::runtime_error("same-text: unknown option " + args[k]);
        (args[k] == "--noise" ? noise : abs) = std::stod(args[k + 1]);
      }
      const std::string a = read_file(args[1]), b = read_file(args[2]);
      if (same_text_up_to_rounding(a, b, abs, noise)) {
        std::cout << args[1] << " and " << args[2] << " are the same up to rounding\n";
        return 0;
      }
      std::cerr << args[1] << " and " << args[2] << " differ, "
                << first_difference(a, b, abs, noise) << "\n";
      return 1;
    }
    if (args.size() == 3 && (args[0] == "check" || args[0] == "update"))
      return check_or_update(args[1], args[2], args[0] == "update");
  } catch (const std::exception& e) {
    std::cerr << "nbtool: " << e.what() << "\n";
    return 2;
  }
  std::cerr << "usage: nbtool validate NB...\n"
               "       nbtool run NB OUT.json [--solutions DIR] -- INTERPRETER [ARGS...]\n"
               "       nbtool check|update NB OUT.json\n"
               "       nbtool grades NB OUT.json pass|fail\n"
               "       nbtool with-solutions NB SOLUTIONS_DIR OUT.ipynb\n"
               "       nbtool same-text EXPECTED.txt ACTUAL.txt [--noise N] [--abs A]\n";
  return 2;
}
