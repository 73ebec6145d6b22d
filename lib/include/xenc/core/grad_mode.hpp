// Whether forward passes keep what backward needs (like torch.no_grad()).
//
// With gradients enabled (the default) every module's forward caches its inputs and
// intermediate values so that backward can run. Inside a NoGradGuard scope forward keeps
// nothing: less memory (no [B, H, T, T] attention probabilities are stored) and a little
// faster, but backward then throws. Use it for inference and benchmarks.
//
//     { xenc::NoGradGuard no_grad; auto y = layer.forward(x); }
#pragma once

namespace xenc {

class GradMode {
 public:
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// RAII: disables gradient caching for its lifetime, restores the previous mode after.
class NoGradGuard {
 public:
  NoGradGuard() : previous_(GradMode::is_enabled()) { GradMode::set_enabled(false); }
  ~NoGradGuard() { GradMode::set_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace xenc
