// Random-symbol sequences labelled by a position rule: the two per-position rules
// (neighbour_sum, copy_left) and the tasks of Ruoss et al. (2023) answered at <out> placeholders.
#include "xenc/data/position_tasks.hpp"

#include <algorithm>
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

constexpr const char* kOutToken = "<out>";
// The paper's codes for the input tokens that are not symbols.
constexpr std::int64_t kMissing = 2, kEmpty = 3;  // missing_duplicate_string: "?", "#"
constexpr std::int64_t kPlus = 2;                 // binary_addition: "+"
constexpr std::int64_t kEnd = 2;                  // binary_addition's answer: <end>

// The paper's fixed input alphabets: the symbols a rule reads (0: any V), and why.
std::size_t fixed_alphabet(PositionRule rule) {
  switch (rule) {
    case PositionRule::parity_check:
    case PositionRule::missing_duplicate_string:
    case PositionRule::binary_addition:
    case PositionRule::even_pairs:
      return 2;
    case PositionRule::cycle_navigation:
      return 3;
    default:
      return 0;
  }
}

std::string alphabet_note(PositionRule rule) {
  if (rule == PositionRule::cycle_navigation)
    return "cycle_navigation reads 3 actions: t0 left, t1 stay, t2 right";
  return to_string(rule) + " reads bits";
}

// The token of input code v: "t<v>" for a symbol, else the rule's own token.
std::string input_token(PositionRule rule, std::int64_t v) {
  if (rule == PositionRule::missing_duplicate_string && v == kMissing) return "?";
  if (rule == PositionRule::missing_duplicate_string && v == kEmpty) return "#";
  if (rule == PositionRule::binary_addition && v == kPlus) return "+";
  return symbol_name(std::size_t(v));
}

std::string value_error(const std::string& where, std::size_t i, std::int64_t v,
                        const std::string& expected) {
  return where + ": x[" + std::to_string(i) + "] is " + std::to_string(v) + ", expected " +
         expected;
}

// x[i] must be a symbol 0..V-1.
void check_symbols(PositionRule rule, const std::vector<std::int64_t>& x, std::size_t V) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i] < 0 || x[i] >= std::int64_t(V))
      throw std::invalid_argument(
          value_error("position_task_output", i, x[i],
                      "0..." + std::to_string(V - 1) + " (" + to_string(rule) +
                          " with num_symbols = " + std::to_string(V) + ")"));
}

// missing_duplicate_string: x = w w with one bit replaced by "?", then "#" if n is odd.
std::int64_t missing_bit(const std::vector<std::int64_t>& x) {
  const char* where = "position_task_output";
  const std::size_t n = x.size(), h = n / 2;
  if (n % 2 == 1 && x[n - 1] != kEmpty)
    throw std::invalid_argument(
        value_error(where, n - 1, x[n - 1],
                    "3 (\"#\" ends an input of odd length n = " + std::to_string(n) + ")"));
  std::size_t q = 2 * h;  // the position of "?"
  for (std::size_t i = 0; i < 2 * h; ++i) {
    if (x[i] == kMissing && q == 2 * h) {
      q = i;
      continue;
    }
    if (x[i] != 0 && x[i] != 1)
      throw std::invalid_argument(
          value_error(where, i, x[i],
                      std::string("0 or 1") + (x[i] == kMissing ? " (a second \"?\")" : "") +
                          " (missing_duplicate_string: w w with one \"?\")"));
  }
  if (q == 2 * h)
    throw std::invalid_argument(std::string(where) + ": x has no \"?\" (2), expected one in x[0.." +
                                std::to_string(2 * h - 1) + "] (missing_duplicate_string)");
  // the two halves agree everywhere but at "?"; the answer is the bit h places away
  for (std::size_t i = 0; i < h; ++i)
    if (i != q % h && x[i] != x[i + h])
      throw std::invalid_argument(std::string(where) + ": x[" + std::to_string(i) + "] is " +
                                  std::to_string(x[i]) + " and x[" + std::to_string(i + h) +
                                  "] is " + std::to_string(x[i + h]) +
                                  ", expected equal (missing_duplicate_string: w w)");
  return q < h ? x[q + h] : x[q - h];
}

