// .npy: the format by hand, files written by NumPy (tests/io/generate.py), round trips, and
// every file xencoder must refuse, with its message.
#include <gtest/gtest.h>

#include <cstring>

#include "io_test_util.hpp"
#include "xenc/io/npy.hpp"

using namespace xenc_test;

namespace {
// generate.py: a = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
xt::xarray<float> arange_2x3() {
  return xt::xarray<float>{{0.0f, 0.25f, 0.5f}, {0.75f, 1.0f, 1.25f}};
}
}  // namespace

// Hand example: [2, 3] float32 is magic (6) + version (2) + header length (2) + the 60-character
// dict + '\n' = 71 bytes, padded with spaces to the next multiple of 64 (128; header length
// 128 - 10 = 118), then 6 · 4 = 24 data bytes: 152 bytes.
TEST(Npy, FormatByHand) {
  const std::string bytes = xenc::format_npy(arange_2x3());
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(bytes.substr(0, 6), std::string("\x93NUMPY"));
  EXPECT_EQ(bytes[6], 1);  // version 1.0
  EXPECT_EQ(bytes[7], 0);
  EXPECT_EQ(static_cast<unsigned char>(bytes[8]) + 256 * static_cast<unsigned char>(bytes[9]), 118);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes[127], '\n');
  EXPECT_EQ(bytes[70], ' ');
  float second;
  std::memcpy(&second, bytes.data() + 128 + 4, 4);
  EXPECT_EQ(second, 0.25f);
}

// Our writer produces exactly the bytes numpy.save wrote for the same arrays.
TEST(Npy, SaveIsByteIdenticalToNumpy) {
  EXPECT_EQ(xenc::format_npy(arange_2x3()), read_text(format_path("f4_2x3.npy")));
  xt::xarray<bool> m{{true, false, true}, {false, false, true}};
  EXPECT_EQ(xenc::format_npy_bool(m), read_text(format_path("b1_2x3.npy")));
  EXPECT_EQ(xenc::format_npy(xt::xarray<float>(2.5f)), read_text(format_path("f4_scalar.npy")));
}

TEST(Npy, LoadsWhatNumpyWrites) {
  const auto expected = arange_2x3();
  EXPECT_TRUE(AllClose(xenc::load_npy(format_path("f4_2x3.npy")), expected, 0.0f));
  EXPECT_TRUE(AllClose(xenc::load_npy(format_path("f8_2x3.npy")), expected, 0.0f));  // float64
  EXPECT_TRUE(
      AllClose(xenc::load_npy(format_path("f4_2x3_v2.npy")), expected, 0.0f));  // format 2.0
  const auto scalar = xenc::load_npy(format_path("f4_scalar.npy"));
  EXPECT_EQ(scalar.dimension(), 0u);
  EXPECT_EQ(scalar(), 2.5f);
  const auto empty = xenc::load_npy(format_path("f4_empty_0x3.npy"));
  EXPECT_EQ(empty.shape(0), 0u);
  EXPECT_EQ(empty.shape(1), 3u);
  const auto m = xenc::load_npy_bool(format_path("b1_2x3.npy"));
  ASSERT_EQ(m.dimension(), 2u);
  EXPECT_TRUE(m(0, 0) && !m(0, 1) && m(0, 2) && !m(1, 0) && !m(1, 1) && m(1, 2));
  const auto h = xenc::load_npy_header(format_path("f4_2x3_v2.npy"));
  EXPECT_EQ(h.major_version, 2);
  EXPECT_EQ(h.descr, "<f4");
  EXPECT_EQ(h.size(), 6u);
}

