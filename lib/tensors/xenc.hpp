// xenc/xenc.hpp as an exercise sees it when the teacher's grading.json says
// "library_calls": false: the tensors and what the exercises return, nothing that computes.
//
// This folder (include/xencoder-tensors, the include path of xencoder::tensors) holds only the
// headers below and what they include; xenc/nn/ is not there, and of xenc/ops/ only
// attention.hpp, layer_norm.hpp and linear.hpp, for their result types (their functions are
// declared there and defined in xencoder alone). grade-<name> is linked against
// xencoder::tensors alone (libxencoder_tensors.a: the errors and random numbers), so an
// exercise has no xencoder operation to include, call, dlsym or dlopen.
#pragma once

#include "xenc/core/error.hpp"
#include "xenc/core/random.hpp"
#include "xenc/core/tensor.hpp"
#include "xenc/grade/exercises.hpp"  // the return types: AttentionResult, LayerNormGrads, ...
