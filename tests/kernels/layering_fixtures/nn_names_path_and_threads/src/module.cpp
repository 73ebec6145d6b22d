// A module that chooses the attention path itself (what issue #28 moved into ops/): the nn
// layering rules must reject this file (tests/kernels/CMakeLists.txt).
Tensor3 Module::forward(const Tensor3& x) {
  const bool tiles = attention_uses_tiles(path_, T, T, false);
  return tiles ? run(x) : run_plain(x);
}
// ... and that reads the plan's decisions to act on them
std::size_t Module::items(const AttentionPlan& plan) const { return plan.threads * 4; }
