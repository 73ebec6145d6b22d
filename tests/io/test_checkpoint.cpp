// Checkpoints (.npz with parameters, config and vocabulary) and int64 .npy arrays.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "io_test_util.hpp"
#include "support/allclose.hpp"
#include "xenc/data/word_roles.hpp"
#include "xenc/io/checkpoint.hpp"
#include "xenc/io/npy.hpp"
#include "xenc/io/npz.hpp"
#include "xenc/nn/optim.hpp"
#include "xenc/ops/cross_entropy.hpp"

using namespace xenc_test;

namespace {
using xenc::test::AllClose;

xenc::EncoderModelConfig config(xenc::PositionKind position) {
  xenc::EncoderModelConfig c;
  c.layer.d_model = 8;
  c.layer.nhead = 2;
  c.layer.dim_feedforward = 16;
  c.layer.dropout = 0.0f;
  c.num_layers = 2;
  c.position = position;
  c.max_len = 12;
  c.seed = 5;
  return c;
}
}  // namespace

// NumPy wrote i8_2x3.npy as np.arange(6, dtype=np.int64).reshape(2, 3).
TEST(NpyInt64, ReadsWhatNumPyWrote) {
  const xt::xarray<std::int64_t> a = xenc::load_npy_int64(format_path("i8_2x3.npy"));
  EXPECT_EQ(a, (xt::xarray<std::int64_t>{{0, 1, 2}, {3, 4, 5}}));
  const xt::xarray<std::int64_t> big{-5, std::int64_t(1) << 40};
  xenc::save_npy_int64(tmp_path("i8_rt.npy"), big);
  EXPECT_EQ(xenc::load_npy_int64(tmp_path("i8_rt.npy")), big);
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([] { xenc::load_npy_int64(format_path("f4_2x3.npy")); },
                                 {"load_npy_int64", "dtype is '<f4'", "expected int64 '<i8'"}));
}

// Save, load, identical outputs: for every position scheme, after a few training steps (so the
// weights are not the seeded initial ones the config alone would rebuild).
TEST(Checkpoint, RoundTripGivesIdenticalLogits) {
  xenc::WordRolesConfig wc;
  wc.num_nouns = 6;
  wc.num_verbs = 3;
  wc.sentences_per_pair = 1;
  const xenc::WordRolesDataset data = xenc::make_word_roles(wc);
  const auto train = xenc::as_labelled(data.train);
  const xenc::LabelledBatch batch = xenc::make_batch(train, {0, 1, 2, 3}, data.vocab);
  for (auto kind :
       {xenc::PositionKind::none, xenc::PositionKind::sinusoidal, xenc::PositionKind::learned}) {
    SCOPED_TRACE(xenc::to_string(kind));
    auto c = config(kind);
    c.vocab_size = data.vocab.size();
    xenc::TokenClassifier model(c, 2);
    xenc::AdamW opt(model.parameters(), 1e-2f);
    for (int step = 0; step < 3; ++step) {
      opt.zero_grad();
      const xenc::Tensor3 y = model.forward(batch.ids, batch.padding_mask);
      model.backward(xenc::cross_entropy_backward(y, batch.labels, xenc::kIgnoreIndex));
      opt.step();
    }
    const std::string path = tmp_path("ckpt_" + xenc::to_string(kind) + ".npz");
    xenc::save_checkpoint(path, model, data.vocab, {"agent", "patient"}, {{"note", "test"}});
    const xenc::LoadedCheckpoint ck = xenc::load_checkpoint(path);
    EXPECT_EQ(ck.meta.labels, (std::vector<std::string>{"agent", "patient"}));
    EXPECT_EQ(ck.meta.extra.at("note"), "test");
    EXPECT_EQ(ck.vocab.size(), data.vocab.size());
    for (std::size_t i = 0; i < data.vocab.size(); ++i)
      EXPECT_EQ(ck.vocab.token(std::int64_t(i)), data.vocab.token(std::int64_t(i)));
    EXPECT_EQ(ck.meta.config.position, kind);
    EXPECT_TRUE(AllClose(ck.model->forward(batch.ids, batch.padding_mask),
                         model.forward(batch.ids, batch.padding_mask), 0.0, 0.0));
    // The weights are plain float32 members under PyTorch's names (what the Python side loads).
    const auto members = xenc::load_npz_members(path);
    EXPECT_EQ(members.count("head.weight"), 1u);
    EXPECT_EQ(members.count("encoder.layers.1.norm2.bias"), 1u);
    EXPECT_EQ(members.count("xenc.meta"), 1u);
  }
}