// binary_addition: the little-endian sum of a + b, without trailing zeros, then <end> and 0s.
std::vector<std::int64_t> binary_sum(const std::vector<std::int64_t>& x) {
  const char* where = "position_task_output";
  const std::size_t n = x.size();
  std::size_t plus = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] == kPlus && plus == n) {
      plus = i;
      continue;
    }
    if (x[i] != 0 && x[i] != 1)
      throw std::invalid_argument(value_error(where, i, x[i],
                                              std::string("0 or 1") +
                                                  (x[i] == kPlus ? " (a second \"+\")" : "") +
                                                  " (binary_addition: a + b)"));
  }
  if (plus == 0 || plus + 1 >= n)
    throw std::invalid_argument(
        std::string(where) + ": \"+\" (2) is " +
        (plus == n ? std::string("missing") : "at x[" + std::to_string(plus) + "]") +
        ", expected one in x[1.." + std::to_string(n - 2) +
        "] (binary_addition: a + b with a bit on each side)");
  // 1. add bit by bit, least significant first, carrying
  const std::size_t na = plus, nb = n - plus - 1;
  std::vector<std::int64_t> sum;
  std::int64_t carry = 0;
  for (std::size_t i = 0; i < std::max(na, nb); ++i) {
    const std::int64_t s = (i < na ? x[i] : 0) + (i < nb ? x[plus + 1 + i] : 0) + carry;
    sum.push_back(s % 2);
    carry = s / 2;
  }
  sum.push_back(carry);
  // 2. drop the trailing (most significant) zeros; zero itself is "0"
  while (sum.size() > 1 && sum.back() == 0) sum.pop_back();
  // 3. <end>, then 0s up to m = n + 1 (sum has at most max(na, nb) + 1 <= n - 1 bits)
  sum.push_back(kEnd);
  sum.resize(n + 1, 0);
  return sum;
}

// One input of n tokens for a family-2 rule, as numbers (PositionTaskDataset::symbols).
std::vector<std::int64_t> draw_input(PositionRule rule, std::size_t n, std::size_t V, Rng& rng) {
  std::vector<std::int64_t> x;
  switch (rule) {
    case PositionRule::missing_duplicate_string: {
      // w of n/2 bits, twice; one of the 2·(n/2) bits becomes "?"; "#" if n is odd
      const std::size_t h = n / 2;
      std::vector<std::int64_t> w(h);
      for (auto& b : w) b = std::int64_t(pick(rng, 2));
      x = w;
      x.insert(x.end(), w.begin(), w.end());
      x[pick(rng, 2 * h)] = kMissing;
      if (n % 2 == 1) x.push_back(kEmpty);
      return x;
    }
    case PositionRule::binary_addition: {
      // a has n_a bits, n_a uniform in [1, n-2]; b the other n - 1 - n_a; each uniform in
      // [1, 2^bits - 1] (all bits uniform, drawn again while all are zero)
      const std::size_t na = 1 + pick(rng, n - 2), nb = n - 1 - na;
      auto number = [&](std::size_t bits) {
        std::vector<std::int64_t> v(bits, 0);
        while (std::find(v.begin(), v.end(), 1) == v.end())
          for (auto& b : v) b = std::int64_t(pick(rng, 2));
        return v;
      };
      x = number(na);
      x.push_back(kPlus);
      const std::vector<std::int64_t> b = number(nb);
      x.insert(x.end(), b.begin(), b.end());
      return x;
    }
    default:  // n symbols, uniform in [0, V) (V = 2 or 3 for the fixed alphabets)
      x.resize(n);
      for (auto& v : x) v = std::int64_t(pick(rng, V));
      return x;
  }
}
}  // namespace

