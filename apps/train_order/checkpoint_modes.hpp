// xenc-train-order's checkpoint modes (each prints its result and returns the exit status).
#pragma once

#include <cstddef>
#include <string>

namespace train_order {

/// --load CKPT --evaluate OUT.npz: the checkpoint's own held-out set (rebuilt from the task
/// settings it stores), run through the model; writes ids, padding_mask, labels (int64/bool)
/// and logits [N, T, C] for scripts/torch_train_order.py, and prints the accuracy. Refuses an
/// evaluate_path that names the checkpoint itself (it would be overwritten).
int run_evaluate(const std::string& load, const std::string& evaluate_path);

/// --load CKPT --sentence "...": the predicted role of each word (a table, or JSON).
/// Refuses (resource_error) a sentence whose forward pass would need more than max_memory_mb or
/// take more than max_minutes (at a fast machine's rate), decided from the checkpoint's metadata
/// before the weights are loaded.
int run_inference(const std::string& load, const std::string& sentence, bool as_json,
                  std::size_t max_memory_mb, double max_minutes);

}  // namespace train_order
