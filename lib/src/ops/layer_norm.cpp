// Layer normalisation over the last axis, forward and backward (see layer_norm.hpp).
#include "xenc/ops/layer_norm.hpp"

#include <cmath>
#include <string>

#include "vector_kernel.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

namespace {
template <std::size_t R>
void check_ln_args(const char* where, const xt::xtensor<float, R>& x, const Tensor1& w,
                   const Tensor1& b) {
  const long D = static_cast<long>(x.shape(R - 1));
  const std::string expect = "[D] with D = " + std::to_string(D) + " (x has shape " +
                             shape_str(x.shape()) + ")";
  check_shape(where, "weight", w, {D}, expect);
  check_shape(where, "bias", b, {D}, expect);
}
}  // namespace

XENC_VECTOR_KERNEL
void layer_norm_rows(const float* x, float* y, std::size_t rows, std::size_t D,
                     const float* weight, const float* bias, float eps, float* mean_out,
                     float* rstd_out) {
  // Each row is three passes over D floats. The sums are reductions: the pragma lets the
  // compiler keep several partial sums in one SIMD register (it changes the order of the
  // additions, which is why a compiler may not do it on its own).
  for (std::size_t n = 0; n < rows; ++n) {
    const float* xr = x + n * D;
    float* yr = y + n * D;
    // mean, then the biased variance around it (two passes: no cancellation)
    float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
    for (std::size_t d = 0; d < D; ++d) sum += xr[d];
    const float mean = sum / static_cast<float>(D);
    float sq = 0.0f;
#pragma omp simd reduction(+ : sq)
    for (std::size_t d = 0; d < D; ++d) sq += (xr[d] - mean) * (xr[d] - mean);
    const float var = sq / static_cast<float>(D);
    const float rstd = 1.0f / std::sqrt(var + eps);  // eps inside the root, as PyTorch
    // normalise, then scale and shift (safe in place: yr[d] depends on xr[d] only)
#pragma omp simd
    for (std::size_t d = 0; d < D; ++d) yr[d] = (xr[d] - mean) * rstd * weight[d] + bias[d];
    if (mean_out) mean_out[n] = mean;
    if (rstd_out) rstd_out[n] = rstd;
  }
}

template <std::size_t R>
xt::xtensor<float, R> layer_norm_forward(const xt::xtensor<float, R>& x, const Tensor1& weight,
                                         const Tensor1& bias, float eps, LayerNormCache* cache) {
  check_ln_args("layer_norm_forward", x, weight, bias);
  const std::size_t D = x.shape(R - 1);
  const std::size_t N = D == 0 ? 0 : x.size() / D;
  auto y = xt::xtensor<float, R>::from_shape(x.shape());
  if (cache) {
    cache->mean = Tensor1::from_shape({N});
    cache->rstd = Tensor1::from_shape({N});
  }
  layer_norm_rows(x.data(), y.data(), N, D, weight.data(), bias.data(), eps,
                  cache ? cache->mean.data() : nullptr, cache ? cache->rstd.data() : nullptr);
  return y;
}

template <std::size_t R>
LayerNormGrads<R> layer_norm_backward(const xt::xtensor<float, R>& grad_y,
                                      const xt::xtensor<float, R>& x, const Tensor1& weight,
                                      const LayerNormCache& cache) {
  check_ln_args("layer_norm_backward", x, weight, weight);
  if (grad_y.shape() != x.shape()) {
    throw shape_error("layer_norm_backward: grad_y has shape " + shape_str(grad_y.shape()) +
                      ", expected x's shape " + shape_str(x.shape()));
  }
  const std::size_t D = x.shape(R - 1);
  const std::size_t N = D == 0 ? 0 : x.size() / D;
  if (cache.mean.size() != N || cache.rstd.size() != N) {
    throw shape_error("layer_norm_backward: cache.mean has shape " + shape_str(cache.mean.shape()) +
                      ", expected [N] with N = " + std::to_string(N));
  }
  LayerNormGrads<R> g;
  g.input = xt::xtensor<float, R>::from_shape(x.shape());
  g.weight = xt::zeros<float>({D});
  g.bias = xt::zeros<float>({D});
  const float* w = weight.data();
  for (std::size_t n = 0; n < N; ++n) {
    const float* xr = x.data() + n * D;
    const float* dyr = grad_y.data() + n * D;
    float* dxr = g.input.data() + n * D;
    const float mean = cache.mean(n), rstd = cache.rstd(n);
    // mean(g) and mean(g · x̂), with g = dy · weight
    float mean_g = 0.0f, mean_gx = 0.0f;
    for (std::size_t d = 0; d < D; ++d) {
      const float xhat = (xr[d] - mean) * rstd;
      const float gd = dyr[d] * w[d];
      mean_g += gd;
      mean_gx += gd * xhat;
      g.weight(d) += dyr[d] * xhat;
      g.bias(d) += dyr[d];
    }
    mean_g /= static_cast<float>(D);
    mean_gx /= static_cast<float>(D);
    // dx = rstd · (g - mean(g) - x̂ · mean(g · x̂))
    for (std::size_t d = 0; d < D; ++d) {
      const float xhat = (xr[d] - mean) * rstd;
      dxr[d] = rstd * (dyr[d] * w[d] - mean_g - xhat * mean_gx);
    }
  }
  return g;
}

template <std::size_t R>
xt::xtensor<float, R> layer_norm_naive(const xt::xtensor<float, R>& x, const Tensor1& weight,
                                       const Tensor1& bias, float eps) {
  check_ln_args("layer_norm_naive", x, weight, bias);
  const std::size_t D = x.shape(R - 1);
  const std::size_t N = D == 0 ? 0 : x.size() / D;
  auto y = xt::xtensor<float, R>::from_shape(x.shape());
  for (std::size_t n = 0; n < N; ++n) {
    double mean = 0.0, var = 0.0;
    for (std::size_t d = 0; d < D; ++d) mean += x.data()[n * D + d];
    mean /= double(D);
    for (std::size_t d = 0; d < D; ++d) var += std::pow(x.data()[n * D + d] - mean, 2);
    var /= double(D);
    for (std::size_t d = 0; d < D; ++d)
      y.data()[n * D + d] =
          float((x.data()[n * D + d] - mean) / std::sqrt(var + eps) * weight(d) + bias(d));
  }
  return y;
}

#define XENC_INSTANTIATE_LN(R)                                                                  \
  template xt::xtensor<float, R> layer_norm_forward<R>(const xt::xtensor<float, R>&,            \
                                                       const Tensor1&, const Tensor1&, float,   \
                                                       LayerNormCache*);                        \
  template LayerNormGrads<R> layer_norm_backward<R>(const xt::xtensor<float, R>&,               \
                                                    const xt::xtensor<float, R>&,               \
                                                    const Tensor1&, const LayerNormCache&);     \
  template xt::xtensor<float, R> layer_norm_naive<R>(const xt::xtensor<float, R>&,              \
                                                     const Tensor1&, const Tensor1&, float);
XENC_INSTANTIATE_LN(1)
XENC_INSTANTIATE_LN(2)
XENC_INSTANTIATE_LN(3)
#undef XENC_INSTANTIATE_LN

}  // namespace xenc
