// The feed-forward block for inference, chunk by chunk of rows, read and written in place.
#include "xenc/ops/feed_forward.hpp"

#include <algorithm>
#include <string>

#include "../kernels/kernels.hpp"
#include "xenc/core/error.hpp"

namespace xenc {

Tensor3 feed_forward_in_chunks(const Tensor3& x, const Tensor2& w1, const Tensor1& b1,
                               Activation activation, const Tensor2& w2, const Tensor1& b2,
                               std::size_t chunk_rows) {
  const char* where = "feed_forward_in_chunks";
  check_config(chunk_rows > 0, where, "chunk_rows is 0, expected >= 1");
  const std::size_t in = w1.shape(1), F = w1.shape(0), out = w2.shape(0);
  check_shape(where, "x", x, {any_dim, any_dim, long(in)},
              [&] { return "[B, T, in] with in = " + std::to_string(in) + " (w1's columns)"; });
  if (b1.size() != 0)
    check_shape(where, "b1", b1, {long(F)},
                [&] { return "[F] with F = " + std::to_string(F) + " (w1's rows)"; });
  check_shape(where, "w2", w2, {long(out), long(F)},
              [&] { return "[out, F] with F = " + std::to_string(F) + " (w1's rows)"; });
  if (b2.size() != 0)
    check_shape(where, "b2", b2, {long(out)},
                [&] { return "[out] with out = " + std::to_string(out) + " (w2's rows)"; });
  Tensor3 y = Tensor3::from_shape({x.shape(0), x.shape(1), out});
  const std::size_t N = x.shape(0) * x.shape(1), C = std::min(chunk_rows, N);
  Tensor2 hidden = Tensor2::from_shape({C, F});
  const auto xm = kernels::as_matrix(x);
  const auto ym = kernels::as_matrix(y), hm = kernels::as_matrix(hidden);
  for (std::size_t r0 = 0; r0 < N; r0 += C) {
    const std::size_t rows = std::min(C, N - r0);
    const auto h = hm.block(0, 0, rows, F);
    kernels::linear_rows(xm.block(r0, 0, rows, xm.cols), kernels::as_matrix(w1),
                         kernels::as_vector(b1), h);
    if (activation == Activation::relu)
      kernels::relu_inplace(kernels::as_vector(hidden), rows * F);
    else
      kernels::gelu_inplace(kernels::as_vector(hidden), rows * F);
    kernels::linear_rows(h, kernels::as_matrix(w2), kernels::as_vector(b2),
                         ym.block(r0, 0, rows, out));
  }
  return y;
}

}  // namespace xenc
