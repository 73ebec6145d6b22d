// Issue 17: crafted checkpoints, archives and .npy headers, each built here by a small generator
// (nothing large is committed; the big ones are deflated in memory and written as a few hundred
// KiB), and what each one gets. The cases that cost gigabytes before the fix run in a child
// process whose address space is limited (RLIMIT_AS), so that a regression fails the test
// instead of exhausting the machine.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>

#include <nlohmann/json.hpp>

#include "io_test_util.hpp"
#include "xenc/io/checkpoint.hpp"
#include "xenc/io/npy.hpp"
#include "xenc/io/npz.hpp"
#include "xenc/io/state_dict.hpp"
#include "zip_builder.hpp"

using namespace xenc_test;

namespace {

// ---- generators ---------------------------------------------------------------------------------

// Raw deflate (as zip method 8 stores it) of head + n copies of `unit` + tail. Each part is
// compressed after a full flush, which makes it decodable without what came before, so one
// compressed 1 MiB piece of units is repeated instead of compressing every copy: an 800 MB
// member takes a fraction of a second and a few MiB.
std::string deflate_repeated(const std::string& head, const std::string& unit, std::size_t n,
                             const std::string& tail, std::uint32_t* crc) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::vector<unsigned char> buf(1 << 16);
  auto compress = [&](const std::string& in, int flush) {
    std::string out;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    do {
      z.next_out = buf.data();
      z.avail_out = static_cast<uInt>(buf.size());
      deflate(&z, flush);
      out.append(reinterpret_cast<char*>(buf.data()), buf.size() - z.avail_out);
    } while (z.avail_out == 0);
    return out;
  };
  auto crc_of = [](const std::string& s) {
    return crc32(0L, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size()));
  };
  const std::size_t per_piece = std::max<std::size_t>(1, (1 << 20) / unit.size());
  std::string piece;
  for (std::size_t k = 0; k < std::min(per_piece, n); ++k) piece += unit;
  std::string rest;
  for (std::size_t k = 0; k < n % per_piece; ++k) rest += unit;
  std::string out = compress(head, Z_FULL_FLUSH);
  uLong c = crc_of(head);
  const std::string packed_piece = compress(piece, Z_FULL_FLUSH);
  const uLong piece_crc = crc_of(piece);
  for (std::size_t k = 0; k < n / per_piece; ++k) {
    out += packed_piece;
    c = crc32_combine(c, piece_crc, static_cast<z_off_t>(piece.size()));
  }
  out += compress(rest, Z_FULL_FLUSH);
  c = crc32_combine(c, crc_of(rest), static_cast<z_off_t>(rest.size()));
  out += compress(tail, Z_FINISH);
  c = crc32_combine(c, crc_of(tail), static_cast<z_off_t>(tail.size()));
  deflateEnd(&z);
  *crc = static_cast<std::uint32_t>(c);
  return out;
}

// The .npy header of a 1-d uint8 array of n bytes (what save_checkpoint writes for xenc.meta).
std::string uint8_header(std::size_t n) {
  std::string npy = xenc::format_npy_uint8(xt::xarray<std::uint8_t>::from_shape({std::size_t(1)}));
  npy.pop_back();  // the one data byte
  const std::string one = "'shape': (1,)", real = "'shape': (" + std::to_string(n) + ",)";
  npy.replace(npy.find(one), one.size(), real);
  npy.erase(npy.size() - 1 - (real.size() - one.size()),
            real.size() - one.size());  // keep 64-byte alignment
  return npy;
}

// A member whose .npy bytes are head + n · unit + tail, deflated.
ZipMember deflated_member(const std::string& name, const std::string& head, const std::string& unit,
                          std::size_t n, const std::string& tail) {
  ZipMember m;
  m.name = name;
  m.method = 8;
  m.data = deflate_repeated(head, unit, n, tail, &m.crc);
  m.size = head.size() + unit.size() * n + tail.size();
  return m;
}

