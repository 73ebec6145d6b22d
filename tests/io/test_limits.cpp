// Files crafted to make the loaders allocate gigabytes, lie about sizes or overflow, each built
// here byte by byte (a few hundred bytes; nothing large is written or committed), and the
// message each one gets. Issue 12, items 5, 6 and 9.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>

#include "io_test_util.hpp"
#include "xenc/io/npy.hpp"
#include "xenc/io/npz.hpp"
#include "xenc/io/state_dict.hpp"
#include "zip_builder.hpp"

using namespace xenc_test;

namespace {

// An .npy header for any shape text, as numpy.lib.format writes it (padded to 64 bytes).
std::string npy_with_shape(const std::string& shape, const std::string& descr = "'<f4'",
                           const std::string& data = "") {
  std::string dict = "{'descr': " + descr + ", 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict + data;
}

// A real deflated member (1000 float32 zeros compress to a few dozen bytes), as libzip writes it.
ZipMember deflated_zeros_member() {
  const std::string path = tmp_path("zeros_deflated.npz");
  xenc::save_npz(path, {{"a", xt::zeros<float>({1000})}}, true);
  const ZipMember m = first_member(read_text(path));
  EXPECT_EQ(m.method, 8);
  EXPECT_EQ(m.name, "a.npy");
  EXPECT_EQ(m.size, 128u + 4000u);
  return m;
}

std::string write_bytes(const std::string& name, const std::string& bytes) {
  const std::string path = tmp_path(name);
  xenc::write_file_bytes(path, bytes, "test");
  return path;
}

}  // namespace

// ---- item 5: zip directory claims ---------------------------------------------------------------

TEST(NpzClaims, DeflatedMemberClaiming4GiBIsRefusedBeforeReading) {
  ZipMember m = deflated_zeros_member();
  m.size = 0xFFFFFFF0u;  // 4 GiB - 16, claimed in both headers; the data stays a few dozen bytes
  const std::string path = write_bytes("claims_4gib.npz", zip_archive({m}));
  EXPECT_LT(std::filesystem::file_size(path), 1000u);
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_npz(path); },
      {"load_npz", "claims_4gib.npz", "key \"a\"", "the zip directory claims 4294967280 bytes",
       "more than deflate can expand"}));
}

TEST(NpzClaims, StoredMemberClaiming4GiBIsRefused) {
  ZipMember m = stored_member("a.npy", xenc::format_npy(xt::zeros<float>({4})));
  m.size = 0xFFFFFFF0u;
  const std::string path = write_bytes("stored_claims_4gib.npz", zip_archive({m}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_npz(path); },
      {"stored_claims_4gib.npz", "key \"a\"", "the zip directory claims 4294967280 bytes",
       "stored (uncompressed) member of 144 bytes"}));
}

TEST(NpzClaims, Zip64ClaimOf1TBIsRefused) {
  ZipMember m = deflated_zeros_member();
  m.size = 1000000000000ull;  // 1 TB, only expressible as a zip64 size
  m.zip64 = true;
  const std::string path = write_bytes("zip64_1tb.npz", zip_archive({m}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_npz(path); },
      {"zip64_1tb.npz", "key \"a\"", "the zip directory claims 1000000000000 bytes"}));
  // Stored, the same claim would also be the compressed size: more than the whole file.
  ZipMember s = stored_member("a.npy", xenc::format_npy(xt::zeros<float>({4})));
  s.size = 1000000000000ull;
  s.zip64 = true;
  std::string bytes = zip_archive({s});
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([&] { xenc::parse_npz(bytes, "zip64_stored"); },
                                 {"parse_npz: zip64_stored", "key \"a\"", "1000000000000"}));
}

TEST(NpzClaims, HonestZip64MemberLoads) {
  // The builder itself is right: the same member with its true size, as zip64, loads.
  ZipMember m = deflated_zeros_member();
  m.zip64 = true;
  const auto state = xenc::parse_npz(zip_archive({m}), "zip64_ok");
  ASSERT_EQ(state.count("a"), 1u);
  EXPECT_EQ(state.at("a"), xt::zeros<float>({1000}));
}

