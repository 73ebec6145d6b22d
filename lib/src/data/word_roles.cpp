// The agent/patient task: templates, mirrors and held-out noun pairs.
#include "xenc/data/word_roles.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "xenc/core/error.hpp"
#include "xenc/core/random.hpp"

namespace xenc {

namespace {
const std::vector<std::string> kNouns = {"cat",   "mouse", "dog",   "fox",   "bird",   "horse",
                                         "lion",  "tiger", "bear",  "wolf",  "rabbit", "owl",
                                         "snake", "frog",  "duck",  "goat",  "sheep",  "cow",
                                         "pig",   "deer",  "eagle", "shark", "whale",  "bee"};
// {past tense, past participle}
const std::vector<std::pair<std::string, std::string>> kVerbs = {
    {"chased", "chased"}, {"saw", "seen"},      {"bit", "bitten"},      {"followed", "followed"},
    {"helped", "helped"}, {"pushed", "pushed"}, {"watched", "watched"}, {"called", "called"},
    {"fed", "fed"},       {"caught", "caught"}, {"kicked", "kicked"},   {"found", "found"}};
const std::vector<std::string> kAdjectives = {"big", "small", "old", "young", "quick", "lazy"};

// A uniform index in [0, n) from one 32-bit draw.
std::size_t pick(Rng& rng, std::size_t n) {
  return static_cast<std::size_t>((std::uint64_t(rng.next_u32()) * n) >> 32);
}

// Noun phrase "the [adj] noun", with the noun's label at the last token.
void noun_phrase(RoleSentence& s, const std::string& adj, const std::string& noun, Role role) {
  s.tokens.push_back("the");
  s.labels.push_back(kIgnoreIndex);
  if (!adj.empty()) {
    s.tokens.push_back(adj);
    s.labels.push_back(kIgnoreIndex);
  }
  s.tokens.push_back(noun);
  s.labels.push_back(static_cast<std::int64_t>(role));
}

void word(RoleSentence& s, const std::string& w) {
  s.tokens.push_back(w);
  s.labels.push_back(kIgnoreIndex);
}

RoleSentence build(const std::string& agent, const std::string& agent_adj,
                   const std::string& patient, const std::string& patient_adj,
                   const std::pair<std::string, std::string>& verb, bool passive) {
  RoleSentence s;
  s.agent = agent;
  s.patient = patient;
  s.verb = verb.first;
  s.passive = passive;
  if (!passive) {  // the [adj] AGENT verb the [adj] PATIENT
    noun_phrase(s, agent_adj, agent, Role::agent);
    word(s, verb.first);
    noun_phrase(s, patient_adj, patient, Role::patient);
  } else {  // the [adj] PATIENT was participle by the [adj] AGENT
    noun_phrase(s, patient_adj, patient, Role::patient);
    word(s, "was");
    word(s, verb.second);
    word(s, "by");
    noun_phrase(s, agent_adj, agent, Role::agent);
  }
  return s;
}
}  // namespace

void WordRolesConfig::validate() const {
  const char* where = "make_word_roles";
  check_config(num_nouns >= 3 && num_nouns <= kNouns.size(), where,
               "num_nouns is " + std::to_string(num_nouns) + ", expected 3..." +
                   std::to_string(kNouns.size()));
  check_config(num_verbs >= 1 && num_verbs <= kVerbs.size(), where,
               "num_verbs is " + std::to_string(num_verbs) + ", expected 1..." +
                   std::to_string(kVerbs.size()));
  check_config(
      sentences_per_pair >= 1 && sentences_per_pair <= 1000, where,
      "sentences_per_pair is " + std::to_string(sentences_per_pair) + ", expected 1...1000");
  check_config(heldout_fraction > 0.0 && heldout_fraction < 1.0, where,
               "heldout_fraction is " + std::to_string(heldout_fraction) + ", expected in (0, 1)");
  check_config(
      passive_probability >= 0.0 && passive_probability <= 1.0, where,
      "passive_probability is " + std::to_string(passive_probability) + ", expected in [0, 1]");
  check_config(
      adjective_probability >= 0.0 && adjective_probability <= 1.0, where,
      "adjective_probability is " + std::to_string(adjective_probability) + ", expected in [0, 1]");
}

WordRolesDataset make_word_roles(const WordRolesConfig& config) {
  config.validate();
  Rng rng(config.seed);
  WordRolesDataset d;
  d.nouns.assign(kNouns.begin(), kNouns.begin() + config.num_nouns);
  const std::vector<std::pair<std::string, std::string>> verbs(kVerbs.begin(),
                                                               kVerbs.begin() + config.num_verbs);
  for (const auto& v : verbs) d.verbs.push_back(v.first);
  d.adjectives = kAdjectives;

  // 1. Unordered noun pairs; a seeded share is held out (at least one; every noun must keep a
  //    training partner, which holds as long as fewer than all its pairs are held out).
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t a = 0; a < d.nouns.size(); ++a)
    for (std::size_t b = a + 1; b < d.nouns.size(); ++b) pairs.emplace_back(a, b);
  const std::vector<std::size_t> order = shuffled_indices(pairs.size(), rng);
  const std::size_t n_held = std::max<std::size_t>(
      1, static_cast<std::size_t>(config.heldout_fraction * double(pairs.size())));
  std::set<std::size_t> held(order.begin(), order.begin() + n_held);
  // a noun with every pair held out would never be seen in training: give one pair back
  for (std::size_t n = 0; n < d.nouns.size(); ++n) {
    bool seen = false;
    for (std::size_t k = 0; k < pairs.size() && !seen; ++k)
      seen = !held.count(k) && (pairs[k].first == n || pairs[k].second == n);
    if (!seen)
      for (std::size_t k = 0; k < pairs.size(); ++k)
        if (held.count(k) && (pairs[k].first == n || pairs[k].second == n)) {
          held.erase(k);
          break;
        }
  }

