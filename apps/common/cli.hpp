// Shared by the demo apps (included as "../common/cli.hpp"; not an app: no CMakeLists.txt here):
// --version, the option checks CLI11 does not make on its own, the memory estimate that guards
// the model-building apps, and a checked standard output.
//
// Why the checks: CLI11 2.1 reads "-1" into an unsigned option by wrapping it around to 2^64 - 1,
// and a float option takes "1e99" as inf. Every numeric option of every app therefore goes
// through whole_range (parsed as a signed 64-bit number, so "-1" is a negative number that is out
// of range) or positive_float (finite, > 0 and representable as a float).
#pragma once

#include <CLI/CLI.hpp>
#include <xenc/config.hpp>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

namespace xenc_app {

/// --version prints "<program> <XENC_VERSION>" and exits with status 0.
inline void add_version(CLI::App& app, const std::string& program) {
  app.set_version_flag("--version", program + " " + XENC_VERSION, "print the version and exit");
}

/// A whole number in [lo, hi] (both inclusive). "-1", "2.5" and "1e3" are refused with
/// "Value ... not in range lo to hi".
inline CLI::Validator whole_range(std::int64_t lo, std::int64_t hi) { return CLI::Range(lo, hi); }

/// A finite number > 0 that stays finite and non-zero as a float (at most FLT_MAX, at least the
/// smallest float): refuses 0, negatives, "inf", "nan" and 1e99 (which a float option reads as inf).
inline CLI::Validator positive_float() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double v = 0;
        const bool parsed = CLI::detail::lexical_cast(input, v);
        if (!parsed || !std::isfinite(v) || !(v > 0) || v > double(FLT_MAX) || static_cast<float>(v) == 0.0f)
          return "Value " + input + " is not a finite positive float (expected 0 < value <= " +
                 std::to_string(FLT_MAX) + ")";
        return {};
      },
      "FLOAT > 0");
}

/// Bytes that an EncoderModel forward pass with a ModelTrace needs in float32, for inference:
/// the parameters (embedding [V, D], a learned position table [max_len, D], per layer
/// in_proj 3D² + out_proj D² + linear1/linear2 2DF + biases and norms) and the activations
/// (per layer the traced output [B, T, D] and attention weights [B, H, T, T], plus the working
/// tensors of one layer: Q, K, V, context, feed-forward hidden [B, T, F] and two [B, H, T, T]).
/// Gradient buffers are not counted: inference does not need them.
inline double encoder_inference_bytes(std::size_t V, std::size_t max_len, std::size_t D, std::size_t H,
                                      std::size_t F, std::size_t L, std::size_t B, std::size_t T) {
  const double d = double(D), f = double(F), bt = double(B) * double(T), att = double(B) * double(H) * double(T) * double(T);
  const double per_layer = 4 * d * d + 4 * d + 2 * d * f + f + d + 4 * d;
  const double params = double(V) * d + double(max_len) * d + double(L) * per_layer + 2 * d;
  const double activations = double(L) * (bt * d + att) + bt * (8 * d + f) + 2 * att;
  return 4.0 * (params + activations);
}

/// The memory limit of the model-building apps (word_order, attention_map, init_encoder): 2 GiB.
constexpr double kMemoryLimitBytes = 2.0 * 1024 * 1024 * 1024;

/// "1.5 GiB", "300.0 MiB".
inline std::string human_bytes(double bytes) {
  char buf[64];
  if (bytes >= 1024.0 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  else std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024));
  return buf;
}

/// Flushes stdout (both std::cout and C stdio). Returns 0, or 1 with "<program>: error: ..." on
/// stderr when a write failed (a full disk: `> /dev/full`), so a lost output is never exit 0.
inline int finish_stdout(const std::string& program) {
  std::cout.flush();
  const bool cout_ok = static_cast<bool>(std::cout);
  const bool stdio_ok = std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (cout_ok && stdio_ok) return 0;
  std::cerr << program << ": error: writing to standard output failed (disk full or output closed?)\n";
  return 1;
}

}  // namespace xenc_app
