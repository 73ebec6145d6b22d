// Running xenc-extrapolate from the tests (path from CMake: XENC_APP_EXTRAPOLATE; through
// tests/support/run_program.hpp), and a check
// that its conclusions agree with its numbers, re-deriving each from the JSON.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../support/run_program.hpp"

namespace extrapolate_test {

using json = nlohmann::json;
using Result = xenc::test::RunResult;
using xenc::test::out_dir;
using xenc::test::read_file;

inline Result run(const std::string& args, const std::string& cwd) {
  return xenc::test::run_program(XENC_APP_EXTRAPOLATE, args, cwd);
}

inline std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * v);
  return buf;
}

inline bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// The app's JSON "test" entry of `scheme` at `length`.
inline const json& at(const json& scheme, std::size_t length) {
  for (const auto& l : scheme["test"])
    if (l["length"].get<std::size_t>() == length) return l;
  throw std::runtime_error("no test length " + std::to_string(length));
}

// Each scheme's sentence (the one that starts with its name) says what the numbers say:
//   a length it cannot read            -> "no embedding beyond its table (max_len = M)"
//   every length within tol of chance  -> "is at chance at every length", with min and max
//   at L_train within tol of chance    -> "did not learn the task"
//   drop to the longest length <= tol  -> "keeps its accuracy", both numbers
//   otherwise                          -> "degrades", both numbers and the first length that is
//                                         more than tol below
// and the summary lists exactly the schemes that keep their accuracy, and the best one.
inline void expect_conclusions_agree(const json& j) {
  const double tol = j["options"]["tolerance_points"].get<double>() / 100.0;
  const double chance = j["task"]["chance"];
  const std::size_t L = j["options"]["train_length"];
  const std::size_t longest = j["test_lengths"].back();
  const std::vector<std::string> claims = j["conclusions"];
  auto sentence_of = [&](const std::string& name) -> std::string {
    for (const auto& c : claims)
      if (c.rfind(name + " ", 0) == 0 || c.rfind(name + ":", 0) == 0) return c;
    return "";
  };
  std::vector<std::string> kept;
  std::string best;
  double best_acc = -1;
  std::size_t learned_task = 0;
  for (const auto& s : j["schemes"]) {
    const std::string name = s["name"];
    SCOPED_TRACE(name);
    const std::string c = sentence_of(name);
    ASSERT_FALSE(c.empty()) << "no conclusion about " << name;
    const double a0 = at(s, L)["accuracy"];
    learned_task += a0 > chance + tol;
    bool missing = false;
    double lo = 1, hi = 0;
    for (const auto& l : s["test"]) {
      if (!l["available"]) {
        missing = true;
        continue;
      }
      lo = std::min(lo, l["accuracy"].get<double>());
      hi = std::max(hi, l["accuracy"].get<double>());
    }
    if (missing) {
      EXPECT_TRUE(contains(c, "no embedding beyond its table (max_len = " + std::to_string(s["max_len"].get<std::size_t>()) + ")")) << c;
      EXPECT_TRUE(contains(c, pct(a0) + " at length " + std::to_string(L))) << c;
      continue;
    }
    const double last = at(s, longest)["accuracy"];
    if (last > best_acc) {
      best_acc = last;
      best = name;
    }
    if (lo >= chance - tol && hi <= chance + tol) {
      EXPECT_TRUE(contains(c, "is at chance at every length: from " + pct(lo) + " to " + pct(hi))) << c;
    } else if (a0 <= chance + tol) {
      EXPECT_TRUE(contains(c, "did not learn the task: " + pct(a0))) << c;
    } else if (a0 - last <= tol) {
      kept.push_back(name);
      EXPECT_TRUE(contains(c, "keeps its accuracy: " + pct(a0) + " at length " + std::to_string(L) + ", " +
                                  pct(last) + " at length " + std::to_string(longest)))
          << c;
    } else {
      std::size_t first = 0;
      for (const auto& l : s["test"])
        if (l["length"].get<std::size_t>() > L && a0 - l["accuracy"].get<double>() > tol) {
          first = l["length"];
          break;
        }
      EXPECT_TRUE(contains(c, "degrades: " + pct(a0) + " at length " + std::to_string(L) + ", " + pct(last) +
                                  " at length " + std::to_string(longest)))
          << c;
      EXPECT_TRUE(contains(c, "first more than")) << c;
      EXPECT_TRUE(contains(c, "below at length " + std::to_string(first) + ".")) << c;
    }
  }
  const std::string& summary = claims.size() >= 2 ? claims[claims.size() - (learned_task ? 2 : 1)] : "";
  if (learned_task == 0) {
    EXPECT_TRUE(contains(claims.back(), "No scheme learned the task well enough to compare")) << claims.back();
    return;
  }
  if (kept.empty()) {
    EXPECT_TRUE(contains(summary, "No scheme that learned the task stays within")) << summary;
  } else {
    std::string names;
    for (std::size_t i = 0; i < kept.size(); ++i)
      names += (i == 0 ? "" : i + 1 == kept.size() ? " and " : ", ") + kept[i];
    EXPECT_TRUE(contains(summary, ": " + names + ".")) << summary;
  }
  EXPECT_EQ(claims.back(), "Best at length " + std::to_string(longest) + ": " + best + " (" + pct(best_acc) + ").");
}

}  // namespace extrapolate_test
