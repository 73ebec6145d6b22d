// Reference solution: the online softmax's update for one tile, row by row; a row whose scores are
// all -inf so far is left as it is.
#include "exercises.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace assignment {

xenc::grade::OnlineSoftmaxState online_softmax_tile(const xenc::grade::OnlineSoftmaxState& state,
                                                    const Tensor2& scores, const Tensor2& values) {
  const std::size_t Tq = scores.shape()[0], Tk = scores.shape()[1], Dv = values.shape()[1];
  xenc::grade::OnlineSoftmaxState next = state;
  for (std::size_t r = 0; r < Tq; ++r) {
    // the new maximum first, over the old one and the whole tile
    float m = state.m(r);
    for (std::size_t j = 0; j < Tk; ++j) m = std::max(m, scores(r, j));
    if (m == -std::numeric_limits<float>::infinity()) continue;  // nothing but masked keys so far
    // the old terms move to the new base: c = exp(m_old - m) <= 1
    const double c = std::exp(double(state.m(r)) - double(m));
    double l = c * state.l(r);
    for (std::size_t e = 0; e < Dv; ++e) next.acc(r, e) = float(c * state.acc(r, e));
    for (std::size_t j = 0; j < Tk; ++j) {
      const double p = std::exp(double(scores(r, j)) - double(m));
      l += p;
      for (std::size_t e = 0; e < Dv; ++e) next.acc(r, e) += float(p * values(j, e));
    }
    next.m(r) = m;
    next.l(r) = float(l);
  }
  return next;
}

}  // namespace assignment