xenc::EncoderModelConfig small_config() {
  xenc::EncoderModelConfig c;
  c.vocab_size = 5;
  c.layer.d_model = 8;
  c.layer.nhead = 2;
  c.layer.dim_feedforward = 16;
  c.layer.dropout = 0.0f;
  c.num_layers = 1;
  c.position = xenc::PositionKind::learned;
  c.max_len = 12;
  return c;
}

// A good small checkpoint; returns its members (meta JSON editable).
std::map<std::string, std::string> good_members() {
  xenc::TokenClassifier model(small_config(), 2);
  xenc::Vocabulary vocab;
  for (const char* w : {"a", "b", "c"}) vocab.add(w);
  const std::string path = tmp_path("crafted_good.npz");
  xenc::save_checkpoint(path, model, vocab, {"agent", "patient"});
  return xenc::load_npz_members(path);
}

nlohmann::json meta_of(const std::map<std::string, std::string>& members) {
  const auto bytes = xenc::parse_npy_uint8(members.at("xenc.meta"), "meta");
  return nlohmann::json::parse(std::string(bytes.begin(), bytes.end()));
}

std::string with_meta(std::map<std::string, std::string> members, const std::string& text,
                      const std::string& name) {
  xt::xarray<std::uint8_t> b = xt::xarray<std::uint8_t>::from_shape({text.size()});
  std::copy(text.begin(), text.end(), b.begin());
  members["xenc.meta"] = xenc::format_npy_uint8(b);
  const std::string path = tmp_path(name);
  xenc::save_npz_members(path, members);
  return path;
}

std::string tampered(const std::function<void(nlohmann::json&)>& edit, const std::string& name) {
  const auto members = good_members();
  nlohmann::json meta = meta_of(members);
  edit(meta);
  return with_meta(members, meta.dump(), name);
}

// ---- a child process with a memory limit --------------------------------------------------------

struct ChildResult {
  bool refused = false;       // f threw std::invalid_argument
  std::string message;        // its what(), or how the child ended
  double peak_rss_mib = 0.0;  // the child's peak resident memory (wait4's rusage)
};

// Runs f in a child whose address space may grow by at most `extra` bytes beyond the parent's.
ChildResult load_in_child(const std::function<void()>& f, std::size_t extra = std::size_t(1)
                                                                              << 30) {
  std::size_t vm_now = 0;
  {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
      if (line.rfind("VmSize:", 0) == 0) vm_now = std::stoull(line.substr(7)) * 1024;
  }
  int fds[2];
  if (pipe(fds) != 0) return {false, "pipe failed"};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const rlimit limit{vm_now + extra, vm_now + extra};
    setrlimit(RLIMIT_AS, &limit);
    std::string text;
    int code = 2;
    try {
      f();
      text = "loaded without an error";
    } catch (const std::invalid_argument& e) {
      text = e.what();
      code = 0;
    } catch (const std::exception& e) {
      text = std::string("another exception: ") + e.what();
    }
    if (write(fds[1], text.data(), text.size()) < 0) code = 3;
    _exit(code);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  ChildResult r;
  r.peak_rss_mib = double(usage.ru_maxrss) / 1024.0;
  r.refused = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  r.message = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status)) : text;
  return r;
}

