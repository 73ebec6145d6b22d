// Parity with PyTorch 1.13: every fixture case of tests/io/data/cases.json (written by
// tests/io/generate.py from torch.nn.TransformerEncoder, TransformerEncoderLayer and
// MultiheadAttention with random weights) loaded by name and run through xencoder; outputs
// compared at every non-padded position within 1e-4 absolute, attention weights everywhere.
// Also: outputs at real positions do not depend on the inputs at padded positions.
#include <gtest/gtest.h>

#include <cctype>
#include <set>

#include <nlohmann/json.hpp>

#include "io_test_util.hpp"
#include "xenc/core/grad_mode.hpp"
#include "xenc/core/random.hpp"
#include "xenc/io/npz.hpp"
#include "xenc/io/state_dict.hpp"

using namespace xenc_test;
using nlohmann::json;

namespace {

const json& manifest() {
  static const json m = json::parse(read_text(data_path("cases.json")));
  return m;
}

std::vector<json> cases(const char* kind) {
  std::vector<json> out;
  for (const auto& c : manifest()[kind]) out.push_back(c);
  return out;
}

std::string case_name(const ::testing::TestParamInfo<json>& info) {
  std::string n = info.param["name"].get<std::string>();
  for (auto& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

// The inputs and outputs of one case: x (float32 or float64 in the file), y, optional mask.
struct CaseIo {
  std::map<std::string, std::string> members;
  std::string path;
  xt::xarray<float> get(const std::string& key) const {
    return xenc::parse_npy(members.at(key), path + ": key \"" + key + "\"");
  }
  bool has(const std::string& key) const { return members.count(key) > 0; }
  xenc::Mask2 mask() const {
    if (!has("mask")) return xenc::Mask2();
    const auto m = xenc::parse_npy_bool(members.at("mask"), path + ": key \"mask\"");
    xenc::Mask2 out = xenc::Mask2::from_shape({m.shape(0), m.shape(1)});
    std::copy(m.begin(), m.end(), out.begin());
    return out;
  }
};

CaseIo load_io(const std::string& name) {
  CaseIo io;
  io.path = data_path(name + "_io.npz");
  io.members = xenc::load_npz_members(io.path);
  return io;
}

xenc::Tensor3 as_tensor3(const xt::xarray<float>& a) {
  xenc::Tensor3 t = xenc::Tensor3::from_shape({a.shape(0), a.shape(1), a.shape(2)});
  std::copy(a.begin(), a.end(), t.begin());
  return t;
}

// One flag per [b, t] row: true = compare (not padding).
std::vector<bool> real_rows(const xenc::Mask2& mask, std::size_t B, std::size_t T) {
  std::vector<bool> keep(B * T, true);
  for (std::size_t i = 0; i < mask.size(); ++i) keep[i] = !mask.data()[i];
  return keep;
}

}  // namespace

// ---- TransformerEncoder / TransformerEncoderLayer --------------------------------------------

class EncoderParity : public ::testing::TestWithParam<json> {};

TEST_P(EncoderParity, MatchesPyTorchAtRealPositions) {
  const json& c = GetParam();
  const std::string name = c["name"];
  const std::string weights = data_path(name + ".npz");
  auto enc = xenc::load_transformer_encoder(weights, c["nhead"].get<std::size_t>(),
                                            xenc::parse_activation(c["activation"]),
                                            c["norm_first"].get<bool>(), c["eps"].get<float>());
  // the sizes read from the keys are the ones PyTorch was built with
  EXPECT_EQ(enc.num_layers(), c["num_layers"].get<std::size_t>());
  EXPECT_EQ(enc.layer_config().d_model, c["d_model"].get<std::size_t>());
  EXPECT_EQ(enc.layer_config().dim_feedforward, c["dim_feedforward"].get<std::size_t>());
  EXPECT_EQ(static_cast<bool>(enc.norm), c["final_norm"].get<bool>());

  const CaseIo io = load_io(name);
  const xenc::Tensor3 x = as_tensor3(io.get("x"));
  const xenc::Mask2 mask = io.mask();
  const xt::xarray<float> y_ref = io.get("y");
  ASSERT_EQ(x.shape(0), c["B"].get<std::size_t>());
  ASSERT_EQ(x.shape(1), c["T"].get<std::size_t>());
  EXPECT_EQ(mask.size() != 0, c["mask"] != "none");

  xenc::Tensor3 y;
  {
    xenc::NoGradGuard no_grad;
    y = enc.forward(x, mask);
  }
  EXPECT_TRUE(AllClose(y, y_ref, kParityTol, real_rows(mask, x.shape(0), x.shape(1))));
  // with gradients enabled (the caching path) the output is the same
  EXPECT_TRUE(AllClose(enc.forward(x, mask), y, 0.0f));
}

// Changing the inputs at padded positions leaves every real position's output unchanged.
class PaddingInvariance : public ::testing::TestWithParam<json> {};

TEST_P(PaddingInvariance, PaddedInputsDoNotReachRealPositions) {
  const json& c = GetParam();
  const std::string name = c["name"];
  const CaseIo io = load_io(name);
  const xenc::Mask2 mask = io.mask();
  ASSERT_NE(mask.size(), 0u);
  auto enc = xenc::load_transformer_encoder(data_path(name + ".npz"), c["nhead"].get<std::size_t>(),
                                            xenc::parse_activation(c["activation"]),
                                            c["norm_first"].get<bool>(), c["eps"].get<float>());
  const xenc::Tensor3 x = as_tensor3(io.get("x"));
  xenc::Tensor3 x2 = x;
  xenc::Rng rng(17);
  std::size_t changed = 0;
  for (std::size_t b = 0; b < x.shape(0); ++b)
    for (std::size_t t = 0; t < x.shape(1); ++t)
      if (mask(b, t)) {
        for (std::size_t d = 0; d < x.shape(2); ++d) x2(b, t, d) = 100.0f * rng.normal();
        ++changed;
      }
  ASSERT_GT(changed, 0u);
  const xenc::Tensor3 y = enc.forward(x, mask), y2 = enc.forward(x2, mask);
  EXPECT_TRUE(AllClose(y2, y, kPaddingInvariance, real_rows(mask, x.shape(0), x.shape(1))));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EncoderParity, ::testing::ValuesIn(cases("encoder")), case_name);

std::vector<json> masked_cases() {
  std::vector<json> out;
  for (const auto& c : cases("encoder"))
    if (c["mask"] != "none") out.push_back(c);
  return out;
}
INSTANTIATE_TEST_SUITE_P(Fixtures, PaddingInvariance, ::testing::ValuesIn(masked_cases()),
                         case_name);

// Each axis of the parity claim appears in the fixtures (guards against a generator edit that
// silently drops one).
TEST(EncoderParityCoverage, EveryAxisValueIsCovered) {
  std::set<std::string> seen;
  for (const auto& c : cases("encoder")) {
    seen.insert(std::string("norm_first=") + (c["norm_first"].get<bool>() ? "1" : "0"));
    seen.insert("activation=" + c["activation"].get<std::string>());
    seen.insert("layers=" + std::to_string(c["num_layers"].get<int>()));
    seen.insert("heads=" + std::to_string(c["nhead"].get<int>()));
    seen.insert(std::string("final_norm=") + (c["final_norm"].get<bool>() ? "1" : "0"));
    seen.insert(std::string("mask=") + (c["mask"] == "none" ? "0" : "1"));
    seen.insert("B=" + std::to_string(c["B"].get<int>()));
    const int T = c["T"];
    if (T == 1 || T == 512) seen.insert("T=" + std::to_string(T));
    if (c["eps"].get<double>() != 1e-5) seen.insert("eps!=1e-5");
    if (c["single_layer"].get<bool>()) seen.insert("single_layer");
  }
  std::vector<std::string> required = {"norm_first=0",    "norm_first=1", "activation=relu",
                                       "activation=gelu", "final_norm=0", "final_norm=1",
                                       "mask=0",          "mask=1",       "T=1",
                                       "T=512",           "eps!=1e-5",    "single_layer"};
  for (int i = 1; i <= 6; ++i) required.push_back("layers=" + std::to_string(i));
  for (int i = 1; i <= 8; ++i) required.push_back("heads=" + std::to_string(i));
  for (int i = 1; i <= 8; ++i) required.push_back("B=" + std::to_string(i));
  for (const auto& r : required) EXPECT_TRUE(seen.count(r)) << "no fixture with " << r;
}

// ---- MultiheadAttention alone, including the attention weights -------------------------------

class AttentionParity : public ::testing::TestWithParam<json> {};

TEST_P(AttentionParity, OutputAndWeightsMatchPyTorch) {
  const json& c = GetParam();
  const std::string name = c["name"];
  auto mha = xenc::load_multihead_attention(xenc::load_npz(data_path(name + ".npz")),
                                            c["nhead"].get<std::size_t>(), name + ".npz");
  EXPECT_EQ(mha.embed_dim(), c["d_model"].get<std::size_t>());
  EXPECT_EQ(mha.in_proj_bias.size() != 0, c["bias"].get<bool>());
  const CaseIo io = load_io(name);
  const xenc::Tensor3 q = as_tensor3(io.get("query"));
  const xenc::Mask2 mask = io.mask();
  xenc::MultiheadAttentionOutput out;
  if (c["self"].get<bool>()) {
    out = mha.forward(q, q, q, mask, /*need_weights=*/true);  // the same tensor: self-attention
  } else {
    const xenc::Tensor3 k = as_tensor3(io.get("key")), v = as_tensor3(io.get("value"));
    out = mha.forward(q, k, v, mask, true);
  }
  // nn.MultiheadAttention masks keys only: every query position is compared
  EXPECT_TRUE(AllClose(out.output, io.get("y"), kParityTol));
  EXPECT_TRUE(AllClose(out.weights, io.get("attn"), kParityTol));  // [B, H, Tq, Tk]
}

INSTANTIATE_TEST_SUITE_P(Fixtures, AttentionParity, ::testing::ValuesIn(cases("mha")), case_name);
