// The encode app end to end: run the executable on .npy/.npz files written by NumPy/PyTorch
// (tests/io/data/app_*), compare Y with PyTorch's output; every error exits non-zero with its
// message. Also init_encoder: the weights it saves carry exactly PyTorch's state_dict keys.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "io_test_util.hpp"
#include "xenc/io/npz.hpp"
#include "xenc/io/state_dict.hpp"

using namespace xenc_test;

namespace {

struct RunResult {
  int status = -1;
  std::string out, err;
};

// Runs `program args` with stdout and stderr captured in files under the test tmp dir.
RunResult run(const std::string& program, const std::string& args, const std::string& tag) {
  const std::string out = tmp_path(tag + ".stdout"), err = tmp_path(tag + ".stderr");
  const std::string cmd = "\"" + program + "\" " + args + " > \"" + out + "\" 2> \"" + err + "\"";
  const int raw = std::system(cmd.c_str());
  RunResult r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

RunResult encode(const std::string& args, const std::string& tag) {
  return run(XENC_ENCODE_APP, args, tag);
}

std::string q(const std::string& path) { return "\"" + path + "\""; }

}  // namespace

// The three app fixtures: X float64 [T, D] without mask; X float32 [B, T, D] with mask [B, T];
// a single-layer file with mask [T]. Y: float32, X's shape, PyTorch's values at real positions.
TEST(EncodeApp, MatchesPyTorch) {
  const auto manifest = nlohmann::json::parse(read_text(data_path("cases.json")));
  ASSERT_EQ(manifest["app"].size(), 3u);
  for (const auto& c : manifest["app"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const std::string y_path = tmp_path(name + "_y.npy");
    std::string args = "--weights " + q(data_path(name + ".npz")) + " --heads " +
                       std::to_string(c["heads"].get<int>()) + " --activation " +
                       c["activation"].get<std::string>() + " --layer-norm-eps " +
                       std::to_string(c["eps"].get<double>()) + " --input " +
                       q(data_path(name + "_x.npy")) + " --output " + q(y_path);
    if (c["norm_first"].get<bool>()) args += " --norm-first";
    if (c["mask"].get<bool>()) args += " --padding-mask " + q(data_path(name + "_mask.npy"));
    const RunResult r = encode(args, name);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("written to"), std::string::npos) << r.out;

    EXPECT_EQ(xenc::load_npy_header(y_path).descr, "<f4");
    const xt::xarray<float> y = xenc::load_npy(y_path);
    const xt::xarray<float> x = xenc::load_npy(data_path(name + "_x.npy"));
    const xt::xarray<float> y_ref = xenc::load_npy(data_path(name + "_y.npy"));
    EXPECT_EQ(y.shape(), x.shape());
    // rows to compare: mask [B, T] or [T] (broadcast over B); none = all
    const std::size_t rows = y.size() / y.shape(y.dimension() - 1);
    std::vector<bool> keep(rows, true);
    if (c["mask"].get<bool>()) {
      const auto m = xenc::load_npy_bool(data_path(name + "_mask.npy"));
      for (std::size_t i = 0; i < rows; ++i) keep[i] = !m.data()[i % m.size()];
    }
    EXPECT_TRUE(AllClose(y, y_ref, kParityTol, keep));
  }
}

// ---- errors: exit status 1 and "encode: error: <message>" on stderr --------------------------

namespace {
const std::string kB = data_path("app_b.npz");     // 3 layers, D = 8, H = 2
const std::string kBx = data_path("app_b_x.npy");  // [3, 5, 8] float32
void expect_error(const std::string& args, const std::vector<std::string>& parts,
                  const std::string& tag) {
  const RunResult r = encode(args + " --output " + q(tmp_path(tag + "_y.npy")), tag);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("encode: error: "), std::string::npos) << r.err;
  for (const auto& p : parts)
    EXPECT_NE(r.err.find(p), std::string::npos) << "stderr: " << r.err << "\nlacks: " << p;
}
}  // namespace