::testing::AssertionResult RefusedWith(const ChildResult& r,
                                       const std::vector<std::string>& parts) {
  if (!r.refused) return ::testing::AssertionFailure() << "not refused: " << r.message;
  for (const auto& p : parts)
    if (r.message.find(p) == std::string::npos)
      return ::testing::AssertionFailure()
             << "message \"" << r.message << "\" lacks \"" << p << "\"";
  std::printf("    refused, child's peak RSS %.0f MiB: %s\n", r.peak_rss_mib, r.message.c_str());
  return ::testing::AssertionSuccess() << r.message;
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

// ---- item 2: the metadata's size, before it is read ---------------------------------------------

// The file: 854 KB on disk, xenc.meta holding 800 MB of JSON, which the old loader
// inflated and parsed in full (14.4 GB, then SIGABRT).
TEST(CraftedCheckpoint, EightHundredMegabyteMetaIsRefusedBeforeReading) {
  const std::size_t n = 800000000;  // bytes of JSON text
  const std::string tail = "\"}";
  std::string head = "{\"format\": \"xencoder-checkpoint\", \"extra\": \"";
  head.append((n - head.size() - tail.size()) % 1000, ' ');
  const ZipMember meta =
      deflated_member("xenc.meta.npy", uint8_header(n) + head, std::string(1000, ' '),
                      (n - head.size() - tail.size()) / 1000, tail);
  EXPECT_EQ(meta.size, uint8_header(n).size() + n);
  const std::string path = tmp_path("meta_800mb.npz");
  xenc::write_file_bytes(path, zip_archive({meta}), "test");
  EXPECT_LT(read_text(path).size(), 1000000u);
  const ChildResult r = load_in_child([&] { xenc::load_checkpoint(path); });
  EXPECT_TRUE(RefusedWith(r, {"load_checkpoint: " + path + ": xenc.meta",
                              "LoadLimits::max_meta_bytes = 4194304 bytes (4.0 MiB)"}));
  EXPECT_TRUE(RefusedWith(load_in_child([&] { xenc::read_checkpoint_meta(path); }),
                          {"xenc.meta", "max_meta_bytes"}));
}

// A vocabulary of 10 million words: refused by the metadata limit by default, and by the
// embedding it implies (estimated from the config) when the caller raises that limit; a small
// config with a huge vocabulary list is cut off while the list is parsed.
TEST(CraftedCheckpoint, TenMillionWordVocabularyIsRefusedBeforeItIsBuilt) {
  nlohmann::json meta = meta_of(good_members());
  const std::size_t words = 10000000;
  for (const std::size_t vocab_size : {words + 2, std::size_t(5)}) {
    meta["config"]["vocab_size"] = vocab_size;
    meta["vocab"] = nlohmann::json::array();
    std::string text = meta.dump();
    const std::string head_text =
        text.substr(0, text.size() - 2) + "\"<pad>\", \"<unk>\"";  // ... "vocab": [
    const std::size_t n = head_text.size() + words * 5 + 2;
    ZipMember m =
        deflated_member("xenc.meta.npy", uint8_header(n) + head_text, ", \"w\"", words, "]}");
    const std::string path = tmp_path("vocab_10m_" + std::to_string(vocab_size) + ".npz");
    xenc::write_file_bytes(path, zip_archive({m}), "test");
    EXPECT_LT(read_text(path).size(), 1000000u);
    SCOPED_TRACE(vocab_size);
    EXPECT_TRUE(
        RefusedWith(load_in_child([&] { xenc::load_checkpoint(path); }),
                    {"load_checkpoint: " + path + ": xenc.meta", "LoadLimits::max_meta_bytes"}));
    xenc::LoadLimits raised;
    raised.max_meta_bytes = std::size_t(1) << 30;
    if (vocab_size == 5)
      EXPECT_TRUE(RefusedWith(load_in_child([&] { xenc::load_checkpoint(path, raised); }),
                              {"\"vocab\" has more than config.vocab_size = 5 tokens"}));
    else
      EXPECT_TRUE(RefusedWith(load_in_child([&] { xenc::load_checkpoint(path, raised); }),
                              {"\"config.vocab_size\" makes embedding.weight [V, D]",
                               "320000064 bytes", "LoadLimits::max_array_bytes"}));
  }
}

// ---- item 2: tampered metadata, field by field --------------------------------------------------

TEST(CraftedCheckpoint, TamperedMetadataNamesTheFileAndTheKey) {
  struct Case {
    const char* name;
    std::function<void(nlohmann::json&)> edit;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases{
      {"no_config", [](nlohmann::json& m) { m.erase("config"); }, {"\"config\" is missing"}},
      {"negative_vocab",
       [](nlohmann::json& m) { m["config"]["vocab_size"] = -1; },
       {"\"config.vocab_size\" is -1, expected an integer >= 2"}},
      {"negative_d_model",
       [](nlohmann::json& m) { m["config"]["d_model"] = -8; },
       {"\"config.d_model\" is -8, expected an integer >= 1"}},
      {"fraction",
       [](nlohmann::json& m) { m["config"]["dim_feedforward"] = 32.7; },
       {"\"config.dim_feedforward\" is 32.7, expected an integer"}},
      {"string_number",
       [](nlohmann::json& m) { m["config"]["num_layers"] = "1"; },
       {"\"config.num_layers\" is a string, expected an integer"}},
      {"huge",
       [](nlohmann::json& m) { m["config"]["nhead"] = std::uint64_t(18446744073709551615ull); },
       {"\"config.nhead\" is 18446744073709551615, expected an integer <= 8"}},
      {"max_len",
       [](nlohmann::json& m) { m["config"]["max_len"] = 100000; },
       {"\"config.max_len\" is 100000", "LoadLimits::max_sequence_length"}},
      {"nan_dropout",
       [](nlohmann::json& m) { m["config"]["dropout"] = 1.5; },
       {"\"config.dropout\" is 1.5, expected a number in [0, 1)"}},
      {"activation",
       [](nlohmann::json& m) { m["config"]["activation"] = "\x1b[2Jrelu"; },
       {"\"config.activation\" is not one of \"relu\", \"gelu\""}},
      {"model_rule", [](nlohmann::json& m) { m["config"]["nhead"] = 3; }, {"divisible"}},
      {"escape_label",
       [](nlohmann::json& m) { m["labels"][0] = "\x1b[31magent"; },
       {"\"labels[0]\" holds the control character U+001B at byte 0"}},
      {"newline_label",
       [](nlohmann::json& m) { m["labels"][1] = "pat\nient"; },
       {"\"labels[1]\" holds the control character U+000A at byte 3"}},
      {"c1_token",
       [](nlohmann::json& m) {
         m["vocab"][2] =
             "a\xc2\x9b"
             "2J";
       },
       {"\"vocab[2]\" holds the control character U+009B"}},
      {"label_number",
       [](nlohmann::json& m) { m["labels"][0] = 7; },
       {"\"labels[0]\" is a number, expected a string"}},
      {"version", [](nlohmann::json& m) { m["version"] = 2; }, {"\"version\" is 2, expected 1"}},
      {"short_vocab",
       [](nlohmann::json& m) { m["vocab"].erase(4); },
       {"\"vocab\" has 4 tokens, expected config.vocab_size = 5"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = tampered(c.edit, std::string("meta_") + c.name + ".npz");
    std::string msg;
    try {
      xenc::load_checkpoint(path);
      ADD_FAILURE() << "loaded";
    } catch (const xenc::io_error& e) {
      msg = e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "another exception type: " << e.what();
    }
    for (const auto& part : c.expected) EXPECT_NE(msg.find(part), std::string::npos) << msg;
    // the file named once, the function once; no JSON-library text; no raw control character
    EXPECT_EQ(count_of(msg, "load_checkpoint: " + path), 1u) << msg;
    EXPECT_EQ(count_of(msg, "load_checkpoint"), 1u) << msg;
    EXPECT_EQ(msg.find("json.exception"), std::string::npos) << msg;
    for (const char ch : msg) EXPECT_FALSE(static_cast<unsigned char>(ch) < 0x20) << msg;
  }
}

TEST(CraftedCheckpoint, MalformedJsonAndDeepNestingGiveAPosition) {
  const auto members = good_members();
  std::string msg;
  try {
    xenc::load_checkpoint(with_meta(members, "{\"format\": \x1b[31m", "meta_bad_json.npz"));
  } catch (const xenc::io_error& e) {
    msg = e.what();
  }
  EXPECT_NE(msg.find("xenc.meta: is not valid JSON (UTF-8): the parser stopped at byte 12 of 16"),
            std::string::npos)
      << msg;
  EXPECT_EQ(msg.find('\x1b'), std::string::npos) << msg;
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] {
        xenc::load_checkpoint(
            with_meta(members, std::string(100000, '[') + std::string(100000, ']'), "deep.npz"));
      },
      {"deep.npz: xenc.meta: nests deeper than 64 levels"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_checkpoint(with_meta(members, "{\"extra\": 1e400}", "overflow.npz")); },
      {"overflow.npz: xenc.meta: is not valid JSON for xencoder: it holds a number out of range"}));
}

// ---- item 3: non-finite weights -----------------------------------------------------------------

TEST(CraftedCheckpoint, NonFiniteWeightsAreRefusedNamingTheKey) {
  auto members = good_members();
  xt::xarray<float> bias = xenc::parse_npy(members.at("head.bias"), "bias");
  bias(1) = std::numeric_limits<float>::quiet_NaN();
  members["head.bias"] = xenc::format_npy(bias);
  const std::string path = tmp_path("nan_head.npz");
  xenc::save_npz_members(path, members);
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::load_checkpoint(path); },
      {"load_checkpoint: " + path + ": key \"head.bias\" holds nan at index [1]"}));

  // a TransformerEncoder state_dict, and Module::load_state_dict in memory
  xenc::EncoderLayerConfig lc = small_config().layer;
  xenc::TransformerEncoder enc(lc, 2);
  xenc::StateDict state = enc.state_dict();
  state.at("layers.1.linear2.weight")(3, 2) = -std::numeric_limits<float>::infinity();
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] {
        xenc::load_transformer_encoder(state, 2, xenc::Activation::relu, false, 1e-5f, "w.npz");
      },
      {"load_transformer_encoder: w.npz: key \"layers.1.linear2.weight\" holds -inf at index [3, "
       "2]"}));
  EXPECT_TRUE(
      ThrowsWith<xenc::io_error>([&] { enc.load_state_dict(state); },
                                 {"load_state_dict: key \"layers.1.linear2.weight\" holds -inf"}));
}

