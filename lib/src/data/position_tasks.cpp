// Random-symbol sequences labelled by a position rule (neighbour_sum, copy_left).
#include "xenc/data/position_tasks.hpp"

#include <stdexcept>
#include <string>

#include "xenc/core/error.hpp"
#include "xenc/core/random.hpp"

namespace xenc {

namespace {
// A uniform index in [0, n) from one 32-bit draw (as in word_roles.cpp).
std::size_t pick(Rng& rng, std::size_t n) {
  return static_cast<std::size_t>((std::uint64_t(rng.next_u32()) * n) >> 32);
}

std::string symbol_name(std::size_t s) { return "t" + std::to_string(s); }
}  // namespace

PositionRule parse_position_rule(const std::string& name) {
  for (PositionRule r : all_position_rules())
    if (to_string(r) == name) return r;
  throw config_error("parse_position_rule: unknown rule \"" + name +
                     "\", expected neighbour_sum or copy_left");
}

std::string to_string(PositionRule rule) {
  switch (rule) {
    case PositionRule::neighbour_sum:
      return "neighbour_sum";
    case PositionRule::copy_left:
      return "copy_left";
  }
  return "?";
}

const std::vector<PositionRule>& all_position_rules() {
  static const std::vector<PositionRule> rules = {PositionRule::neighbour_sum,
                                                  PositionRule::copy_left};
  return rules;
}

std::size_t position_task_min_length(PositionRule rule, std::size_t k) {
  return rule == PositionRule::neighbour_sum ? 2 * k + 1 : k + 1;
}

void PositionTaskConfig::validate() const {
  const char* where = "make_position_task";
  check_config(num_symbols >= 2 && num_symbols <= 1000, where,
               "num_symbols is " + std::to_string(num_symbols) + ", expected 2...1000");
  check_config(offset >= 1 && offset <= 64, where,
               "offset is " + std::to_string(offset) + ", expected 1...64");
  const std::size_t shortest = position_task_min_length(rule, offset);
  check_config(min_length >= shortest, where,
               "min_length is " + std::to_string(min_length) +
                   ", expected >= " + std::to_string(shortest) + " (" + to_string(rule) +
                   " needs " + (rule == PositionRule::neighbour_sum ? "2k + 1" : "k + 1") +
                   " with k = " + std::to_string(offset) + " for one labelled position)");
  check_config(max_length >= min_length && max_length <= 100000, where,
               "max_length is " + std::to_string(max_length) + ", expected " +
                   std::to_string(min_length) + "...100000 (min_length...100000)");
  check_config(num_sequences >= 1 && num_sequences <= 10000000, where,
               "num_sequences is " + std::to_string(num_sequences) + ", expected 1...10000000");
}

Vocabulary position_task_vocabulary(std::size_t num_symbols) {
  Vocabulary v;  // <pad> = 0, <unk> = 1
  for (std::size_t s = 0; s < num_symbols; ++s) v.add(symbol_name(s));
  return v;
}

std::int64_t position_task_label(PositionRule rule, const std::vector<std::int64_t>& symbols,
                                 std::size_t p, std::size_t k, std::size_t num_symbols) {
  const std::size_t T = symbols.size();
  if (p >= T)
    throw std::invalid_argument("position_task_label: p is " + std::to_string(p) + ", expected < " +
                                std::to_string(T) + " (the sequence length)");
  switch (rule) {
    case PositionRule::neighbour_sum:
      // both neighbours must exist: k <= p and p + k < T
      if (p < k || p + k >= T) return kIgnoreIndex;
      return (symbols[p - k] + symbols[p + k]) % std::int64_t(num_symbols);
    case PositionRule::copy_left:
      if (p < k) return kIgnoreIndex;
      return symbols[p - k];
  }
  return kIgnoreIndex;
}

std::vector<std::string> PositionTaskDataset::label_names() const {
  std::vector<std::string> names;
  for (std::size_t s = 0; s < config.num_symbols; ++s) names.push_back(symbol_name(s));
  return names;
}

PositionTaskDataset make_position_task(const PositionTaskConfig& config) {
  config.validate();
  PositionTaskDataset d;
  d.config = config;
  d.vocab = position_task_vocabulary(config.num_symbols);
  Rng rng(config.seed);
  d.sequences.reserve(config.num_sequences);
  d.symbols.reserve(config.num_sequences);
  for (std::size_t n = 0; n < config.num_sequences; ++n) {
    // 1. the length, uniform in [min_length, max_length]; 2. the symbols, uniform in [0, V)
    const std::size_t T = config.min_length + pick(rng, config.max_length - config.min_length + 1);
    std::vector<std::int64_t> s(T);
    for (auto& v : s) v = std::int64_t(pick(rng, config.num_symbols));
    // 3. tokens and the rule's label at every position
    LabelledSentence seq;
    seq.tokens.reserve(T);
    seq.labels.reserve(T);
    for (std::size_t p = 0; p < T; ++p) {
      seq.tokens.push_back(symbol_name(std::size_t(s[p])));
      seq.labels.push_back(
          position_task_label(config.rule, s, p, config.offset, config.num_symbols));
      d.labelled_positions += seq.labels.back() != kIgnoreIndex;
    }
    d.sequences.push_back(std::move(seq));
    d.symbols.push_back(std::move(s));
  }
  return d;
}

}  // namespace xenc