TEST(NpzClaims, NpyHeaderMustAgreeWithTheDirectory) {
  // A claim deflate could reach (20,000 bytes from a few dozen) that the .npy header inside
  // contradicts (128 + 1000 · 4 = 4128 bytes): refused after the header, before reading on.
  ZipMember m = deflated_zeros_member();
  m.size = 20000;
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([&] { xenc::parse_npz(zip_archive({m}), "liar.npz"); },
                                 {"liar.npz", "key \"a\"", "the .npy header says 4128 bytes",
                                  "shape [1000]", "the zip directory claims 20000 bytes"}));
}

TEST(NpzClaims, OnlyStoredAndDeflatedMembers) {
  // Method 12 (bzip2) can expand far more than deflate: refused, not trusted.
  ZipMember m = stored_member("a.npy", xenc::format_npy(xt::zeros<float>({4})));
  m.method = 12;
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::parse_npz(zip_archive({m}), "bz.npz"); },
      {"bz.npz", "key \"a\"", "compression method 12 is not supported"}));
}

TEST(NpzClaims, DuplicateMemberIsNamed) {
  const std::string npy = xenc::format_npy(xt::zeros<float>({2}));
  const std::string path = write_bytes(
      "duplicate.npz", zip_archive({stored_member("b.npy", npy), stored_member("w.npy", npy),
                                    stored_member("b.npy", npy)}));
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([&] { xenc::load_npz(path); },
                                 {"load_npz", "duplicate.npz", "two members are named \"b.npy\""}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::parse_npz(read_text(path), "dup"); },
                                         {"two members are named \"b.npy\""}));
}

// ---- the limits the caller can raise ------------------------------------------------------------

TEST(LoadLimits, DefaultsAreDocumented) {
  const xenc::LoadLimits limits;
  EXPECT_EQ(limits.max_array_bytes, std::size_t(128) << 20);
  EXPECT_EQ(limits.max_total_bytes, std::size_t(256) << 20);
  EXPECT_EQ(limits.max_header_bytes, 10000u);
  EXPECT_EQ(limits.max_meta_bytes, std::size_t(4) << 20);
  EXPECT_EQ(limits.max_sequence_length, 2048u);
}

TEST(LoadLimits, ArrayLimitRefusesAndCanBeRaised) {
  const std::string npy = tmp_path("limit_1000.npy"), npz = tmp_path("limit_1000.npz");
  xenc::save_npy(npy, xt::ones<float>({10, 100}));  // 4000 data bytes
  xenc::save_npz(npz, {{"w", xt::ones<float>({10, 100})}});
  xenc::LoadLimits small;
  small.max_array_bytes = 3999;
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([&] { xenc::load_npy(npy, small); },
                                 {"load_npy", "limit_1000.npy", "LoadLimits::max_array_bytes"}));
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([&] { xenc::load_npz(npz, small); },
                                 {"load_npz", "key \"w\"", "LoadLimits::max_array_bytes = 3999"}));
  // In memory the header is parsed first: the message has the shape and both byte counts.
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::parse_npy(xenc::format_npy(xt::ones<float>({10, 100})), "m", small); },
      {"array of shape [10, 100]", "has 4000 bytes", "LoadLimits::max_array_bytes = 3999 bytes"}));
  small.max_array_bytes = 4000;  // exactly enough
  EXPECT_EQ(xenc::load_npy(npy, small), xt::ones<float>({10, 100}));
  EXPECT_EQ(xenc::load_npz(npz, small).at("w"), xt::ones<float>({10, 100}));
}

TEST(LoadLimits, TotalLimitCountsEveryMember) {
  const std::string npz = tmp_path("limit_total.npz");
  xenc::save_npz(npz, {{"a", xt::ones<float>({100})}, {"b", xt::ones<float>({100})}});  // 2 × 528
  xenc::LoadLimits limits;
  limits.max_total_bytes = 1000;
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_npz(npz, limits); },
      {"key \"b\"", "claim 1056 bytes", "LoadLimits::max_total_bytes = 1000"}));
  limits.max_total_bytes = 1056;
  EXPECT_EQ(xenc::load_npz(npz, limits).size(), 2u);
}