// float64 values are rounded to the nearest float32 (not truncated).
TEST(Npy, Float64IsRoundedToFloat32) {
  const double v = 0.1;  // not representable; float(0.1) is the nearest float32
  std::string bytes = xenc::format_npy(xt::xarray<float>{0.0f});
  // rewrite the header's dtype to <f8 and the data to 8 bytes (same header length)
  bytes.replace(bytes.find("<f4"), 3, "<f8");
  bytes.resize(bytes.size() - 4);
  bytes.append(reinterpret_cast<const char*>(&v), 8);
  EXPECT_EQ(xenc::parse_npy(bytes, "test")(0), 0.1f);
}

TEST(Npy, RoundTripFloatAndBool) {
  xt::xarray<float> a = xt::xarray<float>::from_shape({2, 3, 4});
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = 0.37f * float(i) - 3.0f;
  xenc::save_npy(tmp_path("rt.npy"), a);
  EXPECT_EQ(xenc::load_npy(tmp_path("rt.npy")), a);
  xt::xarray<bool> m{true, false, false, true, true};
  xenc::save_npy_bool(tmp_path("rt_mask.npy"), m);
  EXPECT_EQ(xenc::load_npy_bool(tmp_path("rt_mask.npy")), m);
}

// ---- errors: each names the function, the file, what was found and what was expected --------

TEST(NpyErrors, OtherDtypes) {
  const std::string f = format_path("i8_2x3.npy");
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_npy(f); },
      {"load_npy", f, "dtype is '<i8'", "expected float32 '<f4' or float64 '<f8'"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npy(format_path("f2_2x3.npy")); },
                                         {"f2_2x3.npy", "dtype is '<f2'"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npy(format_path("struct.npy")); },
                                         {"struct.npy", "structured dtype"}));
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([&] { xenc::load_npy(format_path("b1_2x3.npy")); },
                                 {"b1_2x3.npy", "dtype is '|b1' (bool)", "expected float32"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_npy_bool(format_path("f4_2x3.npy")); },
      {"load_npy_bool", "f4_2x3.npy", "dtype is '<f4' (float32)", "expected bool '|b1'"}));
}

TEST(NpyErrors, FortranOrder) {
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_npy(format_path("f4_2x3_fortran.npy")); },
      {"f4_2x3_fortran.npy", "shape [2, 3]", "Fortran order", "expected C order"}));
}

TEST(NpyErrors, BigEndian) {
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_npy(format_path("f4be_2x3.npy")); },
      {"f4be_2x3.npy", "'>f4'", "big-endian", "expected little-endian"}));
}

TEST(NpyErrors, Truncated) {
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_npy(format_path("f4_2x3_truncated.npy")); },
      {"f4_2x3_truncated.npy", "truncated", "data has 19 bytes, expected 24", "shape [2, 3]"}));
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([&] { xenc::load_npy(format_path("f4_2x3_header_cut.npy")); },
                                 {"f4_2x3_header_cut.npy", "truncated", "header"}));
  std::string bytes = xenc::format_npy(arange_2x3()) + "xx";
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::parse_npy(bytes, "extra.npy"); },
                                         {"extra.npy", "26 bytes, expected 24", "trailing"}));
}

TEST(NpyErrors, NotAnNpyFileOrMissing) {
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npy(format_path("not_a_zip.npz")); },
                                         {"not_a_zip.npz", "not an .npy file"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npy(format_path("missing.npy")); },
                                         {"load_npy", "cannot open", "missing.npy"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::save_npy(tmp_path("no_such_dir/x.npy"), arange_2x3()); },
      {"save_npy", "cannot open", "no_such_dir/x.npy"}));
}

TEST(NpyErrors, ShapeTooLarge) {
  std::string bytes = xenc::format_npy(xt::xarray<float>{0.0f});
  const std::string from = "'shape': (1,), }";
  const std::string to = "'shape': (4611686018427387904, 8), }";  // 2^62 · 8 · 4 bytes
  const auto pos = bytes.find(from);
  ASSERT_NE(pos, std::string::npos);
  bytes.replace(pos, from.size(), to);
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::parse_npy(bytes, "huge.npy"); },
                                         {"huge.npy", "too large"}));
}
