// xenc-word-order's experiment and narration without running the program
// (apps/word_order/experiment.hpp, report.hpp): the pairing of repeated words, the narration of
// hand-made runs (degenerate ones included) and of small real runs, and the advice of its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "word_order/experiment.hpp"
#include "word_order/report.hpp"

namespace {

using word_order::Context;
using word_order::Match;
using word_order::Run;
using word_order::Stage;

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// A run whose every cosine (each word, the sentence) at every stage is `c`.
Run flat_run(const std::string& scheme, std::size_t words, double c, bool in_attention = false) {
  Run r;
  r.scheme = scheme;
  r.in_attention = in_attention;
  for (const char* name : {"token embedding", "+ positions", "layer 1", "layer 2"})
    r.stages.push_back(Stage{name, std::vector<double>(words, c), c});
  return r;
}

// The text report with its line wrapping undone (every run of spaces and newlines is one space).
std::string text_of(const word_order::Result& r) {
  std::ostringstream out;
  word_order::print_text(out, r);
  std::string flat;
  for (char c : out.str()) {
    const bool space = c == ' ' || c == '\n';
    if (!(space && !flat.empty() && flat.back() == ' ')) flat += space ? ' ' : c;
  }
  return flat;
}

word_order::Options options(const std::string& a, const std::string& b,
                            const std::string& position) {
  word_order::Options o;
  o.a = a;
  o.b = b;
  o.position = position;
  return o;
}

}  // namespace

// ---- the narration of hand-made runs --------------------------------------------------------

// The same sentence twice: a degenerate case, said to be one, whatever the scheme.
TEST(WordOrderNarration, IdenticalSentencesAreDegenerate) {
  Context ctx;
  ctx.matches = {{"cat", 0, 0}};
  ctx.permutation = ctx.identical = true;
  ctx.d_model = 16;
  for (const char* scheme : {"none", "sinusoidal", "alibi"}) {
    const std::string t = word_order::explain(flat_run(scheme, 1, 1.0), ctx);
    EXPECT_TRUE(has(t, "Every cosine is 1 (exactly)")) << t;
    EXPECT_TRUE(has(t, "A and B are the same sentence")) << t;
    EXPECT_FALSE(has(t, "differ")) << t;
  }
}

// Without positions a permutation gives 1 everywhere; a deviation above print precision is
// reported as such, never as "1".
TEST(WordOrderNarration, NoPositionsSaysWhetherEveryCosineIsOne) {
  Context ctx;
  ctx.matches = {{"cat", 0, 2}, {"chased", 1, 1}, {"mouse", 2, 0}};
  ctx.permutation = true;
  ctx.d_model = 16;
  const std::string one = word_order::explain(flat_run("none", 3, 1.0 - 1e-8), ctx);
  EXPECT_TRUE(has(one, "Every cosine is 1 (largest deviation 1.0e-08, float rounding)")) << one;
  EXPECT_TRUE(has(one, "permutation-equivariant")) << one;
  const std::string not_one = word_order::explain(flat_run("none", 3, 0.9), ctx);
  EXPECT_TRUE(has(not_one, "Not every cosine is 1 here (largest deviation 1.0e-01)")) << not_one;
}

// Undefined cosines (zero vectors, D = 1) are named by stage, with the D = 1 reason.
TEST(WordOrderNarration, UndefinedCosinesAreNamed) {
  Context ctx;
  ctx.matches = {{"cat", 0, 1}, {"dog", 1, 0}};
  ctx.permutation = true;
  ctx.d_model = 1;
  word_order::Run r = flat_run("learned", 2, 1.0);
  r.stages[2].token = {NAN, NAN};
  r.stages[2].sentence = NAN;
  const std::string t = word_order::explain(r, ctx);
  EXPECT_TRUE(has(t, "The cosines marked n/a (layer 1) are undefined")) << t;
  EXPECT_TRUE(has(t, "D = 1 is degenerate")) << t;
}