PositionRule parse_position_rule(const std::string& name) {
  std::string known;
  for (PositionRule r : all_position_rules()) {
    if (to_string(r) == name) return r;
    known += (known.empty() ? "" : ", ") + to_string(r);
  }
  throw config_error("parse_position_rule: unknown rule \"" + name + "\", expected one of " +
                     known);
}

std::string to_string(PositionRule rule) {
  switch (rule) {
    case PositionRule::neighbour_sum:
      return "neighbour_sum";
    case PositionRule::copy_left:
      return "copy_left";
    case PositionRule::reverse_string:
      return "reverse_string";
    case PositionRule::duplicate_string:
      return "duplicate_string";
    case PositionRule::missing_duplicate_string:
      return "missing_duplicate_string";
    case PositionRule::odds_first:
      return "odds_first";
    case PositionRule::parity_check:
      return "parity_check";
    case PositionRule::bucket_sort:
      return "bucket_sort";
    case PositionRule::binary_addition:
      return "binary_addition";
    case PositionRule::even_pairs:
      return "even_pairs";
    case PositionRule::cycle_navigation:
      return "cycle_navigation";
  }
  return "?";
}

const std::vector<PositionRule>& all_position_rules() {
  static const std::vector<PositionRule> rules = {PositionRule::neighbour_sum,
                                                  PositionRule::copy_left,
                                                  PositionRule::reverse_string,
                                                  PositionRule::duplicate_string,
                                                  PositionRule::missing_duplicate_string,
                                                  PositionRule::odds_first,
                                                  PositionRule::parity_check,
                                                  PositionRule::bucket_sort,
                                                  PositionRule::binary_addition,
                                                  PositionRule::even_pairs,
                                                  PositionRule::cycle_navigation};
  return rules;
}

bool position_task_has_outputs(PositionRule rule) {
  return rule != PositionRule::neighbour_sum && rule != PositionRule::copy_left;
}

std::size_t position_task_min_length(PositionRule rule, std::size_t k) {
  switch (rule) {
    case PositionRule::neighbour_sum:
      return 2 * k + 1;
    case PositionRule::copy_left:
      return k + 1;
    case PositionRule::missing_duplicate_string:
      return 2;
    case PositionRule::binary_addition:
      return 3;
    default:
      return 1;
  }
}

std::size_t position_task_num_classes(PositionRule rule, std::size_t num_symbols) {
  switch (rule) {
    case PositionRule::binary_addition:
      return 3;
    case PositionRule::cycle_navigation:
      return 5;
    case PositionRule::parity_check:
    case PositionRule::missing_duplicate_string:
    case PositionRule::even_pairs:
      return 2;
    default:
      return num_symbols;
  }
}

std::size_t position_task_output_length(PositionRule rule, std::size_t n) {
  switch (rule) {
    case PositionRule::neighbour_sum:
    case PositionRule::copy_left:
      return 0;
    case PositionRule::duplicate_string:
      return 2 * n;
    case PositionRule::parity_check:
    case PositionRule::missing_duplicate_string:
    case PositionRule::even_pairs:
    case PositionRule::cycle_navigation:
      return 1;
    case PositionRule::binary_addition:
      return n + 1;
    default:
      return n;
  }
}

