// .npz: archives written by numpy.savez (stored) and numpy.savez_compressed (deflated), our own
// archives read back, and broken archives with their messages.
#include <gtest/gtest.h>

#include "io_test_util.hpp"
#include "xenc/io/npz.hpp"

using namespace xenc_test;

namespace {
// generate.py: np.savez(path, a=np.arange(6, dtype=np.float32).reshape(2, 3) / 4, b=np.float32([1,
// 2]))
void expect_a_and_b(const xenc::StateDict& s) {
  ASSERT_EQ(s.size(), 2u);
  EXPECT_TRUE(
      AllClose(s.at("a"), xt::xarray<float>{{0.0f, 0.25f, 0.5f}, {0.75f, 1.0f, 1.25f}}, 0.0f));
  EXPECT_TRUE(AllClose(s.at("b"), xt::xarray<float>{1.0f, 2.0f}, 0.0f));
}
}  // namespace

TEST(Npz, LoadsNumpySavezStored) { expect_a_and_b(xenc::load_npz(format_path("stored.npz"))); }

TEST(Npz, LoadsNumpySavezCompressed) {
  expect_a_and_b(xenc::load_npz(format_path("deflated.npz")));
}

TEST(Npz, Float64MembersBecomeFloat32) {
  const auto s = xenc::load_npz(format_path("f8.npz"));
  EXPECT_TRUE(
      AllClose(s.at("a"), xt::xarray<float>{{0.0f, 0.25f, 0.5f}, {0.75f, 1.0f, 1.25f}}, 0.0f));
}

TEST(Npz, MembersKeepOtherDtypesAsBytes) {
  const auto members = xenc::load_npz_members(format_path("int_member.npz"));
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(xenc::parse_npy_header(members.at("count"), "count").descr, "<i8");
}

TEST(Npz, RoundTripStoredAndCompressed) {
  xenc::StateDict s;
  s["layers.0.linear1.weight"] = xt::xarray<float>::from_shape({5, 3});
  for (std::size_t i = 0; i < 15; ++i) s["layers.0.linear1.weight"].data()[i] = 1.0f / float(i + 1);
  s["norm.bias"] = xt::xarray<float>{-1.5f, 0.0f, 3.25f};
  s["zeros"] = xt::zeros<float>({64, 64});
  for (bool compressed : {false, true}) {
    SCOPED_TRACE(compressed ? "compressed" : "stored");
    const std::string path = tmp_path(compressed ? "rt_deflated.npz" : "rt_stored.npz");
    xenc::save_npz(path, s, compressed);
    const auto back = xenc::load_npz(path);
    ASSERT_EQ(back.size(), s.size());
    for (const auto& kv : s) EXPECT_EQ(back.at(kv.first), kv.second) << kv.first;
  }
  // 16 KiB of zeros deflate to almost nothing; stored they do not.
  EXPECT_LT(read_text(tmp_path("rt_deflated.npz")).size(), 2000u);
  EXPECT_GT(read_text(tmp_path("rt_stored.npz")).size(), 64u * 64u * 4u);
}

TEST(Npz, EmptyArchive) {
  xenc::save_npz(tmp_path("empty.npz"), {});
  EXPECT_TRUE(xenc::load_npz(tmp_path("empty.npz")).empty());
}

TEST(Npz, BoolMemberRoundTrip) {
  xt::xarray<bool> m{{false, true}, {true, true}};
  xenc::save_npz_members(tmp_path("mask.npz"), {{"mask", xenc::format_npy_bool(m)}}, true);
  const auto members = xenc::load_npz_members(tmp_path("mask.npz"));
  EXPECT_EQ(xenc::parse_npy_bool(members.at("mask"), "mask"), m);
}

// ---- errors ----------------------------------------------------------------------------------

TEST(NpzErrors, MemberOfAnotherDtypeNamesFileAndKey) {
  const std::string f = format_path("int_member.npz");
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npz(f); },
                                         {"load_npz", f, "key \"count\"", "dtype is '<i8'",
                                          "expected float32 '<f4' or float64 '<f8'"}));
}

TEST(NpzErrors, FortranMember) {
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npz(format_path("fortran_member.npz")); },
                                         {"fortran_member.npz", "key \"a\"", "Fortran order"}));
}

TEST(NpzErrors, CorruptMemberFailsItsCrc) {
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npz(format_path("crc.npz")); },
                                         {"crc.npz", "key \"a\"", "CRC"}));
}

TEST(NpzErrors, TruncatedArchive) {
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([&] { xenc::load_npz(format_path("truncated.npz")); },
                                 {"load_npz", "truncated.npz", "cannot open as a zip archive"}));
}

TEST(NpzErrors, NotAZipOrMissing) {
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npz(format_path("not_a_zip.npz")); },
                                         {"not_a_zip.npz", "Not a zip archive"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npz(format_path("missing.npz")); },
                                         {"missing.npz", "No such file"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npz(format_path("f4_2x3.npy")); },
                                         {"f4_2x3.npy", "cannot open as a zip archive"}));
}

TEST(NpzErrors, CannotWrite) {
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::save_npz(tmp_path("no_such_dir/w.npz"), {{"a", xt::xarray<float>{1.0f}}}); },
      {"save_npz", "no_such_dir/w.npz"}));
}

// Saving over an existing file that is not a zip archive replaces it.
TEST(Npz, SaveReplacesAnyExistingFile) {
  const std::string path = tmp_path("was_text.npz");
  xenc::write_file_bytes(path, "not a zip archive\n", "test");
  xenc::save_npz(path, {{"a", xt::xarray<float>{1.0f, 2.0f}}});
  EXPECT_EQ(xenc::load_npz(path).at("a"), (xt::xarray<float>{1.0f, 2.0f}));
}