// A reversal is named as one (issue #17), in a note above the tables, whatever the scheme.
TEST(WordOrderNarration, AReversalIsNamed) {
  word_order::Result r;
  r.options = options("cat chased mouse", "mouse chased cat", "sinusoidal");
  r.tokens_a = {"cat", "chased", "mouse"};
  r.tokens_b = {"mouse", "chased", "cat"};
  r.matches = {{"cat", 0, 2}, {"chased", 1, 1}, {"mouse", 2, 0}};
  r.permutation = r.reversed = true;
  r.runs = {flat_run("none", 3, 1.0), flat_run("sinusoidal", 3, 0.5)};
  const std::string t = text_of(r);
  EXPECT_TRUE(has(t, "Note: B is A reversed: A's first word is B's last")) << t;
  r.reversed = false;
  EXPECT_FALSE(has(text_of(r), "reversed")) << text_of(r);
}

// ---- explain's rules, one at a time -------------------------------------------------------

namespace rules = word_order::explain_rules;

// "cat chased mouse" / "mouse chased cat": cat and mouse moved, chased stayed at position 1.
Context swap_context() {
  Context ctx;
  ctx.matches = {{"cat", 0, 2}, {"chased", 1, 1}, {"mouse", 2, 0}};
  ctx.permutation = true;
  ctx.d_model = 16;
  return ctx;
}

TEST(WordOrderRules, DegenerateSaysNothingForAnOrdinaryRun) {
  EXPECT_EQ(rules::degenerate(flat_run("sinusoidal", 3, 0.5), swap_context()), "");
  EXPECT_TRUE(
      has(rules::degenerate(flat_run("none", 3, 1.0), swap_context()), "permutation-equivariant"));
}

TEST(WordOrderRules, MovedWordsSeparateAtTheInputWithAddedPositions) {
  word_order::Run r = flat_run("sinusoidal", 3, 1.0);
  r.stages[1].token = {0.25, 1.0, 0.5};  // cat and mouse moved; chased (1.0) did not
  EXPECT_EQ(rules::moved_words(r, swap_context()),
            "With sinusoidal positions the words at different positions in A and B differ as "
            "soon as positions are added: \"cat\" (0.250000) and \"mouse\" (0.500000).");
  r.stages[1].token = {0.25, 1.0, 1.0};  // mouse's cosine still 1
  EXPECT_TRUE(has(rules::moved_words(r, swap_context()),
                  " \"mouse\" (1.000000) moved, but its cosine after adding positions still "
                  "prints as 1."));
}

TEST(WordOrderRules, MovedWordsSeparateOnlyInsideAttentionWithRope) {
  word_order::Run r = flat_run("rope", 3, 1.0, true);
  r.stages[2].token = {0.75, 1.0, 0.5};
  const std::string t = rules::moved_words(r, swap_context());
  EXPECT_TRUE(has(t,
                  "the words that moved, \"cat\" (1.000000) and \"mouse\" (1.000000), are "
                  "still identical there."))
      << t;
  EXPECT_TRUE(has(t,
                  " The words separate only inside attention: after layer 1 \"cat\" "
                  "(0.750000) and \"mouse\" (0.500000) differ."))
      << t;
}

TEST(WordOrderRules, FixedWordChangesOnlyThroughAttention) {
  word_order::Run r = flat_run("sinusoidal", 3, 1.0);
  r.stages[2].token = {0.5, 0.9, 0.5};  // chased (position 1 in both) differs after layer 1
  const std::string t = rules::fixed_words(r, swap_context());
  EXPECT_TRUE(has(t,
                  " \"chased\" sits at the same position in both sentences, so its input is "
                  "identical (cosine 1)."))
      << t;
  EXPECT_TRUE(has(t, "After layer 1 \"chased\" (0.900000) differs, and only through attention"))
      << t;
  Context not_permutation = swap_context();
  not_permutation.permutation = false;
  EXPECT_EQ(rules::fixed_words(r, not_permutation), "");
}

