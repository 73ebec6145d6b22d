// Vocabulary: <pad> = 0, <unk> = 1, unknown words -> <unk>, padded batches with their mask.
#include <gtest/gtest.h>

#include "xenc/text/vocabulary.hpp"

using xenc::Vocabulary;

TEST(Vocabulary, SpecialTokensComeFirstThenWordsInOrderOfAppearance) {
  const Vocabulary v = Vocabulary::from_texts({"The cat chased the mouse.", "The mouse ran!"});
  EXPECT_EQ(v.token(0), "<pad>");
  EXPECT_EQ(v.token(1), "<unk>");
  EXPECT_EQ(v.id("the"), 2);
  EXPECT_EQ(v.id("cat"), 3);
  EXPECT_EQ(v.id("chased"), 4);
  EXPECT_EQ(v.id("mouse"), 5);
  EXPECT_EQ(v.id("."), 6);
  EXPECT_EQ(v.id("ran"), 7);
  EXPECT_EQ(v.id("!"), 8);
  EXPECT_EQ(v.size(), 9u);
  EXPECT_TRUE(v.contains("ran"));
}

TEST(Vocabulary, UnknownWordsMapToUnkNeverACrash) {
  const Vocabulary v = Vocabulary::from_tokens({"cat", "mouse"});
  EXPECT_EQ(v.id("dog"), Vocabulary::unk_id);
  EXPECT_FALSE(v.contains("dog"));
  const auto ids = v.encode({"cat", "dog", "mouse"});
  EXPECT_EQ(ids(0), 2);
  EXPECT_EQ(ids(1), 1);
  EXPECT_EQ(ids(2), 3);
  EXPECT_THROW(v.token(4), xenc::index_error);
  EXPECT_THROW(v.token(-1), xenc::index_error);
}

TEST(Vocabulary, AddIsIdempotent) {
  Vocabulary v;
  EXPECT_EQ(v.size(), 2u);
  EXPECT_EQ(v.add("cat"), 2);
  EXPECT_EQ(v.add("cat"), 2);
  EXPECT_EQ(v.add("<pad>"), 0);
  EXPECT_EQ(v.size(), 3u);
}

// "cat chased mouse" (3 tokens) and "Mouse!" (2 tokens) -> T = 3; padding mask true = padding.
TEST(Vocabulary, EncodeBatchPadsAndMarksPaddingTrue) {
  const Vocabulary v = Vocabulary::from_texts({"cat chased mouse"});
  const auto batch = v.encode_batch({"cat chased mouse", "Mouse zebra"});
  ASSERT_EQ(batch.ids.shape(0), 2u);
  ASSERT_EQ(batch.ids.shape(1), 3u);
  EXPECT_EQ(batch.ids(0, 0), v.id("cat"));
  EXPECT_EQ(batch.ids(1, 0), v.id("mouse"));
  EXPECT_EQ(batch.ids(1, 1), Vocabulary::unk_id);  // zebra
  EXPECT_EQ(batch.ids(1, 2), Vocabulary::pad_id);
  for (std::size_t t = 0; t < 3; ++t) EXPECT_FALSE(batch.padding_mask(0, t));
  EXPECT_FALSE(batch.padding_mask(1, 0));
  EXPECT_FALSE(batch.padding_mask(1, 1));
  EXPECT_TRUE(batch.padding_mask(1, 2));
  EXPECT_EQ(batch.tokens[1], (std::vector<std::string>{"mouse", "zebra"}));
  EXPECT_THROW(v.encode_batch({}), std::invalid_argument);
}

// A sentence longer than the limit is refused before the [B, T] batch exists (issue 17: a
// 131,000-token sentence reached the model and ended in std::bad_alloc): at kMaxSequenceLength
// (2048) by default, at the caller's max_length when given; the message names the sentence,
// its length and the limit.
TEST(Vocabulary, EncodeBatchRefusesASentenceOverMaxLength) {
  const Vocabulary v = Vocabulary::from_texts({"a"});
  std::string longest, over;
  for (std::size_t i = 0; i < xenc::kMaxSequenceLength; ++i) longest += i ? " a" : "a";
  over = longest + " a";
  EXPECT_EQ(v.encode_batch({"a", longest}).ids.shape(1), 2048u);
  try {
    v.encode_batch({"a", over});
    FAIL() << "2049 tokens were encoded";
  } catch (const xenc::shape_error& e) {
    EXPECT_STREQ(
        e.what(),
        "Vocabulary.encode_batch: texts[1] has 2049 tokens, expected at most max_length = 2048 "
        "(kMaxSequenceLength; pass a larger max_length to encode it)");
  }
  EXPECT_EQ(v.encode_batch({over}, 4096).ids.shape(1), 2049u);  // the caller raises it
  try {
    v.encode_batch({"a a a"}, 2);
    FAIL() << "3 tokens were encoded at max_length 2";
  } catch (const xenc::shape_error& e) {
    EXPECT_STREQ(e.what(),
                 "Vocabulary.encode_batch: texts[0] has 3 tokens, expected at most max_length = 2 "
                 "(the caller's limit; pass a larger max_length to encode it)");
  }
}
