// xenc-pe-heatmap's experiment checks and report (apps/pe_heatmap/), on hand-made tables: the
// default dimensions, the size estimate and the refusals, the CSV, the terminal text.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "pe_heatmap/experiment.hpp"
#include "pe_heatmap/report.hpp"

namespace {

using pe_heatmap::Result;

// A 2 x 2 table written by hand: rows p = 0, 1; columns d0, d1.
Result hand_table() {
  Result r;
  r.options.positions = 2;
  r.options.d_model = 2;
  r.options.dims = {0};
  r.pe = xenc::Tensor2{{0.0f, 1.0f}, {0.5f, -0.25f}};
  return r;
}

TEST(PeHeatmapExperiment, DefaultDimsAreEvenEighthsOfD) {
  // 0, D/8, D/4, 3D/8 rounded down to even, repeats dropped
  EXPECT_EQ(pe_heatmap::default_dims(64), (std::vector<std::size_t>{0, 8, 16, 24}));
  EXPECT_EQ(pe_heatmap::default_dims(10), (std::vector<std::size_t>{0, 2}));  // 0, 1->0, 2, 3->2
  EXPECT_EQ(pe_heatmap::default_dims(2), (std::vector<std::size_t>{0}));
}

TEST(PeHeatmapExperiment, SizesAreEstimatedPerCell) {
  const auto s = pe_heatmap::estimate_sizes(100, 10);
  EXPECT_EQ(s.cells, 1000.0);
  EXPECT_EQ(s.svg_bytes, 75.0 * 1000 + 20e3);
  EXPECT_EQ(s.csv_bytes, 13.0 * 1000 + 8.0 * 100);
}

TEST(PeHeatmapExperiment, RefusesBeforeComputing) {
  pe_heatmap::Options o;
  o.dims = {70};
  try {
    pe_heatmap::run_experiment(o);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--dims: dimension 70 is out of range, expected 0 .. 63 (D = 64)");
  }
  o.dims = {};
  o.positions = 10000;
  o.d_model = 8192;  // 75 bytes x 81,920,000 cells: about 5859 MiB of SVG
  try {
    pe_heatmap::run_experiment(o);
    FAIL() << "no exception";
  } catch (const xenc_app::resource_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("10000 positions x D = 8192 = 81920000 values: the heatmap SVG would be "
                     "about 5859 MiB"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("over the limit of 100 MiB per file (--max-output-mb"), std::string::npos);
  }
}

TEST(PeHeatmapExperiment, TableIsTheFormula) {
  pe_heatmap::Options o;
  o.positions = 3;
  o.d_model = 4;
  const Result r = pe_heatmap::run_experiment(o);
  EXPECT_EQ(r.options.dims, (std::vector<std::size_t>{0}));  // 0, 4/8 -> 0, 1 -> 0, 1 -> 0
  // PE(2, 0) = sin(2), PE(2, 3) = cos(2 / 10000^(2/4)) = cos(0.02)
  EXPECT_NEAR(r.pe(2, 0), std::sin(2.0), 1e-6);
  EXPECT_NEAR(r.pe(2, 3), std::cos(0.02), 1e-6);
}

TEST(PeHeatmapReport, CsvHasAHeaderAndNineDigits) {
  EXPECT_EQ(pe_heatmap::csv_text(hand_table()), "position,d0,d1\n0,0,1\n1,0.5,-0.25\n");
}

TEST(PeHeatmapReport, TerminalShowsTheCornerAndTheWavelengths) {
  const std::string t = pe_heatmap::terminal_text(hand_table());
  EXPECT_EQ(t,
            "PE(p, 2i) = sin(p / 10000^(2i/D)),  PE(p, 2i+1) = cos(p / 10000^(2i/D)),  D = 2\n"
            "\nFirst positions, first dimensions:\n"
            "              d0       d1\n"
            "  p=0     0.0000   1.0000\n"
            "  p=1     0.5000  -0.2500\n"
            "\nWavelength 2*pi*10000^(2i/D) of a few pairs (positions per full turn):\n"
            "  dims   0,  1:          6.3\n");  // only i = 0 (i < D/2 = 1): 2 pi = 6.28
}

TEST(PeHeatmapReport, WroteNamesEveryFile) {
  Result r = hand_table();
  EXPECT_EQ(pe_heatmap::wrote_text(r, "a.svg", "b.csv", "c.svg"),
            "\nWrote a.svg (heatmap, 4 cells), b.csv (2 rows x 2 columns), c.svg (1 dimensions)\n");
  EXPECT_EQ(pe_heatmap::line_series(r).size(), 1u);
  EXPECT_EQ(pe_heatmap::line_series(r)[0].label, "dim 0 (sin, i = 0)");
  EXPECT_EQ(pe_heatmap::line_series(r)[0].y, (std::vector<double>{0.0, 0.5}));
}

}  // namespace
