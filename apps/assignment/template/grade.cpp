// grade: runs the xencoder grader on your exercises and prints what passed, what failed and why.
//
//     ./grade                      every exercise
//     ./grade softmax attention    only these
//     ./grade --list               the exercise names
// Exit code: 0 when every check of the chosen exercises passes, 1 when one fails, 2 for an
// unknown exercise name.
#include "exercises.hpp"

#include <xenc/grade/exercises.hpp>
#include <xenc/grade/result.hpp>

#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace {

using xenc::grade::ExerciseResult;

// Each exercise: its name and the grader check run on your function.
const std::vector<std::pair<std::string, std::function<ExerciseResult()>>>& all_exercises() {
  static const std::vector<std::pair<std::string, std::function<ExerciseResult()>>> all = {
      {"sinusoidal_table", [] { return xenc::grade::check_sinusoidal_table(assignment::sinusoidal_table); }},
      {"softmax", [] { return xenc::grade::check_softmax(assignment::softmax_rows); }},
      {"layer_norm_forward", [] { return xenc::grade::check_layer_norm_forward(assignment::layer_norm_forward); }},
      {"layer_norm_backward", [] { return xenc::grade::check_layer_norm_backward(assignment::layer_norm_backward); }},
      {"attention", [] { return xenc::grade::check_attention(assignment::attention); }},
      {"split_heads", [] { return xenc::grade::check_split_heads(assignment::split_heads); }},
      {"merge_heads", [] { return xenc::grade::check_merge_heads(assignment::merge_heads); }},
      {"linear_backward", [] { return xenc::grade::check_linear_backward(assignment::linear_backward); }},
      {"cross_entropy", [] { return xenc::grade::check_cross_entropy(assignment::cross_entropy); }},
      {"rope", [] { return xenc::grade::check_rope(assignment::rope_rotate); }},
      {"alibi_slopes", [] { return xenc::grade::check_alibi_slopes(assignment::alibi_slopes); }},
  };
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> chosen(argv + 1, argv + argc);
  if (chosen.size() == 1 && (chosen[0] == "--list" || chosen[0] == "--help")) {
    if (chosen[0] == "--help") std::cout << "usage: grade [--list] [exercise ...]\nexercises:\n";
    for (const auto& e : all_exercises()) std::cout << e.first << "\n";
    return 0;
  }
  for (const std::string& name : chosen) {
    bool known = false;
    for (const auto& e : all_exercises()) known = known || e.first == name;
    if (!known) {
      std::cerr << "grade: unknown exercise '" << name << "' (grade --list shows the names)\n";
      return 2;
    }
  }
  std::vector<ExerciseResult> results;
  for (const auto& e : all_exercises()) {
    bool wanted = chosen.empty();
    for (const std::string& name : chosen) wanted = wanted || e.first == name;
    if (!wanted) continue;
    results.push_back(e.second());
    xenc::grade::print_report(std::cout, results.back());
    std::cout << "\n";
  }
  xenc::grade::print_summary(std::cout, results);
  for (const ExerciseResult& r : results)
    if (!r.passed()) return 1;
  return 0;
}
