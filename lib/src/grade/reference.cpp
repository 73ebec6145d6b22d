// The grader's references: every formula in double precision, in plain loops.
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace xenc::grade::ref {

Array sinusoidal_table(std::size_t P, std::size_t D) {
  Array a{{P, D}, std::vector<double>(P * D)};
  for (std::size_t p = 0; p < P; ++p)
    for (std::size_t i = 0; i < D / 2; ++i) {
      // PE(p, 2i) = sin(p / 10000^(2i/D)), PE(p, 2i+1) = cos(same angle)
      const double angle = double(p) / std::pow(10000.0, double(2 * i) / double(D));
      a.data[p * D + 2 * i] = std::sin(angle);
      a.data[p * D + 2 * i + 1] = std::cos(angle);
    }
  return a;
}

Array softmax(const Array& x) {
  Array y = x;
  const std::size_t C = x.shape.back(), N = x.data.size() / C;
  for (std::size_t r = 0; r < N; ++r) {
    double* row = y.data.data() + r * C;
    const double m = *std::max_element(row, row + C);
    if (m == -std::numeric_limits<double>::infinity()) {  // fully masked: attend to nothing
      std::fill(row, row + C, 0.0);
      continue;
    }
    double sum = 0.0;
    for (std::size_t c = 0; c < C; ++c) sum += (row[c] = std::exp(row[c] - m));
    for (std::size_t c = 0; c < C; ++c) row[c] /= sum;
  }
  return y;
}

Array layer_norm(const Array& x, const std::vector<double>& w, const std::vector<double>& b, double eps) {
  Array y = x;
  const std::size_t D = x.shape.back(), N = x.data.size() / D;
  for (std::size_t r = 0; r < N; ++r) {
    const double* xr = x.data.data() + r * D;
    double mean = 0.0, var = 0.0;
    for (std::size_t d = 0; d < D; ++d) mean += xr[d] / double(D);
    for (std::size_t d = 0; d < D; ++d) var += (xr[d] - mean) * (xr[d] - mean) / double(D);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (std::size_t d = 0; d < D; ++d) y.data[r * D + d] = (xr[d] - mean) * rstd * w[d] + b[d];
  }
  return y;
}

LayerNormGrads layer_norm_backward(const Array& dy, const Array& x, const std::vector<double>& w,
                                   double eps) {
  const std::size_t D = x.shape.back(), N = x.data.size() / D;
  LayerNormGrads g{x, std::vector<double>(D, 0.0), std::vector<double>(D, 0.0)};
  std::vector<double> xhat(D), gw(D);
  for (std::size_t r = 0; r < N; ++r) {
    const double* xr = x.data.data() + r * D;
    const double* dyr = dy.data.data() + r * D;
    double mean = 0.0, var = 0.0;
    for (std::size_t d = 0; d < D; ++d) mean += xr[d] / double(D);
    for (std::size_t d = 0; d < D; ++d) var += (xr[d] - mean) * (xr[d] - mean) / double(D);
    const double rstd = 1.0 / std::sqrt(var + eps);
    double mean_g = 0.0, mean_gx = 0.0;
    for (std::size_t d = 0; d < D; ++d) {
      xhat[d] = (xr[d] - mean) * rstd;
      gw[d] = dyr[d] * w[d];
      mean_g += gw[d] / double(D);
      mean_gx += gw[d] * xhat[d] / double(D);
      g.weight[d] += dyr[d] * xhat[d];
      g.bias[d] += dyr[d];
    }
    for (std::size_t d = 0; d < D; ++d) g.input.data[r * D + d] = rstd * (gw[d] - mean_g - xhat[d] * mean_gx);
  }
  return g;
}

Attention attention(const Array& q, const Array& k, const Array& v, const std::vector<int>& mask) {
  const std::size_t B = q.shape[0], H = q.shape[1], Tq = q.shape[2], Dh = q.shape[3], Tk = k.shape[2];
  const double inf = std::numeric_limits<double>::infinity();
  Attention a{{{B, H, Tq, Dh}, std::vector<double>(B * H * Tq * Dh, 0.0)},
              {{B, H, Tq, Tk}, std::vector<double>(B * H * Tq * Tk, 0.0)}};
  std::vector<double> s(Tk);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < Tq; ++i) {
        const double* qi = q.data.data() + ((b * H + h) * Tq + i) * Dh;
        // S[i, j] = q_i · k_j / sqrt(Dh), -inf for padding keys
        for (std::size_t j = 0; j < Tk; ++j) {
          const double* kj = k.data.data() + ((b * H + h) * Tk + j) * Dh;
          double dot = 0.0;
          for (std::size_t e = 0; e < Dh; ++e) dot += qi[e] * kj[e];
          s[j] = (!mask.empty() && mask[b * Tk + j]) ? -inf : dot / std::sqrt(double(Dh));
        }
        const Array p = softmax(Array{{Tk}, s});
        for (std::size_t j = 0; j < Tk; ++j) {
          a.weights.data[((b * H + h) * Tq + i) * Tk + j] = p.data[j];
          const double* vj = v.data.data() + ((b * H + h) * Tk + j) * Dh;
          for (std::size_t e = 0; e < Dh; ++e) a.output.data[((b * H + h) * Tq + i) * Dh + e] += p.data[j] * vj[e];
        }
      }
  return a;
}