TEST(Checkpoint, BadFilesGetClearErrors) {
  // a plain state_dict .npz (no metadata)
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [] { xenc::load_checkpoint(data_path("post_relu_l2_h2.npz")); },
      {"load_checkpoint", "post_relu_l2_h2.npz", "not an xencoder checkpoint"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [] { xenc::load_checkpoint(tmp_path("does_not_exist.npz")); }, {"does_not_exist.npz"}));
  // a checkpoint whose weights do not fit its config: refused before the model is built
  auto c = config(xenc::PositionKind::learned);
  c.vocab_size = 5;
  xenc::TokenClassifier model(c, 2);
  xenc::Vocabulary vocab;
  for (const char* w : {"a", "b", "c"}) vocab.add(w);
  const std::string good = tmp_path("ckpt_good.npz");
  xenc::save_checkpoint(good, model, vocab, {"x", "y"});
  auto members = xenc::load_npz_members(good);
  members["encoder.layers.0.linear1.weight"] =
      xenc::format_npy(xt::xarray<float>(xt::zeros<float>({4, 8})));
  const std::string bad = tmp_path("ckpt_bad.npz");
  xenc::save_npz_members(bad, members);
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_checkpoint(bad); },
      {"load_checkpoint", "ckpt_bad.npz", "mismatched config and weights"}));
  // a stray key with the right total size is named
  members = xenc::load_npz_members(good);
  members["head.extra"] = members.at("head.bias");
  members.erase("head.bias");
  xenc::save_npz_members(bad, members);
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_checkpoint(bad); },
                                         {"ckpt_bad.npz", "head.bias"}));
  // labels that do not match the head
  EXPECT_THROW(xenc::save_checkpoint(good, model, vocab, {"only-one"}), xenc::config_error);
}

// Models trained in PyTorch (scripts/torch_train_order.py --make-fixture), saved in the
// checkpoint format: load_checkpoint rebuilds them and gives PyTorch's logits.
TEST(Checkpoint, LoadsPyTorchTrainedCheckpoints) {
  for (const char* name : {"torch_trained_learned", "torch_trained_sinusoidal"}) {
    SCOPED_TRACE(name);
    const xenc::LoadedCheckpoint ck = xenc::load_checkpoint(data_path(std::string(name) + ".npz"));
    const auto io = xenc::load_npz_members(data_path(std::string(name) + "_io.npz"));
    const xenc::Index2 ids = xenc::parse_npy_int64(io.at("ids"), "ids");
    const xenc::Mask2 mask = xenc::parse_npy_bool(io.at("padding_mask"), "padding_mask");
    const xt::xarray<float> expected = xenc::parse_npy(io.at("logits"), "logits");
    const xenc::Tensor3 logits = ck.model->forward(ids, mask);
    ASSERT_EQ(logits.shape(0) * logits.shape(1) * logits.shape(2), expected.size());
    // compare at real tokens only (PyTorch's outputs at padded positions are not used)
    double worst = 0.0;
    for (std::size_t b = 0; b < ids.shape(0); ++b)
      for (std::size_t t = 0; t < ids.shape(1); ++t)
        if (!mask(b, t))
          for (std::size_t c = 0; c < 2; ++c)
            worst = std::max(worst, double(std::abs(logits(b, t, c) - expected(b, t, c))));
    EXPECT_LE(worst, kParityTol);
    EXPECT_EQ(ck.meta.config.position, std::string(name).find("learned") != std::string::npos
                                           ? xenc::PositionKind::learned
                                           : xenc::PositionKind::sinusoidal);
  }
}
