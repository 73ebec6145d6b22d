// The registry of exercises: each lib/src/grade/exercises/<name>.cpp registers itself at load
// time; the list is kept in teaching order. Also the teacher's hidden-check seed.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "xenc/core/error.hpp"
#include "xenc/grade/exercises.hpp"

namespace xenc::grade {

namespace {
// A function-local static: registrations run during static initialisation, in any file order.
std::vector<ExerciseInfo>& registry() {
  static std::vector<ExerciseInfo> all;
  return all;
}
std::optional<std::uint64_t>& seed() {
  static std::optional<std::uint64_t> s;
  return s;
}
}  // namespace

RegisterExercise::RegisterExercise(ExerciseInfo info) {
  std::vector<ExerciseInfo>& all = registry();
  for (const ExerciseInfo& e : all)
    if (e.name == info.name)
      throw config_error("RegisterExercise: the exercise '" + info.name + "' is registered twice");
  // kept in `order`, equal orders in registration order: insert after the last one not later.
  // (Not push_back + std::stable_sort: in a static initializer, libstdc++ 12's temporary buffer
  // trips ASan's alloc-dealloc-mismatch check.)
  const auto at =
      std::upper_bound(all.begin(), all.end(), info.order,
                       [](auto order, const ExerciseInfo& e) { return order < e.order; });
  all.insert(at, std::move(info));
}

const std::vector<ExerciseInfo>& exercises() { return registry(); }

const ExerciseInfo* find_exercise(const std::string& name) {
  for (const ExerciseInfo& e : registry())
    if (e.name == name) return &e;
  return nullptr;
}

void set_hidden_seed(std::optional<std::uint64_t> s) { seed() = s; }
std::optional<std::uint64_t> hidden_seed() { return seed(); }

namespace {
CheckIsolation& isolation() {
  static CheckIsolation i;
  return i;
}
}  // namespace
void set_check_isolation(const CheckIsolation& i) {
  if (!(i.time_seconds > 0 && i.time_seconds <= 3600))
    throw std::invalid_argument("set_check_isolation: time_seconds is " +
                                std::to_string(i.time_seconds) + ", expected (0, 3600]");
  if (i.memory_mib < 16 || i.memory_mib > (std::size_t(1) << 24))
    throw std::invalid_argument("set_check_isolation: memory_mib is " +
                                std::to_string(i.memory_mib) + ", expected 16 .. 16777216");
  isolation() = i;
}
const CheckIsolation& check_isolation() { return isolation(); }

}  // namespace xenc::grade
