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
void copy_into(xt::xtensor<float, R>& dst, const xt::xtensor<float, R>& x) {
  dst.resize(x.shape());  // the same buffer when the size is unchanged
  kernels::copy_floats(kernels::as_vector(dst), kernels::as_vector(x), x.size());
}

template <std::size_t R>
void copy_rows_into(Tensor2& dst, const xt::xtensor<float, R>& x) {
  const kernels::ConstMatView m = kernels::as_matrix(x);
  dst.resize({m.rows, m.cols});
  kernels::copy_floats(kernels::as_vector(dst), kernels::as_vector(x), x.size());
}

template void add_inplace(Tensor1&, const Tensor1&);
template void add_inplace(Tensor2&, const Tensor2&);
template void add_inplace(Tensor3&, const Tensor3&);
template void add_inplace(Tensor4&, const Tensor4&);
template void copy_into(Tensor1&, const Tensor1&);
template void copy_into(Tensor2&, const Tensor2&);
template void copy_into(Tensor3&, const Tensor3&);
template void copy_into(Tensor4&, const Tensor4&);
template void copy_rows_into(Tensor2&, const Tensor2&);
template void copy_rows_into(Tensor2&, const Tensor3&);
template void copy_rows_into(Tensor2&, const Tensor4&);

}  // namespace xenc
