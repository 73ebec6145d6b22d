// xenc-train-order's checkpoint modes (each prints its result and returns the exit status).
#pragma once

#include <string>

namespace train_order {

/// --load CKPT --evaluate OUT.npz: the checkpoint's own held-out set (rebuilt from the task
/// settings it stores), run through the model; writes ids, padding_mask, labels (int64/bool)
/// and logits [N, T, C] for scripts/torch_train_order.py, and prints the accuracy.
int run_evaluate(const std::string& load, const std::string& evaluate_path);

/// --load CKPT --sentence "...": the predicted role of each word (a table, or JSON).
int run_inference(const std::string& load, const std::string& sentence, bool as_json);

}  // namespace train_order
