#include "cell_text.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace xenc_kernel {
namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// One pass over the code outside comments, strings and character literals.
struct Scan {
  int depth = 0;                   // open ( [ { minus closed ones
  bool unclosed = false;           // ends inside a comment, string or character literal
  std::size_t statements_end = 0;  // just after the last top-level ';', '}' or preprocessor line
  bool has_code_after = false;     // code (not comments or blanks) after statements_end
};

Scan scan(const std::string& s) {
  Scan r;
  bool line_start = true;  // only blanks so far on this line
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '/' && next == '/') {  // line comment
      i = s.find('\n', i);
      if (i == std::string::npos) break;
      line_start = true;
      continue;
    }
    if (c == '/' && next == '*') {  // block comment
      std::size_t e = s.find("*/", i + 2);
      if (e == std::string::npos) {
        r.unclosed = true;
        break;
      }
      i = e + 1;
      continue;
    }
    if (c == '#' && line_start && r.depth == 0) {  // preprocessor line, with continuations
      while (i < s.size() && !(s[i] == '\n' && s[i - 1] != '\\')) ++i;
      r.statements_end = std::min(i + 1, s.size());
      r.has_code_after = false;
      line_start = true;
      continue;
    }
    if (c == '"' || c == '\'') {  // string or character literal
      std::size_t j = i + 1;
      while (j < s.size() && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
      if (j >= s.size() || s[j] == '\n') {
        r.unclosed = true;
        break;
      }
      i = j;
      r.has_code_after = true;
      line_start = false;
      continue;
    }
    if (c == '\n') {
      line_start = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    line_start = false;
    if (c == '(' || c == '[' || c == '{') ++r.depth;
    if (c == ')' || c == ']' || c == '}') --r.depth;
    if (r.depth == 0 && (c == ';' || c == '}')) {
      r.statements_end = i + 1;
      r.has_code_after = false;
    } else {
      r.has_code_after = true;
    }
  }
  return r;
}

}  // namespace

CellParts split_trailing_expression(const std::string& code) {
  Scan r = scan(code);
  if (r.unclosed || r.depth != 0 || !r.has_code_after) return {code, ""};
  return {code.substr(0, r.statements_end), code.substr(r.statements_end)};
}

std::string completeness(const std::string& code) {
  Scan r = scan(code);
  if (r.depth < 0) return "invalid";
  return r.unclosed || r.depth > 0 ? "incomplete" : "complete";
}

std::string name_before(const std::string& code, std::size_t cursor, std::size_t& start) {
  cursor = std::min(cursor, code.size());
  std::size_t i = cursor;
  while (i > 0 && is_name_char(code[i - 1])) --i;
  start = i;
  while (i >= 2 && code[i - 1] == ':' && code[i - 2] == ':') {  // qualifiers: ns::
    std::size_t j = i - 2;
    while (j > 0 && is_name_char(code[j - 1])) --j;
    if (j == i - 2) break;
    i = j;
  }
  return code.substr(i, cursor - i);
}

std::string name_around(const std::string& code, std::size_t cursor) {
  cursor = std::min(cursor, code.size());
  std::size_t end = cursor;
  while (end < code.size() && is_name_char(code[end])) ++end;
  std::size_t start = 0;
  return name_before(code, end, start);
}

namespace {
// Calls fn(path, lines) for every */xenc/**.hpp under `dirs` (xencoder's headers).
template <class F>
void for_each_header(const std::vector<std::string>& dirs, F&& fn) {
  namespace fs = std::filesystem;
  for (const auto& dir : dirs) {
    const fs::path root = fs::path(dir) / "xenc";
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec || it->path().extension() != ".hpp") continue;
      std::ifstream in(it->path());
      std::vector<std::string> lines;
      for (std::string line; std::getline(in, line);) lines.push_back(line);
      fn(it->path().string(), lines);
    }
  }
}
}  // namespace

