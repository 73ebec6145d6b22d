// xenc-extrapolate with its defaults: the experiment itself (Release builds only: the sanitizer
// build does not register this test). Time is reported, not asserted (speed belongs in
// benchmarks; the target is "within 3 minutes on 2 cores").
//
// What is asserted is the result the app's README reports, with margins:
//   at L_train = 16: sinusoidal >= 90%, rope and alibi >= 95% (learned's accuracy at 16 is not
//     asserted: it learns late, and how late depends on the seed);
//   alibi stays within the tolerance (5 points) of its length-16 accuracy at 128 = 8 × L_train;
//   sinusoidal falls below 60% at 32 = 2 × L_train; rope holds at 32 and is below 60% at 128;
//   learned cannot read beyond 16; none is within 5 points of chance from 16 on (8 points at 8).
#include "extrapolate_util.hpp"

using namespace extrapolate_test;

TEST(ExtrapolateDefaults, TrainShortTestLong) {
  const Result r = run("--json", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["test_lengths"], json::array({8, 16, 32, 64, 128}));
  auto acc = [&](const std::string& name, std::size_t length) {
    for (const auto& s : j["schemes"])
      if (s["name"] == name) {
        const json& l = at(s, length);
        RecordProperty(name + "_" + std::to_string(length),
                       l["available"] ? pct(l["accuracy"]) : "-");
        return l["available"] ? l["accuracy"].get<double>() : -1.0;
      }
    ADD_FAILURE() << "no scheme " << name;
    return -1.0;
  };
  // none: the bag of a short sequence gives a small edge (5.4 points at 8 in the README's run),
  // which fades with the length
  EXPECT_NEAR(acc("none", 8), 0.125, 0.08);
  for (std::size_t L : {16, 32, 64, 128}) EXPECT_NEAR(acc("none", L), 0.125, 0.05) << L;
  EXPECT_LT(acc("none", 128), acc("none", 8));
  EXPECT_GE(acc("sinusoidal", 16), 0.90);
  for (const char* name : {"rope", "alibi"}) EXPECT_GE(acc(name, 16), 0.95) << name;
  EXPECT_GE(acc("alibi", 128), acc("alibi", 16) - 0.05);
  EXPECT_LT(acc("sinusoidal", 32), 0.60);
  EXPECT_GE(acc("rope", 32), 0.95);
  EXPECT_LT(acc("rope", 128), 0.60);
  for (std::size_t L : {32, 64, 128}) EXPECT_EQ(acc("learned", L), -1.0) << L;
  expect_a_conclusion_per_scheme(j);
  std::printf("xenc-extrapolate defaults: %.1f s of training in total\n",
              j["total_seconds"].get<double>());
}
