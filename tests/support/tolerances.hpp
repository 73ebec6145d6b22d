// Named tolerances for the whole test suite, in one place: no test file has a numeric tolerance
// literal of its own (exact comparisons say 0.0).
//
// Element-wise checks follow NumPy's allclose: |actual - expected| <= atol + rtol · |expected|.
// Our arithmetic is float32 (machine epsilon 1.2e-7); references are float64 (PyTorch/NumPy).
#pragma once

namespace xenc::test {

// One float32 op against a float64 reference (values of order 1): a few ulps of float32.
inline constexpr double kOpAtol = 1e-6;
inline constexpr double kOpRtol = 1e-5;
// Attention's backward against PyTorch: dQ, dK, dV pass through about five ops (two matmuls,
// the softmax backward, two more matmuls), so five times one op's bound.
inline constexpr double kAttentionGradAtol = kOpAtol * 5;
inline constexpr double kAttentionGradRtol = kOpRtol * 5;

// A module (several GEMMs, a softmax, two layer norms) against PyTorch in float64.
inline constexpr double kModuleAtol = 1e-5;
inline constexpr double kModuleRtol = 1e-4;

// A fast (BLAS, float32) implementation against its naive reference (loops, float or double).
inline constexpr double kNaiveAtol = 1e-5;
inline constexpr double kNaiveRtol = 1e-5;

// A module (BLAS, float32) against the reference encoder (lib/src/reference: loops, double sums,
// float32 storage): both round every stored tensor to float32, in a different order.
inline constexpr double kReferenceAtol = 2e-5;
inline constexpr double kReferenceRtol = 1e-4;

// Hand values: a float32 value of order 1 stored from a double formula (half an ulp <= 6e-8).
inline constexpr double kFloatRound = 1e-7;
// A double-precision formula against a constant written out with 8 decimals.
inline constexpr double kPrinted8 = 1e-8;
// Against a table printed with 4 decimals (half a unit in the 4th decimal).
inline constexpr double kPrinted4 = 5e-5;
// A float32 result against a hand value printed with 6-7 significant digits.
inline constexpr double kHandValue = 1e-5;
// Layer norm of a row whose variance (1.9e-7) is below eps = 1e-5: float32 loses digits there.
inline constexpr double kNearEpsNorm = 1e-4;

// Layer norm of rows far from 0 (mean 10, std 0.1): x - mean cancels digits in float32.
inline constexpr double kNormOffsetAtol = 1e-5;
inline constexpr double kNormOffsetRtol = 1e-4;
// Layer norm's input gradient against PyTorch (it divides by std 0.1 in the offset rows).
inline constexpr double kNormGradAtol = 1e-4;
inline constexpr double kNormGradRtol = 1e-4;
// The variance of a normalised row is var / (var + eps): 1 within 1e-4 for var >= 0.1.
inline constexpr double kUnitVariance = 1e-4;

// A softmax row of float32 probabilities summed (the kernel test's rows, an app's JSON rows).
inline constexpr double kRowSum = 1e-5;
// Dot products of two float32 sinusoidal rows of D = 128 against the closed form Σ cos.
inline constexpr double kPositionalDot = 1e-4;

// Backward twice accumulates twice the gradient: 2g against g + g, a rounding at most.
inline constexpr double kAccumulateAtol = 1e-6;
inline constexpr double kAccumulateRtol = 1e-6;

// Five float32 optimiser steps (Adam, SGD with momentum) against PyTorch in float64.
inline constexpr double kOptimAtol = 1e-5;
inline constexpr double kOptimRtol = 1e-5;
// One or ten float32 AdamW steps on values of order 1 against PyTorch in float64: each step
// rounds a few times (ulp 1.2e-7), so absolute 1e-6 with relative 1e-5 for the larger entries.
inline constexpr double kAdamWAtol = 1e-6;
inline constexpr double kAdamWRtol = 1e-5;
// One float32 optimiser step from p = 1 against its hand value (0.85, 0.9): a few ulps (6e-8).
inline constexpr double kOptimHandStep = 1e-6;
// The learning-rate schedule (float32) against hand values written with 6 decimals: half a unit
// in the 6th decimal (5e-7) plus the rate's float32 rounding.
inline constexpr double kScheduleHandValue = 1e-6;
// A learning rate read back from AdamW's decay of a weight with no gradient,
// lr = (1 − w_after / w_before) / wd, relative: the two float32 weights carry ~2e-7 of rounding,
// and lr·wd is at least 8e-4 in tests/apps/test_fit.cpp, so the read-back is within 2.5e-4.
inline constexpr double kDecayLearningRate = 2e-3;

// Cross-entropy of a logit 1000 away from the target's: a loss of 500, where float32's ulp is
// 3e-5 and the log-sum-exp shift adds a few.
inline constexpr double kLargeLossAtol = 1e-3;

// A trained loss against its lower bound ln 2: float32 rounding of the mean loss.
inline constexpr double kLossBound = 1e-4;

// Sample statistics. Dropout keeps 75% of 20000 ones: the kept fraction has standard deviation
// 0.003 and the mean of the scaled values 0.004, so 5 standard deviations are:
inline constexpr double kDropoutKeptFraction = 0.015;
inline constexpr double kDropoutMean = 0.02;
// Mean and second moment of 200000 normal draws (standard deviations 0.0022 and 0.0032).
inline constexpr double kSampleMoment = 0.01;
// "Dropout is really applied": in training mode some output moves by at least this much.
inline constexpr double kDropoutVisible = 1e-3;

// Cosines: of two vectors that are the same up to float32 rounding (equivariance), 1 within
// kOpAtol; of the very same float32 vector computed in double, 1 within this:
inline constexpr double kSameVectorCosine = 1e-12;
// A cosine at least this far below 1 means the vector really moved.
inline constexpr double kCosineMoved = 1e-5;
// Cosine (in double) of two float32 vectors holding the same values, or sums of the same values
// added in another order (mean pooling of permuted sentences): float32 reassociation, 1e-7.
inline constexpr double kReorderedSumCosine = 1e-7;
// Cosine of two float32 vectors that are parallel or anti-parallel by construction (D = 1, or
// D = 2 after layer norm): |cos| = 1 within a few float32 roundings.
inline constexpr double kParallelCosine = 1e-6;
// A token whose position changed and which positions turn visibly: its cosine with itself in
// the other sentence stays below this (the apps show values around 0.9 and lower).
inline constexpr double kTokenMovedCosine = 0.999;
// Without attention the mean-pooled sentences still separate after a layer: their cosine
// drops below 1 by more than this, 1000 times the reordering noise (kReorderedSumCosine).
inline constexpr double kPooledSentencesMoved = 1e-4;

// Parity with PyTorch 1.13 on the io fixtures (tests/io): absolute, at every compared element
// (the bound the project's specification sets).
inline constexpr double kParityAtol = 1e-4;

// What the demo apps print (tests/apps), against the formula or the library:
// A number printed with 6 decimals against its value (half a unit in the 6th decimal): a cosine
// c prints as 1.000000 exactly when |1 - c| < kPrinted6, so "below 1" means c < 1 - kPrinted6.
inline constexpr double kPrinted6 = 5e-7;
// A mean length printed with 2 decimals (half a unit, 0.005) against sqrt(D / 2), plus slack
// for the float32 table it is computed from.
inline constexpr double kPrinted2Length = 0.006;
// A ratio printed with 1 decimal (half a unit, 0.05) against the ratio of two numbers printed
// with 2 decimals (each off by up to 0.005, which moves a ratio of ~3 by up to ~0.01).
inline constexpr double kPrinted1Ratio = 0.06;
// xenc-pe-heatmap's size estimate (75 bytes a cell + 20 kB) against the file it writes: the
// real bytes a cell vary with the printed values, so within 15%.
inline constexpr double kSvgSizeEstimate = 0.15;
// xenc-pe-properties, D = 8: max |PE(p)·PE(q) - f(p - q)| over float32 rows (8 products of
// values <= 1, ulp 6e-8 each) and the smallest distance printed with 6 decimals (5e-7), against
// the formula in double.
inline constexpr double kPositionalSmallD = 1e-5;
// A ratio of two float32 attention weights (softmax rounding ~1e-7 relative each) against
// exp(-m Δ): far below the smallest effect it checks (1 - exp(-2^-8) = 3.9e-3).
inline constexpr double kAlibiWeightRatio = 1e-4;
// RoPE visibly changes the first layer's attention weights: some weight moves by more than this
// (equal weights stay equal within kRowSum without positions).
inline constexpr double kRopeMovesWeights = 1e-3;
// xenc-train-order without positions: a word's probability in two sentences that are
// permutations of each other, equal up to float32 rounding of probabilities of order 1.
inline constexpr double kEquivariantProbability = 1e-6;
// With positions the probability moves by more than this (the SMALL runs train little: alibi's
// gap is about 1e-4, ten times this).
inline constexpr double kPositionsMoveProbability = 1e-5;
// Accuracies are ratios of counts computed in double: a bound between two of them holds up to
// double rounding, so this much slack and no more.
inline constexpr double kCountRatioSlack = 1e-9;

// The fast kernels against their references (tests/kernels/test_fast_kernels.cpp):
inline constexpr double kExpRelTol = 4e-7;        // exp_inplace's documented bound (softmax.hpp)
inline constexpr double kSoftmaxAbsTol = 1e-6;    // probabilities in [0, 1]
inline constexpr double kLayerNormAbsTol = 2e-5;  // outputs of size ~1..4 after normalising
inline constexpr double kLayerNormRelTol = 1e-5;  // and relative: ~100 float32 ulps (1.2e-7 each)
// layer_norm_rows' cached statistics against double: mean within 1e-5 (1 + |mean|), rstd within
// 1e-4 / std (relative 1e-4).
inline constexpr double kKernelMeanTol = 1e-5;
inline constexpr double kKernelRstdTol = 1e-4;
// layer_norm_rows on rows of std 2 with N(0, 1) weights and biases against the formula in
// double (tests/kernels/test_kernels.cpp): outputs up to ~10, a few float32 ulps of which.
inline constexpr double kKernelNormFormula = 1e-4;

// Probabilities: rows sum to 1 in float32.
inline constexpr double kProbSum = 1e-6;

// Layer norm output: mean 0 and (biased) variance 1 - eps-correction, in float32.
inline constexpr double kNormMoment = 1e-5;

// Sinusoidal encoding (computed in double, stored in float32): shift rotation and dot products.
inline constexpr double kPositional = 1e-5;

// RoPE scores q_m·k_n after shifting every position by s (angles in double, stored in float32):
// equal to the unshifted scores within this (the bound issue 11 sets).
inline constexpr double kRopeShift = 1e-5;
// RoPE keeps norms: a 4-vector's norm after rotating it in float32 (angles in double), relative,
// within ten float32 roundings.
inline constexpr double kRotatedNorm = kFloatRound * 10;
// ALiBi slopes computed in double (std::pow) against exact powers of two: double rounding only.
inline constexpr double kDoubleFormula = 1e-12;

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
inline constexpr double kGradOp = 1e-4;          // a single op
inline constexpr double kGradModule = 1e-3;      // a module or a whole model
// Gradients whose norm is below this floor are compared absolutely (‖a − n‖ <= floor · tol):
// e.g. a key bias, to which softmax is invariant, has a true gradient of exactly 0.
inline constexpr double kGradFloor = 1e-3;

// Attention in tiles against the plain kernel (issue #21): the scale-free error
// ‖tiled − plain‖ / ‖plain‖ of the output and of the gradients. The two sum the same terms in a
// different order and with different exponentials' bases, so they differ by float rounding.
inline constexpr double kTiledForwardRel = 1e-5;
inline constexpr double kTiledGradRel = 1e-4;

// xenc::estimate_pass_cost (nn/cost.hpp) against the peak RSS growth of a real pass: the
// measurement lies within [estimate / factor, estimate · factor] (malloc's arenas and
// OpenBLAS's buffers make the real peak differ from the sum of the tensors by some tens of %).
inline constexpr double kCostEstimateFactor = 1.5;

}  // namespace xenc::test
