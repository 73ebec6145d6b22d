// The word tokenizer: lower-case, whitespace dropped, punctuation marks as tokens of their own.
#include <gtest/gtest.h>

#include "xenc/text/tokenizer.hpp"

using xenc::tokenize;
using Tokens = std::vector<std::string>;

TEST(Tokenizer, LowerCasesAndSplitsPunctuation) {
  EXPECT_EQ(tokenize("The cat, chased the mouse!"),
            (Tokens{"the", "cat", ",", "chased", "the", "mouse", "!"}));
  EXPECT_EQ(tokenize("  Mouse   CHASED\tcat.\n"), (Tokens{"mouse", "chased", "cat", "."}));
  EXPECT_EQ(tokenize("don't stop...now"), (Tokens{"don", "'", "t", "stop", ".", ".", ".", "now"}));
}

TEST(Tokenizer, EmptyAndWhitespaceOnlyGiveNoTokens) {
  EXPECT_TRUE(tokenize("").empty());
  EXPECT_TRUE(tokenize(" \t\n ").empty());
}

TEST(Tokenizer, KeepsUtf8BytesInsideWords) {
  EXPECT_EQ(tokenize("Café au lait"), (Tokens{"café", "au", "lait"}));
}
