// Element-wise activations.
//
//     relu(x) = max(x, 0)                      relu'(x) = 1 if x > 0 else 0
//     gelu(x) = x · Φ(x) = x/2 · (1 + erf(x / √2))     (the exact erf form, PyTorch's default)
//     gelu'(x) = Φ(x) + x · φ(x),  φ(x) = exp(-x²/2) / √(2π)
// Shapes: any; y and dx have x's shape.
// Backward takes grad_y by value and writes dx into its buffer: a caller that no longer needs
// the gradient passes std::move(g) and no new tensor is allocated.
// PyTorch: torch.relu, torch.nn.functional.gelu(x, approximate='none')
#pragma once

#include <cstddef>
#include <string>

#include "xenc/core/tensor.hpp"

namespace xenc {

enum class Activation { relu, gelu };

/// "relu" -> Activation::relu, "gelu" -> Activation::gelu.
/// Throws: config_error for any other name.
Activation parse_activation(const std::string& name);
std::string to_string(Activation a);

template <std::size_t R>
xt::xtensor<float, R> relu_forward(const xt::xtensor<float, R>& x);
template <std::size_t R>
xt::xtensor<float, R> relu_backward(xt::xtensor<float, R> grad_y, const xt::xtensor<float, R>& x);

template <std::size_t R>
xt::xtensor<float, R> gelu_forward(const xt::xtensor<float, R>& x);
template <std::size_t R>
xt::xtensor<float, R> gelu_backward(xt::xtensor<float, R> grad_y, const xt::xtensor<float, R>& x);

/// Dispatch on `a`.
template <std::size_t R>
xt::xtensor<float, R> activation_forward(Activation a, const xt::xtensor<float, R>& x);
template <std::size_t R>
xt::xtensor<float, R> activation_backward(Activation a, xt::xtensor<float, R> grad_y,
                                          const xt::xtensor<float, R>& x);

/// x = act(x) in place, without a copy (the encoder's feed-forward uses it).
template <std::size_t R>
void activation_inplace(Activation a, xt::xtensor<float, R>& x);

}  // namespace xenc
