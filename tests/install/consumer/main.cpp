// Uses the installed math library: the sinusoidal encoding at position 1, dimension 0 is sin(1).
#include <cmath>
#include <cstdio>

#include <xenc/xenc.hpp>

int main() {
  const xenc::Tensor2 pe = xenc::sinusoidal_encoding(2, 8);
  const double err = std::fabs(pe(1, 0) - std::sin(1.0));
  std::printf("PE(1, 0) = %.7f, sin(1) = %.7f\n", pe(1, 0), std::sin(1.0));
  return err < 1e-6 ? 0 : 1;
}
