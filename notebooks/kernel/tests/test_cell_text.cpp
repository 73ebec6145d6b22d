// cell_text.cpp reads a cell's text without clang: where its comments and literals end, where its
// statements end, whether it is complete. These are the cases a student's cell brings that a
// naive lexer gets wrong: raw strings over several lines, digit separators, prefixed literals.
#include "cell_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace xenc_kernel {
namespace {

constexpr std::size_t kOpen = std::string::npos;

TEST(LiteralEnd, CommentsAndQuotedLiterals) {
  const std::string code = "a // note\nb /* x */ \"s\\\"t\" 'c' '\\''";
  EXPECT_EQ(literal_end(code, 0), 0u);                     // code
  EXPECT_EQ(literal_end(code, 2), code.find('\n') - 1);    // line comment: up to the newline
  EXPECT_EQ(literal_end(code, 12), code.find("*/") + 1);   // block comment
  EXPECT_EQ(literal_end(code, 20), code.find("t\"") + 1);  // string with an escaped quote
  EXPECT_EQ(literal_end(code, 27), 29u);                   // 'c'
  EXPECT_EQ(literal_end(code, 31), code.size() - 1);       // '\''
  EXPECT_EQ(literal_end("// last line", 0), 11u);          // a comment that ends the cell
  EXPECT_EQ(literal_end("x = \"open\n\";", 4), kOpen);     // a quote has to close on its line
  EXPECT_EQ(literal_end("/* open", 0), kOpen);
}

TEST(LiteralEnd, RawStringsEndAtTheirDelimiter) {
  const std::string plain = "R\"(a \"quoted\" word\n)\";";
  EXPECT_EQ(literal_end(plain, 1), plain.size() - 2);  // the '"' after ')'
  const std::string delimited = "R\"x(a)\" b)x\" + 1";
  EXPECT_EQ(literal_end(delimited, 1), delimited.find(")x\"") + 2);
  for (const std::string prefix : {"u8", "u", "U", "L"}) {
    const std::string code = prefix + "R\"(\n')\"";
    EXPECT_EQ(literal_end(code, prefix.size() + 1), code.size() - 1) << prefix;
  }
  EXPECT_EQ(literal_end("R\"(never closed\n", 1), kOpen);
  // A name ending in R before a quote is no raw string's prefix: "BAR" "(" reads as two strings.
  const std::string concatenated = "BAR\"(\" \")\"";
  EXPECT_EQ(literal_end(concatenated, 3), 5u);
}

TEST(LiteralEnd, DigitSeparatorsStartNothing) {
  const std::string code = "int n = 1'000'000; auto h = 0xFF'FF; double d = .5'0; char c = u8'a';";
  EXPECT_EQ(literal_end(code, code.find("'000'")), code.find("'000'"));
  EXPECT_EQ(literal_end(code, code.find("'000;")), code.find("'000;"));
  EXPECT_EQ(literal_end(code, code.find("'FF")), code.find("'FF"));
  EXPECT_EQ(literal_end(code, code.find("'0;")), code.find("'0;"));
  EXPECT_EQ(literal_end(code, code.find("'a'")), code.find("'a'") + 2);  // u8'a' is a character
}

TEST(Completeness, RawStringsAndSeparators) {
  EXPECT_EQ(completeness("auto s = R\"(line 1\nline 2 \" ' { )\";"), "complete");
  EXPECT_EQ(completeness("auto s = R\"(line 1\n"), "incomplete");
  EXPECT_EQ(completeness("int n = 1'000;"), "complete");
  EXPECT_EQ(completeness("int n = 1'000; f(n"), "incomplete");
  EXPECT_EQ(completeness("auto s = \"}\"; }"), "invalid");
}

TEST(SplitTrailingExpression, AfterARawStringAndASeparator) {
  const CellParts raw = split_trailing_expression("auto s = R\"(a;\nb)\";\ns.size()");
  EXPECT_EQ(raw.statements, "auto s = R\"(a;\nb)\";");
  EXPECT_EQ(raw.expression, "\ns.size()");
  const CellParts sep = split_trailing_expression("int n = 1'000;\nn + 1");
  EXPECT_EQ(sep.statements, "int n = 1'000;");
  EXPECT_EQ(sep.expression, "\nn + 1");
}

TEST(SplitTrailingExpression, AnExpressionThatGoesOnAfterABrace) {
  // A '}' at the top level ends a statement (a block, a function's body) unless the expression
  // goes on: a member call, a lambda called where it is written, an operator.
  for (const std::string last :
       {"Greeter{}.f()", "[] { return 6; }() * 7", "std::vector<int>{1, 2}\n    .size()"}) {
    const CellParts parts = split_trailing_expression("int n = 1;\n" + last);
    EXPECT_EQ(parts.statements, "int n = 1;") << last;
    EXPECT_EQ(parts.expression, "\n" + last) << last;
  }
  // One that ends in a brace is a statement to the first split, and the value to the second
  // (tried when clang asks for a ';' after it).
  for (const std::string last : {"Point{1, 2} + Point{}", "make() ? A{} : B{}"}) {
    EXPECT_EQ(split_trailing_expression("int n = 1;\n" + last).expression, "") << last;
    const CellParts parts = split_trailing_braced("int n = 1;\n" + last);
    EXPECT_EQ(parts.statements, "int n = 1;") << last;
    EXPECT_EQ(parts.expression, "\n" + last) << last;
  }
  // A function's body, then the value on the next line.
  const CellParts after_body = split_trailing_expression("int f() { return 1; }\n(f() + 1) * 2");
  EXPECT_EQ(after_body.statements, "int f() { return 1; }");
  EXPECT_EQ(after_body.expression, "\n(f() + 1) * 2");
  const CellParts after_block = split_trailing_expression("if (n) { n = 2; }\n-n");
  EXPECT_EQ(after_block.statements, "if (n) { n = 2; }");
  EXPECT_EQ(after_block.expression, "\n-n");
}

TEST(BlankPragmaOnce, OnlyTheDirective) {
  std::string header = "  #  pragma once // guard\nint pasted = 6;\n";
  EXPECT_TRUE(blank_pragma_once(header));
  EXPECT_EQ(header, std::string(25, ' ') + "\nint pasted = 6;\n");

  // In a raw string the line is text: a header written out by the cell keeps its guard.
  const std::string raw = "std::string h = R\"(\n#pragma once\nint x;\n)\";\n";
  std::string kept = raw;
  EXPECT_FALSE(blank_pragma_once(kept));
  EXPECT_EQ(kept, raw);

  const std::string commented = "/*\n#pragma once\n*/ int y;";
  kept = commented;
  EXPECT_FALSE(blank_pragma_once(kept));
  EXPECT_EQ(kept, commented);

  std::string after = "auto s = R\"(\n#pragma once\n)\";\n#pragma once\n";
  EXPECT_TRUE(blank_pragma_once(after));
  EXPECT_EQ(after, "auto s = R\"(\n#pragma once\n)\";\n" + std::string(12, ' ') + "\n");
}

TEST(WrapStatements, ARawStringWithBracesIsOneStatement) {
  // The braces and ';' inside the literal do not end the statement: it is wrapped as one piece.
  const std::string cell = "std::cout << R\"({ \"a\": 1; }\n)\";\nint after = 1'0;";
  const std::string wrapped = wrap_statements(cell, 3);
  EXPECT_NE(wrapped.find("static void __xenc_run_3_1() { xenc_kernel_line = 1; std::cout << "
                         "R\"({ \"a\": 1; }\n)\"; }"),
            std::string::npos)
      << wrapped;
  EXPECT_NE(wrapped.find("(xenc_kernel_line = 3, 0); \nint after = 1'0;"), std::string::npos)
      << wrapped;
}

TEST(RerunMemberDefinitions, DataAssignedSameFunctionsKeptChangedRefused) {
  const std::string first =
      "int Q::n = 1;\nconst int Q::k = 2;\nint Q::get() const { return n; }\n";
  const std::map<std::string, std::string> in_force = member_definitions(first);
  ASSERT_EQ(in_force.size(), 3u);
  EXPECT_EQ(in_force.at("Q::get"), "int Q::get() const { return n; }");

  const std::string again =
      "// again\nint Q::n = 5;\nstd::string Q::s{\"a\"};\nstd::vector<int> Q::v;\n"
      "const int Q::k = 2;\nint Q::get()  const {\n  return n; }\nint Q::other() { return 1; }";
  const MemberRerun rerun = rerun_member_definitions(
      again, {"Q::n", "Q::s", "Q::v", "Q::k", "Q::get", "Q::other"}, in_force);
  EXPECT_EQ(rerun.assigned, (std::vector<std::string>{"Q::n", "Q::s", "Q::v"}));
  EXPECT_EQ(rerun.kept, (std::vector<std::string>{"Q::k", "Q::get"}));
  EXPECT_EQ(rerun.refused, (std::vector<std::string>{"Q::other"}));  // never defined before
  EXPECT_EQ(rerun.code,
            "// again\nQ::n = 5;\nQ::s = decltype(Q::s){\"a\"};\nQ::v = decltype(Q::v){};\n" +
                std::string(19, ' ') + "\n" + std::string(21, ' ') + "\n" + std::string(13, ' ') +
                "\nint Q::other() { return 1; }");

  // a constant or a function that changed, an array: left as they are
  const std::string changed =
      "const int Q::k = 3;\nint Q::get() const { return 2 * n; }\n"
      "int Q::a[2] = {1, 2};";
  const MemberRerun refused =
      rerun_member_definitions(changed, {"Q::k", "Q::get", "Q::a"}, in_force);
  EXPECT_EQ(refused.refused, (std::vector<std::string>{"Q::k", "Q::get", "Q::a"}));
  EXPECT_EQ(refused.code, changed);
}

}  // namespace
}  // namespace xenc_kernel