TEST(WordOrderRules, PooledInputIsIdenticalInAPermutation) {
  word_order::Run r = flat_run("sinusoidal", 3, 1.0);
  r.stages[2].sentence = 0.8;
  r.stages[3].sentence = 0.7;
  const std::string t = rules::pooled_permutation(r, swap_context());
  EXPECT_TRUE(has(t, " The mean-pooled input is identical (1.000000): averaging is linear")) << t;
  EXPECT_TRUE(has(t, "here they separate in layer 1 (0.800000), 0.700000 after layer 2.")) << t;
  Context other = swap_context();
  other.permutation = false;
  EXPECT_EQ(rules::pooled_permutation(r, other), "");
}

TEST(WordOrderRules, NotAPermutationSeesOtherNeighbours) {
  Context ctx;
  ctx.matches = {{"chased", 1, 1}};
  ctx.d_model = 16;
  word_order::Run r = flat_run("none", 1, 1.0);
  r.stages[2].token = {0.6};
  r.stages[0].sentence = 0.4;
  const std::string t = rules::not_permutation(r, ctx);
  EXPECT_TRUE(has(t, "even without positions \"chased\" (0.600000) differs after layer 1")) << t;
  EXPECT_TRUE(has(t, "so it is below 1 from the token embedding on (0.400000).")) << t;
}

TEST(WordOrderRules, SmallDIsDegenerate) {
  Context ctx;
  ctx.d_model = 2;
  EXPECT_TRUE(has(rules::small_d(ctx), " D = 2 is degenerate: layer normalisation removes"));
  ctx.d_model = 1;
  EXPECT_TRUE(has(rules::small_d(ctx), " D = 1 is degenerate"));
  ctx.d_model = 3;
  EXPECT_EQ(rules::small_d(ctx), "");
}

// ---- small real runs (a 16-dimensional random encoder: milliseconds) ------------------------

// Issue #17: "the cat chased the mouse" / "mouse the chased cat the" is a reversal with a
// repeated word. Matched by the permutation, the first "the" (A's position 0) is B's last
// (position 4), so alibi's encoder, which cannot tell a sentence from its reverse, gives 1
// everywhere, and the narration names the reversal.
TEST(WordOrderExperiment, RepeatedWordsAreMatchedByTheReversal) {
  const auto r = word_order::run_experiment(
      options("the cat chased the mouse", "mouse the chased cat the", "alibi"));
  ASSERT_TRUE(r.reversed);
  ASSERT_EQ(r.matches.size(), 5u);
  for (const Match& m : r.matches) EXPECT_EQ(m.pos_b, 4 - m.pos_a) << m.key;
  const std::string t = text_of(r);
  EXPECT_TRUE(has(t, "B is A reversed")) << t;
  EXPECT_FALSE(has(t, "Not every cosine is 1")) << t;
  EXPECT_TRUE(has(t, "alibi cannot tell a sentence from its reverse")) << t;
}

// A repeated word that keeps its place is matched with itself ("the" at 0 and 3 in both), not
// by occurrence order, when the other words move.
TEST(WordOrderExperiment, RepeatedWordsKeepTheirPlaceWhenTheyCan) {
  const auto r = word_order::run_experiment(
      options("the dog bit the man", "the man bit the dog", "sinusoidal"));
  for (const Match& m : r.matches)
    if (m.key == "the" || m.key == "the#2" || m.key == "bit") EXPECT_EQ(m.pos_a, m.pos_b) << m.key;
  // "the" is at 0 and 2 in A, at 2 and 3 in B: the one at 2 did not move and is paired with
  // itself (by occurrence order it would be paired with B's position 3)
  const auto s = word_order::run_experiment(options("the a the b", "a b the the", "none"));
  bool seen = false;
  for (const Match& m : s.matches)
    if (m.pos_a == 2) {
      EXPECT_EQ(m.pos_b, 2u) << m.key;
      seen = true;
    }
  EXPECT_TRUE(seen);
}

