// pe_properties: three properties of sinusoidal positional encoding, checked numerically.
//
// 1. A shift is a rotation. Dimension pair (2i, 2i+1) turns with angular frequency
//    ω_i = 10000^(-2i/D), so for every position p
//        PE(p + k) = R_k · PE(p),   R_k = blockdiag([[cos kω_i, sin kω_i], [-sin kω_i, cos kω_i]])
//    and R_k is built from k alone. We print R_k's 2×2 blocks and the largest error over all p.
// 2. The similarity PE(p) · PE(q) = Σ_i cos((p - q) ω_i) depends only on p - q: a heatmap of the
//    [T, T] similarity matrix (constant along diagonals) and the largest deviation from f(p - q).
// 3. Positions stay distinct: the smallest distance between two rows ‖PE(p) - PE(q)‖, p ≠ q.
//    ‖PE(p+k) - PE(p)‖² = Σ_i 2 - 2 cos(kω_i) is the same for every p (R_k is a rotation).
//
// The all-pairs work is two double-precision GEMMs (xtensor-blas): R_k PE(p) for every p at once
// (PE R_kᵀ) and the similarity matrix S = PE PEᵀ; the distances come from S, f from a table of
// the T offsets. D = 4096 with 4000 positions takes seconds. The heatmap shows at most 500 x 500
// cells (every s-th position beyond that, said in the output): a cell per pair would make a
// 4000 x 4000 SVG of over 1 GiB.
//
//     xenc-pe-properties                                     # D = 16, 50 positions, k = 3
//     xenc-pe-properties --d-model 64 --positions 100 --shift 7 --svg sim.svg
//
// This file is the command line: experiment.hpp computes the table and the measurements,
// report.hpp turns them into the text and the figures.
#include <CLI/CLI.hpp>
#include <xenc/viz/svg.hpp>

#include <iostream>

#include "../common/cli.hpp"
#include "experiment.hpp"
#include "options.hpp"
#include "report.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "xenc-pe-properties: PE(p+k) = R_k PE(p) (a rotation), PE(p).PE(q) depends only on p - q,\n"
      "and how far apart the position vectors are, checked numerically with figures."};
  xenc_app::add_version(app, "xenc-pe-properties");
  pe_properties::CommandLine c;
  xenc_app::add_options(app, c, pe_properties::option_records());
  CLI11_PARSE(app, argc, argv);

  try {
    using namespace pe_properties;
    const Result r = run_experiment(c);
    std::cout << rotation_text(r) << similarity_text(r) << distance_text(r);
    xenc::viz::write_text_file(c.svg, heatmap_svg(r));
    xenc::viz::write_text_file(c.offset_svg, offset_svg(r));
    std::cout << wrote_text(r);
  } catch (const std::exception& e) {
    return xenc_app::report_error("xenc-pe-properties", e);
  }
  return xenc_app::finish_stdout("xenc-pe-properties");
}