// ---- legal but huge shapes ----------------------------------------------------------------------

// The 4 MB .npz with F = 30,000,000: linear1.weight [F, D] and linear2.weight [D, F] of
// 960 MB each. The old defaults (1 GiB per array, 4 GiB per archive) let both through; the
// members, the arrays parsed from them and the model built from those made 8 GB. Now refused
// from the zip directory, naming the key, the size and the limit.
TEST(CraftedArchive, HugeLegalShapesAreRefusedByTheLimits) {
  const std::size_t F = 30000000, D = 8;
  const std::string h1 = xenc::format_npy(xt::zeros<float>({std::size_t(0), D}));
  auto shaped = [&](const std::string& from, const std::string& to) {
    std::string h = h1;
    if (h.find(from) == std::string::npos) return std::string("no ") + from + " in " + h;
    h.replace(h.find(from), from.size(), to);
    h.erase(h.size() - (to.size() - from.size()) - 1, to.size() - from.size());
    return h;
  };
  const std::string header1 = shaped("(0, 8)", "(" + std::to_string(F) + ", 8)");
  ASSERT_EQ(header1.size(), h1.size()) << h1;
  const std::string path = tmp_path("f30m.npz");
  {
    ZipMember a = deflated_member("layers.0.linear1.weight.npy", header1, std::string(4096, '\0'),
                                  F * D * 4 / 4096, "");
    xenc::write_file_bytes(path, zip_archive({a}), "test");
  }
  EXPECT_LT(read_text(path).size(), 4000000u);
  EXPECT_TRUE(RefusedWith(load_in_child([&] { xenc::load_transformer_encoder(path, 2); }),
                          {"load_npz: " + path + ": key \"layers.0.linear1.weight\"", "960000",
                           "LoadLimits::max_array_bytes = 134217728 bytes (128.0 MiB)"}));
  // The headers alone can be read, to estimate before loading.
  const auto headers = xenc::load_npz_headers(path);
  EXPECT_EQ(headers.at("layers.0.linear1.weight").shape, (std::vector<std::size_t>{F, D}));
  EXPECT_EQ(headers.at("layers.0.linear1.weight").size() * 4, F * D * 4);
  // With the per-array limit raised to what the old default was, the total limit refuses it.
  xenc::LoadLimits raised;
  raised.max_array_bytes = std::size_t(1) << 30;
  EXPECT_TRUE(RefusedWith(load_in_child([&] { xenc::load_npz(path, raised); }),
                          {"key \"layers.0.linear1.weight\"",
                           "LoadLimits::max_total_bytes = 268435456 bytes (256.0 MiB)"}));
}