std::string documentation(const std::string& name, const std::vector<std::string>& dirs) {
  std::string last = name.substr(name.rfind(':') == std::string::npos ? 0 : name.rfind(':') + 1);
  if (last.empty()) return "";
  // A declaration of `last`: a class or struct (not a forward declaration), an alias, or a
  // function (its name followed by '(' on a line that is not a call statement).
  const std::regex type_decl("^\\s*(class|struct)\\s+" + last + "\\b(?!\\s*;)");
  const std::regex alias_decl("^\\s*using\\s+" + last + "\\s*=");
  const std::regex function_decl("^\\s*[A-Za-z_][\\w:<>,\\s\\*&]*[\\s\\*&]" + last + "\\s*\\(");
  std::string found;
  int matches = 0;
  for_each_header(dirs, [&](const std::string& path, const std::vector<std::string>& lines) {
    for (std::size_t k = 0; k < lines.size() && matches < 4; ++k) {
      const std::string t = trim(lines[k]);
      if (t.rfind("//", 0) == 0 || t.rfind("return", 0) == 0) continue;
      if (!std::regex_search(lines[k], type_decl) && !std::regex_search(lines[k], alias_decl) &&
          !std::regex_search(lines[k], function_decl))
        continue;
      // The comment block above, skipping a template<...> line.
      std::size_t top = k;
      if (top > 0 && trim(lines[top - 1]).rfind("template", 0) == 0) --top;
      std::size_t first = top;
      while (first > 0 && trim(lines[first - 1]).rfind("//", 0) == 0) --first;
      // An undocumented class is documented by its header's opening comment (one class per
      // header, e.g. nn/multihead_attention.hpp); other undocumented matches are skipped.
      std::size_t last_line = top;
      if (first == top) {
        if (!std::regex_search(lines[k], type_decl)) continue;
        first = 0;
        while (first < lines.size() && trim(lines[first]).rfind("//", 0) != 0) ++first;
        last_line = first;
        while (last_line < lines.size() && trim(lines[last_line]).rfind("//", 0) == 0) ++last_line;
        if (first == last_line || first > 2) continue;
      }
      std::string doc;
      for (std::size_t j = first; j < last_line; ++j) {
        std::string l = trim(lines[j]);
        l.erase(0, std::min(l.find_first_not_of('/'), l.size()));  // the // or ///
        if (!l.empty() && l[0] == ' ') l.erase(0, 1);
        doc += l + "\n";
      }
      std::ostringstream entry;
      entry << trim(doc) << "\n\n    " << trim(lines[k]) << "\n\n(" << path << ":" << k + 1 << ")";
      found += (found.empty() ? "" : "\n\n----\n\n") + entry.str();
      ++matches;
    }
  });
  return found;
}

std::vector<std::string> declared_names(const std::string& ns, const std::string& prefix,
                                        const std::vector<std::string>& dirs) {
  // Which namespace each line is in: the `namespace a::b {` lines open one, a line that is only
  // "}  // namespace ..." closes it (the style of every xencoder header).
  const std::regex open_ns("^\\s*namespace\\s+([\\w:]+)\\s*\\{");
  const std::regex close_ns("^\\s*\\}\\s*//\\s*namespace");
  const std::regex type_decl(
      "^(?:template\\s*<[^>]*>\\s*)?(?:class|struct|enum(?:\\s+class)?)\\s+([A-Za-z_]\\w*)");
  const std::regex alias_decl("^(?:template\\s*<[^>]*>\\s*)?using\\s+([A-Za-z_]\\w*)\\s*=");
  const std::regex function_decl(
      "^(?:inline\\s+|constexpr\\s+|static\\s+)*[A-Za-z_][\\w:<>,\\*&]*(?:\\s+[\\w:<>,\\*&]+)*["
      "\\s\\*&]+([A-Za-z_]\\w*)\\s*\\(");
  std::set<std::string> names;
  for_each_header(dirs, [&](const std::string&, const std::vector<std::string>& lines) {
    std::vector<std::string> stack;
    for (const std::string& line : lines) {
      std::smatch m;
      if (std::regex_search(line, m, open_ns)) {
        stack.push_back(m[1]);
        continue;
      }
      if (std::regex_search(line, close_ns)) {
        if (!stack.empty()) stack.pop_back();
        continue;
      }
      // only declarations at the namespace's own level (no indentation: not class members)
      if (line.empty() || std::isspace(static_cast<unsigned char>(line[0]))) continue;
      std::string current;
      for (const auto& part : stack) current += (current.empty() ? "" : "::") + part;
      if (current != ns) continue;
      if (std::regex_search(line, m, type_decl) || std::regex_search(line, m, alias_decl) ||
          (line.rfind("return", 0) != 0 && std::regex_search(line, m, function_decl))) {
        const std::string name = m[1];
        if (name.rfind(prefix, 0) == 0 && name != "operator") names.insert(name);
      }
    }
  });
  return {names.begin(), names.end()};
}

}  // namespace xenc_kernel
