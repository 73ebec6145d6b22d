// xenc-pe-pitfalls: a museum of published positional-encoding (and neighbouring) bugs.
//
// Each exhibit puts a mistake that circulates in tutorials and courses next to the correct
// formula, computes its numeric consequence, and names the test in tests/ that catches it.
// The buggy code lives in the library's pitfall museum (xenc/grade/pitfalls.hpp), which
// tests/apps/test_pitfalls.cpp uses too: the test shows that the check passes for xencoder and
// fails for the very code this app runs.
//
//     pe_pitfalls              # all five exhibits
//     pe_pitfalls --only 1     # one exhibit
//
// This file is the command line; exhibits.cpp holds the five exhibits.
#include <CLI/CLI.hpp>

#include "../common/cli.hpp"
#include "exhibits.hpp"
#include "options.hpp"

#include <cstdio>
#include <iostream>

using namespace pe_pitfalls;

int main(int argc, char** argv) {
  CLI::App app{
      "xenc-pe-pitfalls: published positional-encoding, layer-norm and mask mistakes next to the\n"
      "correct formula, each with its numeric consequence and the test that catches it."};
  xenc_app::add_version(app, "xenc-pe-pitfalls");
  CommandLine c;
  xenc_app::add_options(app, c, option_records());
  CLI11_PARSE(app, argc, argv);
  const int only = c.only;
  try {
    std::printf(
        "The bug museum. Correct formula: PE(p, 2i) = sin(p / 10000^(2i/D)), "
        "PE(p, 2i+1) = cos(p / 10000^(2i/D)).\n");
    if (only == 0 || only == 1) exhibit_doubled_exponent();
    if (only == 0 || only == 2) exhibit_batch_axis();
    if (only == 0 || only == 3) exhibit_odd_d();
    if (only == 0 || only == 4) exhibit_layer_norm();
    if (only == 0 || only == 5) exhibit_mask();
  } catch (const std::exception& e) {
    std::cerr << "xenc-pe-pitfalls: error: " << e.what() << "\n";
    return 1;
  }
  return xenc_app::finish_stdout("xenc-pe-pitfalls");
}
