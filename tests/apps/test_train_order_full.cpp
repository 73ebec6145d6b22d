// xenc-train-order with its defaults: the accuracy targets of issue 10 (Release builds only:
// the sanitizer build does not register this test). Time is reported, not asserted (speed
// belongs in benchmarks; the target is "within 60 s on 2 cores").
#include <nlohmann/json.hpp>

#include "train_order_util.hpp"

using namespace train_order_test;

TEST(TrainOrderDefaults, MeetTheAccuracyTargets) {
  const Result r = run("--json", out_dir());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& s : j["schemes"]) {
    const std::string name = s["name"];
    const double acc = s["heldout"]["accuracy"];
    RecordProperty(name + "_heldout_accuracy", std::to_string(acc));
    if (name == "none")
      EXPECT_LE(acc, 0.55);
    else
      EXPECT_GE(acc, 0.98)
          << name;  // every scheme with positions (sinusoidal, learned, rope, alibi)
  }
  RecordProperty("total_seconds", std::to_string(j["total_seconds"].get<double>()));
  std::printf("xenc-train-order defaults: %.1f s of training in total\n",
              j["total_seconds"].get<double>());
}
