// "Who did what to whom": a generated task whose labels flip when the word order flips.
//
// Sentences come from two templates over a fixed word list (no download, seeded):
//     active   the [adj] AGENT  <verb, past>        the [adj] PATIENT   "the cat chased the mouse"
//     passive  the [adj] PATIENT was <participle> by the [adj] AGENT    "the mouse was chased by
//     the cat"
// Each noun is labelled agent (0) or patient (1); every other token ("the", adjectives, the
// verb, "was", "by") gets kIgnoreIndex, so the loss and the accuracy count nouns only.
//
// Every sentence comes with its mirror (agent and patient swapped, adjectives staying with
// their nouns, same verb and voice) in the same split. The two sentences hold the same bag of
// words, so without positions the encoder (permutation-equivariant) gives each noun the same
// vector in both while its label differs: exactly one of the two is right, and the accuracy
// of a position-free model is 50% on any set made of mirrored pairs.
//
// Held out: a seeded fraction of the unordered noun pairs {a, b}. Training sentences never
// contain a held-out pair; test sentences contain only held-out pairs (each noun is seen in
// training, with other partners).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "xenc/data/batching.hpp"
#include "xenc/text/vocabulary.hpp"

namespace xenc {

enum class Role : std::int64_t { agent = 0, patient = 1 };

struct WordRolesConfig {
  std::size_t num_nouns = 24;          ///< taken from a fixed list (at most 24)
  std::size_t num_verbs = 12;          ///< taken from a fixed list (at most 12)
  std::size_t sentences_per_pair = 4;  ///< per ordered (agent, patient) pair, before mirroring
  double heldout_fraction = 0.2;       ///< share of unordered noun pairs kept for the test set
  double passive_probability = 0.5;    ///< per sentence
  double adjective_probability = 0.3;  ///< per noun phrase
  std::uint32_t seed = 0;

  /// Throws config_error naming the rule and the value.
  void validate() const;
};

/// One generated sentence (a LabelledSentence, with what it was built from).
struct RoleSentence : LabelledSentence {
  std::string agent, patient, verb;
  bool passive = false;
  std::size_t mirror = 0;  ///< index of its mirror in the same split
};

struct WordRolesDataset {
  std::vector<RoleSentence> train, test;
  std::vector<std::string> nouns, verbs, adjectives;
  std::vector<std::pair<std::string, std::string>> heldout_pairs;  ///< unordered, a < b
  Vocabulary vocab;                                                ///< every word of the task
  static std::vector<std::string> label_names() { return {"agent", "patient"}; }
};

/// Generates the dataset (the same config and seed give the same sentences everywhere).
WordRolesDataset make_word_roles(const WordRolesConfig& config);

/// The sentences as LabelledSentence (for make_batch).
std::vector<LabelledSentence> as_labelled(const std::vector<RoleSentence>& sentences);

}  // namespace xenc
