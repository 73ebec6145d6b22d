// display_width and the padding helpers (xenc/text/display_width.hpp): terminal columns from
// utf8proc's character widths. Reference: the Unicode data files (EastAsianWidth.txt: U+732B
// 猫 and U+FF21 Ａ are W/F, two columns; UnicodeData.txt: U+0301 is Mn, zero columns), which
// wcwidth() and Python's wcwidth package agree with for these code points.
#include <gtest/gtest.h>

#include <string>

#include "xenc/text/display_width.hpp"

using xenc::display_width;

TEST(DisplayWidth, AsciiCountsOneColumnPerCharacter) {
  EXPECT_EQ(display_width(""), 0u);
  EXPECT_EQ(display_width("cat"), 3u);
  EXPECT_EQ(display_width("the cat, chased"), 15u);
}

TEST(DisplayWidth, AccentedLettersTakeOneColumnNotTheirBytes) {
  EXPECT_EQ(std::string("CAFÉ").size(), 5u);  // É is two bytes
  EXPECT_EQ(display_width("CAFÉ"), 4u);
  EXPECT_EQ(display_width("CAFE\u0301"), 4u);   // E + combining acute: the mark takes 0
  EXPECT_EQ(display_width("stra\u00DFe"), 6u);  // ß
}

TEST(DisplayWidth, EastAsianWideCharactersTakeTwoColumns) {
  EXPECT_EQ(display_width("猫"), 2u);  // 3 bytes, 2 columns
  EXPECT_EQ(display_width("猫が好き"), 8u);
  EXPECT_EQ(display_width("\uFF21\uFF22"), 4u);  // full-width ＡＢ
  EXPECT_EQ(display_width("a猫b"), 4u);
}

TEST(DisplayWidth, ZeroWidthAndControlCharactersTakeNoColumn) {
  EXPECT_EQ(display_width("a\u200Bb"), 2u);  // zero width space
  EXPECT_EQ(display_width("a\u200Db"), 2u);  // zero width joiner
  EXPECT_EQ(display_width("a\tb"), 2u);      // a control character has no width of its own
}

TEST(DisplayWidth, PaddingAlignsColumnsOfMixedScripts) {
  // every cell of a column ends at the same column, whatever its bytes
  for (const std::string& word : {"cat", "CAFÉ", "猫", "猫が", "x"})
    EXPECT_EQ(display_width(xenc::pad_right(word, 6) + "|"), 7u) << word;
  EXPECT_EQ(xenc::pad_right("猫", 4), "猫  ");
  EXPECT_EQ(xenc::pad_left("CAFÉ", 6), "  CAFÉ");
  EXPECT_EQ(xenc::pad_right("toolong", 3), "toolong");  // never cut
}

TEST(DisplayWidth, InvalidUtf8IsRefusedWithTheFunctionName) {
  try {
    display_width("ab\xff");
    FAIL() << "expected xenc::encoding_error";
  } catch (const xenc::encoding_error& e) {
    EXPECT_NE(
        std::string(e.what()).find("display_width: text is not valid UTF-8: byte 0xff at offset 2"),
        std::string::npos)
        << e.what();
  }
}

// visible(): what prints nothing or acts on a terminal is written out as <U+XXXX>. The classes
// are Unicode's (UnicodeData.txt: U+001B, U+000A, U+0085 Cc; U+200B, U+00AD, U+202E, U+FEFF Cf;
// U+2028 Zl; DerivedCoreProperties.txt: U+FE0F and U+3164 Default_Ignorable_Code_Point).
TEST(Visible, InvisibleAndControlCodePointsAreWrittenOut) {
  using xenc::visible;
  EXPECT_EQ(visible("cat\u200Bchased"), "cat<U+200B>chased");
  EXPECT_EQ(visible("cat\x1B[31m"), "cat<U+001B>[31m");
  EXPECT_EQ(visible("a\nb\tc\x7F"), "a<U+000A>b<U+0009>c<U+007F>");
  EXPECT_EQ(visible("a\u0085b"), "a<U+0085>b");          // C1 next line
  EXPECT_EQ(visible("co\u00ADop"), "co<U+00AD>op");      // soft hyphen
  EXPECT_EQ(visible("\u202Etac"), "<U+202E>tac");        // right-to-left override
  EXPECT_EQ(visible("\uFEFFcat"), "<U+FEFF>cat");        // byte order mark
  EXPECT_EQ(visible("a\u2028b"), "a<U+2028>b");          // line separator
  EXPECT_EQ(visible("\u2764\uFE0F"), "\u2764<U+FE0F>");  // variation selector 16
  EXPECT_EQ(visible("\u3164"), "<U+3164>");              // Hangul filler
}

TEST(Visible, EverythingThatPrintsIsKeptAsTyped) {
  using xenc::visible;
  EXPECT_EQ(visible(""), "");
  EXPECT_EQ(visible("the cat chased the mouse"), "the cat chased the mouse");
  EXPECT_EQ(visible("CAFE\u0301 猫 \uFF21 <U+200B>"), "CAFE\u0301 猫 \uFF21 <U+200B>");
}

TEST(Visible, BytesThatAreNotUtf8AreWrittenOutAndNothingThrows) {
  EXPECT_EQ(xenc::visible("a\xFF"
                          "b"),
            "a<0xFF>b");
  EXPECT_EQ(xenc::visible("\xC3"), "<0xC3>");                      // a lead byte cut off
  EXPECT_EQ(xenc::visible("\xED\xA0\x80"), "<0xED><0xA0><0x80>");  // a UTF-16 surrogate
}