TEST(EncodeAppErrors, WeightsFile) {
  expect_error("--weights " + q(tmp_path("nope.npz")) + " --heads 2 --input " + q(kBx),
               {"nope.npz", "cannot open", "No such file"}, "e_weights_missing");
  expect_error("--weights " + q(format_path("int_member.npz")) + " --heads 2 --input " + q(kBx),
               {"int_member.npz", "key \"count\"", "dtype is '<i8'"}, "e_weights_dtype");
  auto s = xenc::load_npz(kB);
  s["layers.2.linear1.weight"] = xt::zeros<float>({16, 4});
  xenc::save_npz(tmp_path("bad_shape.npz"), s);
  expect_error("--weights " + q(tmp_path("bad_shape.npz")) + " --heads 2 --input " + q(kBx),
               {"bad_shape.npz",
                "key \"layers.2.linear1.weight\" has shape [16, 4], expected [F, D] = [16, 8]"},
               "e_weights_shape");
  s = xenc::load_npz(kB);
  s.erase("layers.1.self_attn.out_proj.bias");
  xenc::save_npz(tmp_path("missing_key.npz"), s);
  expect_error("--weights " + q(tmp_path("missing_key.npz")) + " --heads 2 --input " + q(kBx),
               {"missing_key.npz", "missing key \"layers.1.self_attn.out_proj.bias\"", "[D] = [8]"},
               "e_weights_missing_key");
}

TEST(EncodeAppErrors, HeadsMustDivideD) {
  expect_error("--weights " + q(kB) + " --heads 3 --input " + q(kBx),
               {"d_model (8, from in_proj_weight) must be divisible by nhead (3)"}, "e_heads");
}

TEST(EncodeAppErrors, InputShapeAndDtype) {
  expect_error(
      "--weights " + q(kB) + " --heads 2 --input " + q(data_path("app_c_x.npy")),
      {"--input", "app_c_x.npy has shape [2, 4, 4], expected [T, D] or [B, T, D] with D = 8"},
      "e_input_shape");
  expect_error("--weights " + q(kB) + " --heads 2 --input " + q(format_path("i8_2x3.npy")),
               {"i8_2x3.npy", "dtype is '<i8'", "expected float32 '<f4' or float64 '<f8'"},
               "e_input_dtype");
  expect_error("--weights " + q(kB) + " --heads 2 --input " + q(format_path("f4_2x3_fortran.npy")),
               {"f4_2x3_fortran.npy", "Fortran order"}, "e_input_fortran");
  expect_error("--weights " + q(kB) + " --heads 2 --input " + q(format_path("f4be_2x3.npy")),
               {"f4be_2x3.npy", "big-endian"}, "e_input_big_endian");
  expect_error(
      "--weights " + q(kB) + " --heads 2 --input " + q(format_path("f4_2x3_truncated.npy")),
      {"f4_2x3_truncated.npy", "truncated"}, "e_input_truncated");
}