TEST(LoadLimits, HeaderLimitAsNumpy) {
  // numpy.load refuses headers over 10,000 bytes (max_header_size); so do we.
  std::string npy = npy_with_shape("(1,)", "'<f4'");
  std::string long_header =
      npy_with_shape("(1," + std::string(10050, ' ') + ")", "'<f4'", std::string(4, '\0'));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::parse_npy(long_header, "long.npy"); },
                                         {"long.npy", "LoadLimits::max_header_bytes = 10000"}));
}

// ---- item 6: header integers --------------------------------------------------------------------

TEST(NpyOverflow, DimensionAbove2To63IsRefusedNotWrapped) {
  // 18446744073709551618 = 2^64 + 2 would wrap to 2 in a uint64; with 2 · 8 float32 values of
  // data present the file would otherwise load as [2, 8]. NumPy: "OverflowError: Python int too
  // large to convert to C long".
  const std::string bytes =
      npy_with_shape("(18446744073709551618, 8)", "'<f4'", std::string(64, '\0'));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::parse_npy(bytes, "wrap.npy"); },
      {"wrap.npy", "dimension 18446744073709551618", "larger than NumPy allows (2^63 - 1)"}));
  EXPECT_THROW(xenc::parse_npy_header(bytes, "wrap.npy"), xenc::io_error);
  // 2^63 exactly is one too many; 2^63 - 1 passes the header check (and then lacks its data).
  EXPECT_THROW(xenc::parse_npy_header(npy_with_shape("(9223372036854775808,)", "'|b1'"), "x"),
               xenc::io_error);
  EXPECT_EQ(xenc::parse_npy_header(npy_with_shape("(9223372036854775807,)", "'|b1'"), "x").shape[0],
            9223372036854775807ull);
}

TEST(NpyOverflow, ProductThatOverflowsIsRefused) {
  // 2^32 · 2^32 = 2^64 elements: each dimension fits, the product does not (NumPy: "cannot
  // reshape array of size 0", its int64 product wrapped to 0). With float32, 2^31 · 2^31 · 4
  // bytes = 2^64 overflows too.
  for (const std::string shape :
       {"(4294967296, 4294967296)", "(2147483648, 2147483648)", "(3, 3074457345618258603)"}) {
    SCOPED_TRACE(shape);
    EXPECT_TRUE(
        ThrowsWith<xenc::io_error>([&] { xenc::parse_npy_header(npy_with_shape(shape), "p.npy"); },
                                   {"p.npy", "is too large", "signed 64-bit"}));
  }
  // Zero in the shape: an empty array, but the other dimensions must still fit (NumPy 1.24:
  // np.empty((0, 2**63 - 1), np.float32) is "array is too big"; xtensor's strides multiply them).
  EXPECT_EQ(xenc::parse_npy(npy_with_shape("(0, 1000)"), "z").size(), 0u);
  for (const std::string shape : {"(0, 9223372036854775807)", "(0, 4294967294967296, 4294)"}) {
    SCOPED_TRACE(shape);
    EXPECT_TRUE(
        ThrowsWith<xenc::io_error>([&] { xenc::parse_npy_header(npy_with_shape(shape), "z.npy"); },
                                   {"z.npy", "is too large", "signed 64-bit"}));
  }
}

TEST(NpyHeaderText, UnquotedDtypeIsNotCalledStructured) {
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::parse_npy(npy_with_shape("(2,)", "<f4", std::string(8, '\0')), "unquoted.npy"); },
      {"unquoted.npy", "'descr' is not a quoted string (found <f4)",
       "expected a dtype in quotes such as '<f4'"}));
  try {
    xenc::parse_npy(npy_with_shape("(2,)", "<f4", std::string(8, '\0')), "unquoted.npy");
  } catch (const xenc::io_error& e) {
    EXPECT_EQ(std::string(e.what()).find("structured"), std::string::npos) << e.what();
  }
  // A list is a structured dtype and is still called one.
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] {
        xenc::parse_npy(npy_with_shape("(2,)", "[('x', '<f4')]", std::string(8, '\0')), "s.npy");
      },
      {"s.npy", "structured dtype"}));
}

// ---- item 9: paths that are not files -----------------------------------------------------------

