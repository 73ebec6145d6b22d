// Layer normalisation over the last axis, forward and backward (see layer_norm.hpp).
#include "xenc/ops/layer_norm.hpp"

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

namespace {
// y = layer norm of x's rows; the row means and rstds go to `mean` and `rstd` unless they are
// empty (inference keeps no statistics).
template <std::size_t R>
xt::xtensor<float, R> forward(const xt::xtensor<float, R>& x, const Tensor1& weight,
                              const Tensor1& bias, float eps, kernels::Vector<float> mean,
                              kernels::Vector<float> rstd) {
  check_ln_args("layer_norm_forward", x, weight, bias);
  auto y = xt::xtensor<float, R>::from_shape(x.shape());
  if (x.size() != 0)
    kernels::layer_norm_rows(kernels::as_matrix(x), kernels::as_matrix(y),
                             kernels::as_vector(weight), kernels::as_vector(bias), eps, mean, rstd);
  return y;
}
}  // namespace

template <std::size_t R>
xt::xtensor<float, R> layer_norm_forward(const xt::xtensor<float, R>& x, const Tensor1& weight,
                                         const Tensor1& bias, float eps) {
  return forward(x, weight, bias, eps, {}, {});
}

template <std::size_t R>
xt::xtensor<float, R> layer_norm_forward(const xt::xtensor<float, R>& x, const Tensor1& weight,
                                         const Tensor1& bias, float eps, LayerNormCache& cache) {
  const std::size_t D = x.shape(R - 1);
  const std::size_t N = D == 0 ? 0 : x.size() / D;
  cache.mean = Tensor1::from_shape({N});
  cache.rstd = Tensor1::from_shape({N});
  return forward(x, weight, bias, eps, kernels::as_vector(cache.mean),
                 kernels::as_vector(cache.rstd));
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
    kernels::layer_norm_rows_backward(
        kernels::as_matrix(grad_y), kernels::as_matrix(x), kernels::as_vector(weight),
        {kernels::as_vector(cache.mean), kernels::as_vector(cache.rstd)},
        kernels::as_matrix(g.input), kernels::as_vector(g.weight), kernels::as_vector(g.bias));
  return g;
}

// The ranks the header promises (1 to 3), one explicit instantiation per line.
template Tensor1 layer_norm_forward(const Tensor1&, const Tensor1&, const Tensor1&, float);
template Tensor2 layer_norm_forward(const Tensor2&, const Tensor1&, const Tensor1&, float);
template Tensor3 layer_norm_forward(const Tensor3&, const Tensor1&, const Tensor1&, float);
template Tensor1 layer_norm_forward(const Tensor1&, const Tensor1&, const Tensor1&, float,
                                    LayerNormCache&);
template Tensor2 layer_norm_forward(const Tensor2&, const Tensor1&, const Tensor1&, float,
                                    LayerNormCache&);
template Tensor3 layer_norm_forward(const Tensor3&, const Tensor1&, const Tensor1&, float,
                                    LayerNormCache&);
template LayerNormGrads<1> layer_norm_backward(const Tensor1&, const Tensor1&, const Tensor1&,
                                               const LayerNormCache&);
template LayerNormGrads<2> layer_norm_backward(const Tensor2&, const Tensor2&, const Tensor1&,
                                               const LayerNormCache&);
template LayerNormGrads<3> layer_norm_backward(const Tensor3&, const Tensor3&, const Tensor1&,
                                               const LayerNormCache&);

}  // namespace xenc