void PositionTaskConfig::validate() const {
  const char* where = "make_position_task";
  check_config(num_symbols >= 2 && num_symbols <= 1000, where,
               "num_symbols is " + std::to_string(num_symbols) + ", expected 2...1000");
  const std::size_t alphabet = fixed_alphabet(rule);
  check_config(alphabet == 0 || num_symbols == alphabet, where,
               "num_symbols is " + std::to_string(num_symbols) + ", expected " +
                   std::to_string(alphabet) + " (" + alphabet_note(rule) + ")");
  check_config(offset >= 1 && offset <= 64, where,
               "offset is " + std::to_string(offset) + ", expected 1...64");
  const std::size_t shortest = position_task_min_length(rule, offset);
  std::string why;
  switch (rule) {
    case PositionRule::neighbour_sum:
      why = "needs 2k + 1 with k = " + std::to_string(offset) + " for one labelled position";
      break;
    case PositionRule::copy_left:
      why = "needs k + 1 with k = " + std::to_string(offset) + " for one labelled position";
      break;
    case PositionRule::missing_duplicate_string:
      why = "needs a bit in each half";
      break;
    case PositionRule::binary_addition:
      why = "needs a bit, \"+\" and a bit";
      break;
    default:
      why = "needs one input token";
  }
  check_config(min_length >= shortest, where,
               "min_length is " + std::to_string(min_length) + ", expected >= " +
                   std::to_string(shortest) + " (" + to_string(rule) + " " + why + ")");
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

Vocabulary position_task_vocabulary(PositionRule rule, std::size_t num_symbols) {
  Vocabulary v = position_task_vocabulary(num_symbols);
  if (rule == PositionRule::missing_duplicate_string) {
    v.add(input_token(rule, kMissing));
    v.add(input_token(rule, kEmpty));
  }
  if (rule == PositionRule::binary_addition) v.add(input_token(rule, kPlus));
  if (position_task_has_outputs(rule)) v.add(kOutToken);
  return v;
}

std::vector<std::int64_t> position_task_output(PositionRule rule,
                                               const std::vector<std::int64_t>& x,
                                               std::size_t num_symbols) {
  if (!position_task_has_outputs(rule))
    throw std::invalid_argument("position_task_output: rule is " + to_string(rule) +
                                ", expected a rule with <out> placeholders (" + to_string(rule) +
                                " labels its input: use position_task_label)");
  const std::size_t n = x.size(), shortest = position_task_min_length(rule, 1);
  if (n < shortest)
    throw std::invalid_argument("position_task_output: x has " + std::to_string(n) +
                                " tokens, expected >= " + std::to_string(shortest) + " (" +
                                to_string(rule) + ")");
  switch (rule) {
    case PositionRule::reverse_string: {
      check_symbols(rule, x, num_symbols);
      return std::vector<std::int64_t>(x.rbegin(), x.rend());
    }
    case PositionRule::duplicate_string: {
      check_symbols(rule, x, num_symbols);
      std::vector<std::int64_t> y = x;
      y.insert(y.end(), x.begin(), x.end());
      return y;
    }
    case PositionRule::odds_first: {
      // x[1], x[3], ... then x[0], x[2], ... (the authors' x[1::2] + x[::2])
      check_symbols(rule, x, num_symbols);
      std::vector<std::int64_t> y;
      for (std::size_t i = 1; i < n; i += 2) y.push_back(x[i]);
      for (std::size_t i = 0; i < n; i += 2) y.push_back(x[i]);
      return y;
    }
    case PositionRule::bucket_sort: {
      check_symbols(rule, x, num_symbols);
      std::vector<std::int64_t> y = x;
      std::sort(y.begin(), y.end());
      return y;
    }
    case PositionRule::parity_check: {
      check_symbols(rule, x, 2);
      std::int64_t ones = 0;
      for (auto v : x) ones += v;
      return {ones % 2};
    }
    case PositionRule::even_pairs: {
      // the number of unequal neighbours (01 and 10) mod 2
      check_symbols(rule, x, 2);
      std::int64_t unequal = 0;
      for (std::size_t i = 0; i + 1 < n; ++i) unequal += x[i] != x[i + 1];
      return {unequal % 2};
    }
    case PositionRule::cycle_navigation: {
      // start at state 0 of a cycle of 5; action a moves by a - 1 (left, stay, right)
      check_symbols(rule, x, 3);
      std::int64_t state = 0;
      for (auto a : x) state = (state + a - 1 + 5) % 5;
      return {state};
    }
    case PositionRule::missing_duplicate_string:
      return {missing_bit(x)};
    case PositionRule::binary_addition:
      return binary_sum(x);
    default:
      return {};
  }
}

std::int64_t position_task_label(PositionRule rule, const std::vector<std::int64_t>& symbols,
                                 std::size_t p, std::size_t k, std::size_t num_symbols) {
  const std::size_t T = symbols.size();
  const std::size_t total = T + position_task_output_length(rule, T);
  if (p >= total)
    throw std::invalid_argument(
        "position_task_label: p is " + std::to_string(p) + ", expected < " + std::to_string(total) +
        (total == T ? std::string(" (the sequence length)")
                    : " (the input length " + std::to_string(T) + " + the <out>s)"));
  switch (rule) {
    case PositionRule::neighbour_sum:
      // both neighbours must exist: k <= p and p + k < T
      if (p < k || p + k >= T) return kIgnoreIndex;
      return (symbols[p - k] + symbols[p + k]) % std::int64_t(num_symbols);
    case PositionRule::copy_left:
      if (p < k) return kIgnoreIndex;
      return symbols[p - k];
    default: {
      if (p < T) return kIgnoreIndex;  // the input itself has no label
      const std::vector<std::int64_t> y = position_task_output(rule, symbols, num_symbols);
      // binary_addition: nothing after <end> is scored (the paper's accuracy mask)
      if (rule == PositionRule::binary_addition &&
          std::find(y.begin(), y.begin() + std::ptrdiff_t(p - T), kEnd) !=
              y.begin() + std::ptrdiff_t(p - T))
        return kIgnoreIndex;
      return y[p - T];
    }
  }
}

std::size_t PositionTaskDataset::num_classes() const {
  return position_task_num_classes(config.rule, config.num_symbols);
}

std::vector<std::string> PositionTaskDataset::label_names() const {
  std::vector<std::string> names;
  for (std::size_t s = 0; s < num_classes(); ++s) names.push_back(symbol_name(s));
  if (config.rule == PositionRule::binary_addition) names[std::size_t(kEnd)] = "<end>";
  return names;
}

PositionTaskDataset make_position_task(const PositionTaskConfig& config) {
  config.validate();
  PositionTaskDataset d;
  d.config = config;
  d.vocab = position_task_vocabulary(config.rule, config.num_symbols);
  Rng rng(config.seed);
  d.sequences.reserve(config.num_sequences);
  d.symbols.reserve(config.num_sequences);
  for (std::size_t n = 0; n < config.num_sequences; ++n) {
    // 1. the input length, uniform in [min_length, max_length]
    const std::size_t T = config.min_length + pick(rng, config.max_length - config.min_length + 1);
    LabelledSentence seq;
    std::vector<std::int64_t> s;
    if (!position_task_has_outputs(config.rule)) {
      // 2. the symbols, uniform in [0, V); 3. tokens and the rule's label at every position
      s.resize(T);
      for (auto& v : s) v = std::int64_t(pick(rng, config.num_symbols));
      seq.tokens.reserve(T);
      seq.labels.reserve(T);
      for (std::size_t p = 0; p < T; ++p) {
        seq.tokens.push_back(symbol_name(std::size_t(s[p])));
        seq.labels.push_back(
            position_task_label(config.rule, s, p, config.offset, config.num_symbols));
      }
    } else {
      // 2. the input x; 3. its tokens, unlabelled, then one <out> per answer class y[j]
      s = draw_input(config.rule, T, config.num_symbols, rng);
      const std::vector<std::int64_t> y = position_task_output(config.rule, s, config.num_symbols);
      seq.tokens.reserve(T + y.size());
      seq.labels.assign(T, kIgnoreIndex);
      for (auto v : s) seq.tokens.push_back(input_token(config.rule, v));
      bool ended = false;  // binary_addition: after <end>, unscored
      for (auto c : y) {
        seq.tokens.push_back(kOutToken);
        seq.labels.push_back(ended ? kIgnoreIndex : c);
        ended = ended || (config.rule == PositionRule::binary_addition && c == kEnd);
      }
    }
    for (auto l : seq.labels) d.labelled_positions += l != kIgnoreIndex;
    d.sequences.push_back(std::move(seq));
    d.symbols.push_back(std::move(s));
  }
  return d;
}

}  // namespace xenc
