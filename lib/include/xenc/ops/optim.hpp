// The per-parameter update of an optimiser step, as a pure function on a parameter's tensors.
//
// SGD with momentum (torch.optim.SGD without dampening or Nesterov), element by element:
//
//     v ← momentum · v + grad               velocity, zeros before the first step
//     θ ← θ - lr · v
//
// Adam (Kingma & Ba, 2015), and AdamW's decoupled weight decay (Loshchilov & Hutter, 2019),
// element by element, with t the step number:
//
//     θ ← decay · θ                         decay = 1 - lr·wd (AdamW), 1 (Adam)
//     g ← grad + l2 · θ                     l2 = wd (Adam), 0 (AdamW)
//     m ← β1 m + (1 - β1) g                 first moment
//     v ← β2 v + (1 - β2) g²                second moment
//     θ ← θ - step_size · m / (√v / √(1 - β2^t) + eps),   step_size = lr / (1 - β1^t)
//
// (the bias corrections in torch.optim's order). One pass over the elements: each of θ, g, m,
// v is read once and θ, m, v written once (lib/src/kernels/optim.cpp). On x86 both passes run
// with flush-to-zero: a moment or velocity that would fall below the smallest normal float
// (2^-126) is 0, since Intel's cores compute on denormals in microcode; the caller's
// floating-point mode is restored.
// Shapes:  velocity, m, v: [size()] of the parameter, zeros before the first step.
// PyTorch: one parameter's share of torch.optim.SGD / Adam / AdamW .step()
// Throws:  shape_error if velocity, m or v has a size other than the parameter's;
//          std::logic_error if the parameter's gradient is not allocated.
#pragma once

#include "xenc/core/parameter.hpp"
#include "xenc/core/tensor.hpp"

namespace xenc {

/// One SGD step on `param` (its value and gradient), updating its velocity in place.
void sgd_update(const ParameterRef& param, Tensor1& velocity, float lr, float momentum);

/// The coefficients of one step, the same for every element of every parameter.
struct AdamCoefficients {
  float beta1, beta2, eps;
  float decay;                  ///< 1 - lr·wd (AdamW) or 1 (Adam)
  float l2;                     ///< wd (Adam) or 0 (AdamW)
  float step_size;              ///< lr / (1 - β1^t)
  float bias_correction2_sqrt;  ///< √(1 - β2^t)
};

/// One Adam step on `param` (its value and gradient), updating the moments m and v in place.
void adam_update(const ParameterRef& param, Tensor1& m, Tensor1& v, const AdamCoefficients& c);

}  // namespace xenc
