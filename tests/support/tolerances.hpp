// Named tolerances for the whole test suite, in one place.
//
// Element-wise checks follow NumPy's allclose: |actual - expected| <= atol + rtol · |expected|.
// Our arithmetic is float32 (machine epsilon 1.2e-7); references are float64 (PyTorch/NumPy).
#pragma once

namespace xenc::test {

// One float32 op against a float64 reference (values of order 1): a few ulps of float32.
inline constexpr double kOpAtol = 1e-6;
inline constexpr double kOpRtol = 1e-5;

// A module (several GEMMs, a softmax, two layer norms) against PyTorch in float64.
inline constexpr double kModuleAtol = 1e-5;
inline constexpr double kModuleRtol = 1e-4;

// A fast (BLAS, float32) implementation against its naive reference (loops, float or double).
inline constexpr double kNaiveAtol = 1e-5;
inline constexpr double kNaiveRtol = 1e-5;

// Probabilities: rows sum to 1 in float32.
inline constexpr double kProbSum = 1e-6;

// Layer norm output: mean 0 and (biased) variance 1 - eps-correction, in float32.
inline constexpr double kNormMoment = 1e-5;

// Sinusoidal encoding (computed in double, stored in float32): shift rotation and dot products.
inline constexpr double kPositional = 1e-5;

// Permutation equivariance of the encoder without position information: permuting the input
// permutes the output to within this (the bound the project's specification sets).
inline constexpr double kEquivariance = 1e-5;

// "Clearly not equivariant": with positions, some output moves by at least this much.
inline constexpr double kNotEquivariant = 1e-2;

// Finite differences: step h of the central 4-point stencil, and the bound on the scale-free
// error ‖a − n‖ / (‖a‖ + ‖n‖) between analytic and numeric gradients. The forward runs in
// float32, so the numeric gradient carries ~1e-7 · |L| / h of rounding noise.
inline constexpr double kGradStep = 1.0 / 128;  // a power of two: x ± h is exact for |x| < 2
// ReLU is not differentiable at 0: a step that moves a pre-activation across 0 gives a wrong
// numeric derivative. Networks with ReLU use a smaller step (rounding noise grows as 1/h).
inline constexpr double kGradStepRelu = 1.0 / 1024;
inline constexpr double kGradModuleRelu = 2e-3;  // the smaller step leaves more rounding noise
inline constexpr double kGradOp = 1e-4;      // a single op
inline constexpr double kGradModule = 1e-3;  // a module or a whole model
// Gradients whose norm is below this floor are compared absolutely (‖a − n‖ <= floor · tol):
// e.g. a key bias, to which softmax is invariant, has a true gradient of exactly 0.
inline constexpr double kGradFloor = 1e-3;

}  // namespace xenc::test