TEST(EncodeAppErrors, DirectoriesAndCraftedFiles) {
  // issue 12 item 9: a directory was "basic_filebuf::underflow".
  expect_error("--weights " + q(kB) + " --heads 2 --input .",
               {"load_npy", "\".\" is a directory, expected a file"}, "e_input_dir");
  expect_error("--weights " + q(tmp_path("")) + " --heads 2 --input " + q(kBx), {"is a directory"},
               "e_weights_dir");
  // issue 12 item 5: one key in layer 100000 is refused before any layer is built.
  xenc::save_npz(tmp_path("far_layer_app.npz"),
                 {{"layers.100000.linear1.weight", xt::zeros<float>({4, 2})}});
  expect_error("--weights " + q(tmp_path("far_layer_app.npz")) + " --heads 1 --input " + q(kBx),
               {"far_layer_app.npz", "layer indices are not contiguous", "there is no layer 0"},
               "e_far_layer");
  // The crafted archives of tests/fuzz/regressions (written by tests/fuzz/make_corpus.py).
  const std::string regressions = data_path("../../fuzz/regressions/");
  expect_error("--weights " + q(regressions + "npz/issue12_claims_4gib.npz") +
                   " --heads 2 --input " + q(kBx),
               {"key \"a\": the zip directory claims 4294967280 bytes from 99 compressed bytes, "
                "more than deflate "
                "can expand (1032:1)"},
               "e_claims");
  expect_error("--weights " + q(regressions + "npz/issue12_zip64_claims_1tb.npz") +
                   " --heads 2 --input " + q(kBx),
               {"the zip directory claims 1000000000000 bytes"}, "e_zip64");
  expect_error("--weights " + q(regressions + "npz/issue12_duplicate_member.npz") +
                   " --heads 2 --input " + q(kBx),
               {"two members are named \"a.npy\" (a zip archive with duplicate names; numpy.savez "
                "never writes one)"},
               "e_duplicate");
  expect_error("--weights " + q(kB) + " --heads 2 --input " +
                   q(regressions + "npy/issue12_shape_2pow64_plus_2.npy"),
               {"npy header 'shape' (18446744073709551618, 8) has dimension 18446744073709551618, "
                "larger than NumPy "
                "allows (2^63 - 1)"},
               "e_wrap");
}

TEST(EncodeAppErrors, PaddingMask) {
  expect_error(
      "--weights " + q(kB) + " --heads 2 --input " + q(kBx) + " --padding-mask " +
          q(data_path("app_c_mask.npy")),
      {"--padding-mask", "app_c_mask.npy has shape [4], expected [B, T] = [3, 5] or [T] = [5]"},
      "e_mask_shape");
  expect_error("--weights " + q(kB) + " --heads 2 --input " + q(kBx) + " --padding-mask " + q(kBx),
               {"app_b_x.npy", "dtype is '<f4' (float32), expected bool '|b1'"}, "e_mask_dtype");
}

TEST(EncodeAppErrors, CommandLine) {
  // CLI11 reports usage errors itself, also with a non-zero status
  RunResult r = encode("--weights " + q(kB) + " --heads 2 --input " + q(kBx), "e_no_output");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--output is required"), std::string::npos) << r.err;
  r = encode(
      "--weights " + q(kB) + " --heads 2 --activation tanh --input " + q(kBx) + " --output x.npy",
      "e_activation");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("tanh"), std::string::npos) << r.err;
}

// init_encoder saves weights built (and trained) in xencoder with PyTorch's key set: the
// state_dict names of nn.TransformerEncoder with 2 layers and a final norm.
TEST(InitEncoderApp, SavesPyTorchKeys) {
  const std::string w = tmp_path("init.npz");
  const RunResult r = run(XENC_INIT_ENCODER_APP,
                          "--layers 2 --d-model 8 --heads 2 --dim-feedforward 16 --final-norm "
                          "--train-steps 3 --output " +
                              q(w),
                          "init_encoder");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto s = xenc::load_npz(w);
  std::set<std::string> keys;
  for (const auto& kv : s) keys.insert(kv.first);
  std::set<std::string> expected = {"norm.weight", "norm.bias"};
  for (const char* l : {"layers.0.", "layers.1."})
    for (const char* k :
         {"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
          "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
          "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"})
      expected.insert(std::string(l) + k);
  EXPECT_EQ(keys, expected);
  EXPECT_EQ(s.at("layers.1.linear2.weight").shape(), (xt::xarray<float>::shape_type{8, 16}));
  // training moved the norm weights away from PyTorch's initial ones
  EXPECT_NE(s.at("layers.0.norm1.weight"), xt::xarray<float>(xt::ones<float>({8})));
  // and encode accepts it
  const RunResult e = encode("--weights " + q(w) + " --heads 2 --input " + q(kBx) + " --output " +
                                 q(tmp_path("init_y.npy")),
                             "init_encode");
  EXPECT_EQ(e.status, 0) << e.err;
}