// ---- the API that reads shapes without data -----------------------------------------------------

TEST(Headers, ShapesWithoutTheData) {
  // An .npy whose header claims [30000000, 8] float32 but whose data is absent: the header reads.
  std::string npy = xenc::format_npy(xt::zeros<float>({std::size_t(2), std::size_t(8)}));
  npy.resize(npy.size() - 64);
  const std::string path = tmp_path("header_only.npy");
  xenc::write_file_bytes(path, npy, "test");
  const xenc::NpyHeader h = xenc::load_npy_header(path);
  EXPECT_EQ(h.shape, (std::vector<std::size_t>{2, 8}));
  EXPECT_EQ(h.descr, "<f4");
  EXPECT_THROW(xenc::load_npy(path), xenc::io_error);

  // A checkpoint's meta and parameter count, without the weights.
  const auto members = good_members();
  const std::string ck = tmp_path("crafted_good.npz");
  const xenc::CheckpointMeta meta = xenc::read_checkpoint_meta(ck);
  EXPECT_EQ(meta.labels, (std::vector<std::string>{"agent", "patient"}));
  xenc::TokenClassifier model(small_config(), 2);
  EXPECT_EQ(xenc::checkpoint_parameter_count(meta.config, 2), double(model.num_parameters()));
  std::size_t floats = 0;
  for (const auto& kv : xenc::load_npz_headers(ck))
    if (kv.first != "xenc.meta") floats += kv.second.size();
  EXPECT_EQ(floats, model.num_parameters());
}