Array split_heads(const Array& x, std::size_t H) {
  const std::size_t B = x.shape[0], T = x.shape[1], D = x.shape[2], Dh = D / H;
  Array y{{B, H, T, Dh}, std::vector<double>(x.data.size())};
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t e = 0; e < Dh; ++e)
          y.data[((b * H + h) * T + t) * Dh + e] = x.data[(b * T + t) * D + h * Dh + e];
  return y;
}

Array merge_heads(const Array& x) {
  const std::size_t B = x.shape[0], H = x.shape[1], T = x.shape[2], Dh = x.shape[3], D = H * Dh;
  Array y{{B, T, D}, std::vector<double>(x.data.size())};
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t e = 0; e < Dh; ++e)
          y.data[(b * T + t) * D + h * Dh + e] = x.data[((b * H + h) * T + t) * Dh + e];
  return y;
}

Array linear(const Array& x, const Array& W, const std::vector<double>& b) {
  const std::size_t N = x.shape[0], in = x.shape[1], out = W.shape[0];
  Array y{{N, out}, std::vector<double>(N * out)};
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t o = 0; o < out; ++o) {
      double s = b[o];
      for (std::size_t i = 0; i < in; ++i) s += x.data[n * in + i] * W.data[o * in + i];
      y.data[n * out + o] = s;
    }
  return y;
}

LinearGrads linear_backward(const Array& dy, const Array& x, const Array& W) {
  const std::size_t N = x.shape[0], in = x.shape[1], out = W.shape[0];
  LinearGrads g{{{N, in}, std::vector<double>(N * in, 0.0)},
                {{out, in}, std::vector<double>(out * in, 0.0)},
                std::vector<double>(out, 0.0)};
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t o = 0; o < out; ++o) {
      const double d = dy.data[n * out + o];
      for (std::size_t i = 0; i < in; ++i) {
        g.input.data[n * in + i] += d * W.data[o * in + i];   // dx = dy W
        g.weight.data[o * in + i] += d * x.data[n * in + i];  // dW = dyᵀ x
      }
      g.bias[o] += d;  // db = Σ_rows dy
    }
  return g;
}

CrossEntropy cross_entropy(const Array& logits, const std::vector<std::int64_t>& targets,
                           std::int64_t ignore_index) {
  const std::size_t N = logits.shape[0], C = logits.shape[1];
  CrossEntropy ce{0.0, {{N, C}, std::vector<double>(N * C, 0.0)}};
  std::size_t kept = 0;
  for (std::size_t n = 0; n < N; ++n) kept += targets[n] != ignore_index;
  for (std::size_t n = 0; n < N; ++n) {
    if (targets[n] == ignore_index) continue;
    const double* z = logits.data.data() + n * C;
    const double m = *std::max_element(z, z + C);
    double s = 0.0;
    for (std::size_t c = 0; c < C; ++c) s += std::exp(z[c] - m);
    ce.loss += m + std::log(s) - z[targets[n]];  // logsumexp(z) - z_t
    for (std::size_t c = 0; c < C; ++c)
      ce.grad.data[n * C + c] = (std::exp(z[c] - m) / s - (std::int64_t(c) == targets[n] ? 1.0 : 0.0)) / double(kept);
  }
  ce.loss = kept == 0 ? std::numeric_limits<double>::quiet_NaN() : ce.loss / double(kept);
  return ce;
}

Array rope(const Array& x, const std::vector<double>& positions) {
  const std::size_t T = x.shape.at(0), Dh = x.shape.at(1);
  Array y = x;
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t i = 0; i < Dh / 2; ++i) {
      // pair (2i, 2i+1) turns counter-clockwise by a = p · 10000^(−2i/Dh)
      const double a = positions.at(t) * std::pow(10000.0, -2.0 * double(i) / double(Dh));
      const double x0 = x.data[t * Dh + 2 * i], x1 = x.data[t * Dh + 2 * i + 1];
      y.data[t * Dh + 2 * i] = x0 * std::cos(a) - x1 * std::sin(a);
      y.data[t * Dh + 2 * i + 1] = x0 * std::sin(a) + x1 * std::cos(a);
    }
  return y;
}

std::vector<double> alibi_slopes(std::size_t H) {
  // n: the largest power of two <= H, whose slopes are 2^(−8·1/n), 2^(−8·2/n), ..., 2^(−8)
  std::size_t n = 1;
  while (2 * n <= H) n *= 2;
  std::vector<double> m;
  for (std::size_t h = 1; h <= n; ++h) m.push_back(std::exp2(-8.0 * double(h) / double(n)));
  // the rest: slopes 1, 3, 5, ... (1-based) of the 2n sequence, 2^(−8·(2j+1)/(2n))
  for (std::size_t j = 0; m.size() < H; ++j) m.push_back(std::exp2(-8.0 * double(2 * j + 1) / double(2 * n)));
  return m;
}

}  // namespace xenc::grade::ref