  // 2. For each ordered pair (agent a, patient b): sentences_per_pair sentences, each followed by
  //    its mirror (b does it to a, same verb, voice and adjectives with their nouns).
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    auto& split = held.count(k) ? d.test : d.train;
    if (held.count(k))
      d.heldout_pairs.emplace_back(d.nouns[pairs[k].first], d.nouns[pairs[k].second]);
    for (int dir = 0; dir < 2; ++dir) {
      const std::string& a = d.nouns[dir == 0 ? pairs[k].first : pairs[k].second];
      const std::string& b = d.nouns[dir == 0 ? pairs[k].second : pairs[k].first];
      for (std::size_t s = 0; s < config.sentences_per_pair; ++s) {
        const auto& verb = verbs[pick(rng, verbs.size())];
        const bool passive = rng.uniform() < config.passive_probability;
        const std::string adj_a = rng.uniform() < config.adjective_probability
                                      ? kAdjectives[pick(rng, kAdjectives.size())]
                                      : "";
        const std::string adj_b = rng.uniform() < config.adjective_probability
                                      ? kAdjectives[pick(rng, kAdjectives.size())]
                                      : "";
        RoleSentence one = build(a, adj_a, b, adj_b, verb, passive);
        RoleSentence mirror = build(b, adj_b, a, adj_a, verb, passive);
        one.mirror = split.size() + 1;
        mirror.mirror = split.size();
        split.push_back(std::move(one));
        split.push_back(std::move(mirror));
      }
    }
  }

  // 3. The vocabulary: <pad>, <unk>, then every word of the task in a fixed order.
  for (const char* w : {"the", "was", "by"}) d.vocab.add(w);
  for (const auto& n : d.nouns) d.vocab.add(n);
  for (const auto& v : verbs) {
    d.vocab.add(v.first);
    d.vocab.add(v.second);
  }
  for (const auto& a : d.adjectives) d.vocab.add(a);
  return d;
}

std::vector<LabelledSentence> as_labelled(const std::vector<RoleSentence>& sentences) {
  return std::vector<LabelledSentence>(sentences.begin(), sentences.end());
}

}  // namespace xenc