// ---- item 7: .npy headers as numpy.lib.format.read_array_header_1_0 reads them ------------------
// NumPy 1.24.2 (/usr/bin/python3): extra keys -> ValueError "Header does not contain the correct
// keys"; a duplicate 'descr' -> the last one wins (a dict literal), which we refuse rather than
// pick; text after the closing brace -> ValueError "Cannot parse header"; keys in any order are
// accepted; "(5)" is the integer 5 -> ValueError "shape is not valid".
TEST(NpyHeaderAsNumpy, DuplicateExtraAndTrailingAreRefused) {
  auto npy = [](const std::string& dict) {
    std::string h = dict;
    h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
    h += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(h.size() & 0xFF);
    out += static_cast<char>(h.size() >> 8);
    return out + h + std::string(8, '\0');
  };
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] {
        xenc::parse_npy(
            npy("{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (2,), }"),
            "dup.npy");
      },
      {"dup.npy: npy header has the key 'descr' twice"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] {
        xenc::parse_npy(
            npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1, }"), "x.npy");
      },
      {"x.npy: npy header has the key 'extra', expected only 'descr', 'fortran_order' and "
       "'shape'"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] {
        xenc::parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk"),
                        "j.npy");
      },
      {"j.npy: npy header has text after its closing '}'"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] {
        xenc::parse_npy(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}"), "i.npy");
      },
      {"is an integer in Python, not a tuple"}));
  EXPECT_TRUE(ThrowsWith<xenc::io_error>(
      [&] { xenc::parse_npy(npy("{'descr': '<f4', 'fortran_order': False}"), "m.npy"); },
      {"npy header has no 'shape' entry"}));
  // What NumPy accepts, we read: any key order, double quotes, spaces inside the tuple.
  const auto a = xenc::parse_npy(
      npy("{\"shape\": ( 2 , ), 'descr': '<f4', 'fortran_order': False}"), "ok.npy");
  EXPECT_EQ(a.shape(0), 2u);
}