// One shared word is "1 shared word", not "1 shared words" (issue #17).
TEST(WordOrderExperiment, OneSharedWordIsSingular) {
  const std::string t =
      text_of(word_order::run_experiment(options("cat sat", "dog sat", "sinusoidal")));
  EXPECT_TRUE(has(t, "the 1 shared word only")) << t;
  EXPECT_FALSE(has(t, "1 shared words")) << t;
  const std::string two =
      text_of(word_order::run_experiment(options("cat sat down", "dog sat down", "none")));
  EXPECT_TRUE(has(two, "the 2 shared words only")) << two;
}

// ---- the advice of an error names the option that is the cause (issue #17) -----------------

// --d-model 1 with sinusoidal positions: the scheme needs an even D; the message suggests
// --position learned (which works with D = 1) besides an even --d-model.
TEST(WordOrderExperiment, OddDimensionSuggestsLearnedPositions) {
  word_order::Options o = options("cat chased mouse", "mouse chased cat", "sinusoidal");
  o.d_model = 1;
  o.heads = 1;
  try {
    word_order::run_experiment(o);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(has(e.what(), "--position learned")) << e.what();
    EXPECT_TRUE(has(e.what(), "--d-model")) << e.what();
  }
}

// A sentence too long for the memory limit: the advice names the sentence length, not
// --d-model (the model is the default, small one).
TEST(WordOrderExperiment, LongSentenceAdviceNamesTheLength) {
  std::string a;
  for (int i = 0; i < 3000; ++i) a += (i ? " w" : "w") + std::to_string(i);
  word_order::Options o = options(a, a, "none");
  o.heads = 8;  // 8 attention maps of 3000 x 3000 per layer and sentence
  try {
    word_order::run_experiment(o);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(has(e.what(), "T = 3000")) << e.what();
    EXPECT_TRUE(has(e.what(), "shorter sentences")) << e.what();
    EXPECT_FALSE(has(e.what(), "smaller --d-model")) << e.what();
  }
}

// A model too large whatever the sentence: the advice names the model options.
TEST(WordOrderExperiment, LargeModelAdviceNamesTheModelOptions) {
  word_order::Options o = options("cat chased mouse", "mouse chased cat", "none");
  o.d_model = 4096;
  o.layers = 48;
  o.ff = 65536;
  try {
    word_order::run_experiment(o);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(has(e.what(), "smaller --d-model, --layers or --ff")) << e.what();
  }
}

// ---- what was typed, shown as typed --------------------------------------------------------

// The A and B lines echo the sentences with every invisible or terminal-controlling code point
// written out, so a zero-width space that splits two words (the tokenizer reads it as a space)
// can be seen, and an escape sequence cannot colour or move the terminal.
TEST(WordOrderReport, TheEchoedSentencesShowWhatIsInvisible) {
  const auto r = word_order::run_experiment(
      options("the cat\u200Bchased the mouse", "the mouse chased the\x1B[31m cat", "none"));
  std::ostringstream out;
  word_order::print_text(out, r);
  const std::string t = out.str();
  EXPECT_TRUE(has(t, "A: \"the cat<U+200B>chased the mouse\"\n")) << t;
  EXPECT_TRUE(has(t, "B: \"the mouse chased the<U+001B>[31m cat\"\n")) << t;
  EXPECT_FALSE(has(t, "\u200B")) << t;
  EXPECT_FALSE(has(t, "\x1B")) << t;
  EXPECT_EQ(r.tokens_a.size(), 5u);  // cat and chased are two words
}

// A sentence of invisible characters only has no words; the error shows what it did hold.
TEST(WordOrderExperiment, AnInvisibleSentenceIsShownInTheError) {
  try {
    word_order::run_experiment(options("\u200B\u200D", "mouse chased cat", "none"));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(has(e.what(), "--a is empty: sentence A has no words (got \"<U+200B><U+200D>\")"))
        << e.what();
  }
}
