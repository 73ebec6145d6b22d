// Residual sums and saved copies: one pass over the elements, on the pool from kRowPassWork.
#include "xenc/ops/elementwise.hpp"

#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

template <std::size_t R>
void add_inplace(xt::xtensor<float, R>& y, const xt::xtensor<float, R>& x) {
  if (y.shape() != x.shape())
    throw shape_error("add_inplace: x has shape " + shape_str(x.shape()) + ", expected y's shape " +
                      shape_str(y.shape()));
  kernels::add_inplace(kernels::as_vector(y), kernels::as_vector(x), x.size());
}

template <std::size_t R>
xt::xtensor<float, R> copy_of(const xt::xtensor<float, R>& x) {
  auto y = xt::xtensor<float, R>::from_shape(x.shape());
  kernels::copy_floats(kernels::as_vector(y), kernels::as_vector(x), x.size());
  return y;
}

template <std::size_t R>
Tensor2 copy_as_rows(const xt::xtensor<float, R>& x) {
  const kernels::ConstMatView m = kernels::as_matrix(x);
  auto y = Tensor2::from_shape({m.rows, m.cols});
  kernels::copy_floats(kernels::as_vector(y), kernels::as_vector(x), x.size());
  return y;
}

template void add_inplace(Tensor1&, const Tensor1&);
template void add_inplace(Tensor2&, const Tensor2&);
template void add_inplace(Tensor3&, const Tensor3&);
template void add_inplace(Tensor4&, const Tensor4&);
template Tensor1 copy_of(const Tensor1&);
template Tensor2 copy_of(const Tensor2&);
template Tensor3 copy_of(const Tensor3&);
template Tensor4 copy_of(const Tensor4&);
template Tensor2 copy_as_rows(const Tensor2&);
template Tensor2 copy_as_rows(const Tensor3&);
template Tensor2 copy_as_rows(const Tensor4&);

}  // namespace xenc
