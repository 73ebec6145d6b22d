// The math in one include: #include <xenc/xenc.hpp> (tensors, ops, modules, tokenizer), for a
// program that links xencoder::xencoder (pkg-config: xencoder).
//
// Files and figures are separate libraries with their own umbrella headers:
//     #include <xenc/io.hpp>    .npy/.npz and state_dicts   xencoder::io   (pkg-config:
//     xencoder-io) #include <xenc/viz.hpp>   SVG figures, display          xencoder::viz
//     (pkg-config: xencoder-viz)
#pragma once

#include "xenc/core/error.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/core/parameter.hpp"
#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/data/batching.hpp"
#include "xenc/data/position_tasks.hpp"
#include "xenc/data/word_roles.hpp"
#include "xenc/nn/cost.hpp"
#include "xenc/nn/embedding.hpp"
#include "xenc/nn/encoder_model.hpp"
#include "xenc/nn/layer_norm.hpp"
#include "xenc/nn/linear.hpp"
#include "xenc/nn/module.hpp"
#include "xenc/nn/multihead_attention.hpp"
#include "xenc/nn/optim.hpp"
#include "xenc/nn/position.hpp"
#include "xenc/nn/token_classifier.hpp"
#include "xenc/nn/transformer_encoder.hpp"
#include "xenc/ops/activation.hpp"
#include "xenc/ops/attention.hpp"
#include "xenc/ops/cross_entropy.hpp"
#include "xenc/ops/dropout.hpp"
#include "xenc/ops/elementwise.hpp"
#include "xenc/ops/embedding.hpp"
#include "xenc/ops/gemm.hpp"
#include "xenc/ops/layer_norm.hpp"
#include "xenc/ops/linear.hpp"
#include "xenc/ops/multi_head_attention.hpp"
#include "xenc/ops/position_in_attention.hpp"
#include "xenc/ops/positional.hpp"
#include "xenc/ops/randomized_positions.hpp"
#include "xenc/ops/relative_attention.hpp"
#include "xenc/ops/softmax.hpp"
#include "xenc/reference/encoder_layer.hpp"
#include "xenc/reference/ops.hpp"
#include "xenc/text/display_width.hpp"
#include "xenc/text/tokenizer.hpp"
#include "xenc/text/vocabulary.hpp"