TEST(FilePaths, DirectoryIsNamedAsOne) {
  const std::string dir = tmp_path("");
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npy("."); },
                                         {"load_npy", "\".\" is a directory, expected a file"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npy_bool(dir); }, {"is a directory"}));
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([&] { xenc::load_npz(dir); }, {"load_npz", "is a directory"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_transformer_encoder(dir, 2); },
                                         {"is a directory"}));
}

TEST(FilePaths, DeviceIsNotARegularFile) {
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_npy("/dev/zero"); },
                                         {"\"/dev/zero\" is not a regular file"}));
}

// ---- item 5: the state_dict key set, checked before anything is built ---------------------------

TEST(StateDictKeys, LoneFarLayerIsRefusedAtOnce) {
  const xenc::StateDict s{{"layers.100000.linear1.weight", xt::zeros<float>({4, 2})}};
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_transformer_encoder(s, 1); },
      {"layer indices are not contiguous",
       "key \"layers.100000.linear1.weight\" is in layer 100000", "there is no layer 0"}));
  // Not a timing test: building 100,001 layers takes minutes; refusing takes microseconds.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // As a file, through the same path.
  const std::string path = tmp_path("far_layer.npz");
  xenc::save_npz(path, s);
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_transformer_encoder(path, 1); },
                                         {path, "there is no layer 0"}));
}

TEST(StateDictKeys, FarLayerBesideACompleteLayerZero) {
  // The old loader read num_layers = 100,001 from this and built every layer before the key
  // check; now the gap is found on the names.
  auto s = xenc::load_npz(data_path("layer_post_relu_h2.npz"));  // one layer's keys, D = 8
  xenc::StateDict stack;
  for (const auto& kv : s) stack.emplace("layers.0." + kv.first, kv.second);
  stack["layers.100000.linear1.weight"] = xt::zeros<float>({16, 8});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_transformer_encoder(stack, 2); },
      {"key \"layers.100000.linear1.weight\" is in layer 100000, but there is no layer 1"}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(StateDictKeys, GapIsNamed) {
  auto s = xenc::load_npz(data_path("post_relu_l2_h2.npz"));  // layers 0 and 1
  xenc::StateDict shifted;
  for (const auto& kv : s) {
    std::string k = kv.first;
    if (k.compare(0, 9, "layers.1.") == 0) k = "layers.2." + k.substr(9);
    shifted.emplace(k, kv.second);
  }
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::inspect_encoder_state(shifted, "w.npz"); },
                                         {"w.npz", "is in layer 2, but there is no layer 1"}));
}

TEST(StateDictKeys, StrayKeyIsNamedNotReportedAsMissing) {
  auto s = xenc::load_npz(data_path("post_relu_l2_h2.npz"));
  s["layers.1.linear3.weight"] = xt::zeros<float>({2});
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([&] { xenc::inspect_encoder_state(s); },
                                 {"unexpected key \"layers.1.linear3.weight\" with shape [2]"}));
  s.erase("layers.1.linear3.weight");
  s["layers.01.norm1.weight"] = xt::zeros<float>({8});  // PyTorch never writes a leading zero
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::inspect_encoder_state(s); },
                                         {"unexpected key \"layers.01.norm1.weight\""}));
  s.erase("layers.01.norm1.weight");
  // A single layer with a stray key.
  auto one = xenc::load_npz(data_path("layer_post_relu_h2.npz"));
  one["norm3.weight"] = xt::zeros<float>({8});
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_transformer_encoder(one, 2); },
                                         {"unexpected key \"norm3.weight\" with shape [8]"}));
}

TEST(StateDictKeys, LayerWithoutItsKeysIsCheckedBeforeBuilding) {
  // Layer 1 lacks every key but one: "missing key" naming the first absent one with its shape.
  auto s = xenc::load_npz(data_path("post_relu_l2_h2.npz"));
  for (auto it = s.begin(); it != s.end();)
    it = it->first.compare(0, 9, "layers.1.") == 0 && it->first != "layers.1.norm2.bias"
             ? s.erase(it)
             : std::next(it);
  EXPECT_TRUE(ThrowsWith<xenc::io_error>([&] { xenc::load_transformer_encoder(s, 2); },
                                         {"missing key \"layers.1.", "= ["}));
}
