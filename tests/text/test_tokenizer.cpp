// The word tokenizer: case-folded (Unicode), whitespace dropped, punctuation marks and symbols
// as tokens of their own, invalid UTF-8 refused with the byte offset.
#include <gtest/gtest.h>

#include "xenc/text/tokenizer.hpp"
#include "xenc/text/vocabulary.hpp"

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

TEST(Tokenizer, KeepsUtf8LettersInsideWords) {
  EXPECT_EQ(tokenize("Café au lait"), (Tokens{"café", "au", "lait"}));
}

// Reference: Python's unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", s).casefold())
// gives the folded forms below, and unicodedata.category gives the classes (Python 3.11,
// Unicode 14; the code points used here are the same in utf8proc's Unicode 15).
TEST(TokenizerUnicode, CaseFoldingMakesUpperAndLowerCaseOneToken) {
  EXPECT_EQ(tokenize("CAFÉ"), (Tokens{"café"}));
  EXPECT_EQ(tokenize("CAFÉ"), tokenize("café"));
  EXPECT_EQ(tokenize("Cafe\u0301"), (Tokens{"café"}));  // e + combining acute -> é (NFC)
  EXPECT_EQ(tokenize("Straße STRASSE"), (Tokens{"strasse", "strasse"}));  // full folding: ß -> ss
  EXPECT_EQ(tokenize("ΣΊΣΥΦΟΣ"), (Tokens{"σίσυφοσ"}));
  EXPECT_EQ(tokenize("\uFB01ne \uFF21\uFF22\uFF23"),
            (Tokens{"fine", "abc"}));  // ligature, full width (NFKC)
  EXPECT_EQ(xenc::fold_case("CAFÉ"), "café");
  EXPECT_EQ(tokenize("x\u00ADy"), (Tokens{"xy"}));  // soft hyphen: default-ignorable, removed
}

// Default-ignorable code points (DerivedCoreProperties.txt, Default_Ignorable_Code_Point;
// utf8proc's `ignorable`) never reach a token. U+200B ZERO WIDTH SPACE (line-break class ZW in
// LineBreak.txt) is a word break: it separates like a space instead of joining the two words.
TEST(TokenizerUnicode, ZeroWidthSpaceSeparatesOtherIgnorablesAreDropped) {
  EXPECT_EQ(tokenize("cat\u200Bchased"), (Tokens{"cat", "chased"}));
  EXPECT_EQ(tokenize("The\u200Bcat chased\u200B\u200Bthe mouse"),
            tokenize("the cat chased the mouse"));
  EXPECT_EQ(tokenize("\uFEFFcat"), (Tokens{"cat"}));              // BOM (zero width no-break space)
  EXPECT_EQ(tokenize("co\u00ADoperate"), (Tokens{"cooperate"}));  // soft hyphen
  EXPECT_EQ(tokenize("a\u200Db a\u200Cb a\u2060b"),
            (Tokens{"ab", "ab", "ab"}));                // ZWJ, ZWNJ, word joiner
  EXPECT_EQ(tokenize("x\uFE0Fy"), (Tokens{"xy"}));      // variation selector 16
  EXPECT_TRUE(tokenize("\u200B\u200D\uFEFF").empty());  // nothing visible, no token
}

TEST(TokenizerUnicode, DashesAndOtherPunctuationSplitWords) {
  // The em dash (U+2014, category Pd) is punctuation: "cat—chased" is three tokens, the same
  // as "cat - chased" with an ASCII hyphen-minus (also Pd) or "cat — chased".
  EXPECT_EQ(tokenize("cat\u2014chased"), (Tokens{"cat", "\u2014", "chased"}));
  EXPECT_EQ(tokenize("Cat \u2014 chased"), tokenize("cat\u2014chased"));
  EXPECT_EQ(tokenize("cat-chased"), (Tokens{"cat", "-", "chased"}));
  EXPECT_EQ(tokenize("\u00ABoui\u00BB"), (Tokens{"\u00AB", "oui", "\u00BB"}));  // « » (Pi, Pf)
  EXPECT_EQ(tokenize("5\u20AC+x"), (Tokens{"5", "\u20AC", "+", "x"}));          // € (Sc), + (Sm)
  EXPECT_EQ(tokenize("hi\U0001F600!"), (Tokens{"hi", "\U0001F600", "!"}));      // emoji (So)
  EXPECT_EQ(tokenize("snake_case"), (Tokens{"snake", "_", "case"}));            // _ (Pc), as before
}

TEST(TokenizerUnicode, UnicodeSpacesSeparateDigitsAndMarksStayInWords) {
  EXPECT_EQ(tokenize("a\u00A0b\u3000c\u2003d"),
            (Tokens{"a", "b", "c", "d"}));  // no-break, ideographic, em space
  EXPECT_EQ(tokenize("x2 \u0661\u0662"),
            (Tokens{"x2", "\u0661\u0662"}));  // Arabic-Indic digits (Nd)
  EXPECT_EQ(tokenize("\u0928\u092E\u0938\u094D\u0924\u0947"),
            (Tokens{"\u0928\u092E\u0938\u094D\u0924\u0947"}));  // नमस्ते: virama, vowel sign (Mn/Mc)
}

TEST(TokenizerUnicode, AsciiBehaviourUnchanged) {
  // Every printable ASCII punctuation or symbol character is a token of its own (C isspace /
  // ispunct, the tokenizer's rule before Unicode).
  const std::string punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
  Tokens expected;
  for (char c : punct) expected.emplace_back(1, c);
  EXPECT_EQ(tokenize(punct), expected);
}

TEST(TokenizerUnicode, InvalidUtf8IsRefusedWithTheByteOffset) {
  using xenc::encoding_error;
  auto expect_offset = [](const std::string& text, const std::string& part) {
    try {
      tokenize(text);
      ADD_FAILURE() << "no error for " << text;
    } catch (const encoding_error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("tokenize: text is not valid UTF-8"), std::string::npos)
          << e.what();
    }
  };
  expect_offset("cat \xff", "byte 0xff at offset 4");
  expect_offset("ab\x80", "byte 0x80 at offset 2");         // a lone continuation byte
  expect_offset("caf\xc3", "byte 0xc3 at offset 3");        // truncated 2-byte sequence
  expect_offset("\xc0\xaf", "byte 0xc0 at offset 0");       // overlong "/"
  expect_offset("x\xed\xa0\x80", "byte 0xed at offset 1");  // a UTF-16 surrogate
  EXPECT_THROW(xenc::fold_case("\xff"), encoding_error);
  // encoding_error is an invalid_argument, like every input error.
  EXPECT_THROW(tokenize("\xfe"), std::invalid_argument);
}

TEST(VocabularyUnicode, FoldedTokensAndInvalidTokens) {
  const auto vocab = xenc::Vocabulary::from_texts({"CAFÉ au lait", "café noir"});
  EXPECT_EQ(vocab.size(), 2u + 4u);  // <pad>, <unk>, café, au, lait, noir
  EXPECT_EQ(vocab.id("café"), 2);
  const auto batch = vocab.encode_batch({"Café", "CAFÉ"});
  EXPECT_EQ(batch.ids(0, 0), 2);
  EXPECT_EQ(batch.ids(1, 0), 2);
  xenc::Vocabulary v;
  EXPECT_THROW(v.add("bad\xff"), xenc::encoding_error);
  EXPECT_EQ(v.size(), 2u);
  EXPECT_THROW(vocab.encode_batch({"ok", "bad\xff"}), xenc::encoding_error);
}
