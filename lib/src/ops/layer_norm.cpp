// Layer normalisation over the last axis, forward and backward (see layer_norm.hpp).
#include "xenc/ops/layer_norm.hpp"

#include <cmath>
#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

namespace {
template <std::size_t R>
void check_ln_args(const char* where, const xt::xtensor<float, R>& x, const Tensor1& w,
                   const Tensor1& b) {
  const long D = static_cast<long>(x.shape(R - 1));
  auto expect = [&] {
    return "[D] with D = " + std::to_string(D) + " (x has shape " + shape_str(x.shape()) + ")";
  };
  check_shape(where, "weight", w, {D}, expect);
  check_shape(where, "bias", b, {D}, expect);
}
}  // namespace

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
  if (N != 0)
    kernels::layer_norm_rows(kernels::as_matrix(x), kernels::as_matrix(y), weight.data(),
                             bias.data(), eps, cache ? cache->mean.data() : nullptr,
                             cache ? cache->rstd.data() : nullptr);
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
  // dx = rstd · (g - mean(g) - x̂ · mean(g · x̂)) with g = dy · weight; dweight, dbias summed
  if (N != 0)
    kernels::layer_norm_rows_backward(kernels::as_matrix(grad_y), kernels::as_matrix(x),
                                      weight.data(), {cache.mean.data(), cache.rstd.data()},
                                      kernels::as_matrix(g.input), g.weight.data(),
                                      g.bias.data());
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
