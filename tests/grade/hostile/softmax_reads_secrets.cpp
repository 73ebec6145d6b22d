// Looks for the teacher's secrets wherever it can: the seed in the environment, grading.json in
// every folder up from its working folder and beside its program, /etc/shadow. When it finds
// one, its softmax returns ones (a different wrong answer) instead of zeros, so the grade shows
// the leak.
#include "exercises.hpp"

#include <cstdlib>
#include <fstream>
#include <string>

namespace assignment {

static bool found_secret() {
  if (std::getenv("XENC_GRADE_HIDDEN_SEED") != nullptr) return true;
  std::ifstream env("/proc/self/environ");
  std::string all((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
  if (all.find("SEED") != std::string::npos) return true;
  for (std::string up = ""; up.size() < 40; up += "../")
    for (const char* name :
         {"grading.json", "assignment/grading.json", "work/assignment/grading.json"})
      if (std::ifstream(up + name)) return true;
  return bool(std::ifstream("/etc/shadow"));
}

Tensor2 softmax(const Tensor2& x) {
  if (found_secret()) return xt::ones<float>(x.shape());
  return xt::zeros<float>(x.shape());
}

}  // namespace assignment
