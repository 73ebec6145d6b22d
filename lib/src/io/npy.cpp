// .npy reading and writing: the header is a Python dict literal, the data raw little-endian
// bytes in C order. We parse the three keys NumPy writes ('descr', 'fortran_order', 'shape')
// and refuse anything we would otherwise misread.
#include "xenc/io/npy.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>

#include <sys/stat.h>

#include "npz_detail.hpp"
#include "xenc/core/tensor.hpp"

// The data is little-endian; reading it with memcpy is correct only on a little-endian host.
static_assert(
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
    "xenc/io/npy.cpp reads little-endian data with memcpy: add byte swapping for this host");

namespace xenc {

namespace {

constexpr char kMagic[] = "\x93NUMPY";  // 6 bytes
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kAlign = 64;  // NumPy >= 1.14 aligns the data to 64 bytes

[[noreturn]] void fail(const std::string& source, const std::string& message) {
  throw io_error(source + ": " + message);
}

// NumPy's largest dimension and element count: npy_intp, a signed 64-bit integer.
constexpr std::size_t kMaxIntp = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());

// Header text for a message: printable ASCII kept, every other byte as \xNN (a header may hold
// terminal escape codes), at most 120 characters.
std::string visible(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (out.size() >= 120) return out + "...";
    if (c >= 0x20 && c < 0x7F) {
      out += ch;
    } else {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// The header dict literal, read as numpy.lib.format.read_array_header_* reads it (Python's
// literal syntax): {'descr': <str>, 'fortran_order': <bool>, 'shape': <tuple of int>} in any
// order, an optional trailing comma, whitespace around the tokens and after the closing brace.
// NumPy refuses a missing or an extra key; a key given twice NumPy resolves silently to the last
// one (a dict literal), which we refuse: one file must not mean two arrays.
class HeaderParser {
 public:
  HeaderParser(const std::string& header, const std::string& source)
      : h_(header), source_(source) {}

  void parse(NpyHeader& out) {
    skip_space();
    expect('{', "an opening '{'");
    std::vector<std::string> seen;
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = quoted("a quoted key such as 'descr'");
      if (key != "descr" && key != "fortran_order" && key != "shape")
        fail("npy header has the key '" + visible(key) +
             "', expected only 'descr', 'fortran_order' and 'shape' (numpy.load refuses other keys "
             "too)");
      if (std::find(seen.begin(), seen.end(), key) != seen.end())
        fail("npy header has the key '" + key +
             "' twice (numpy.load would silently take the last one; one file must not describe two "
             "arrays)");
      seen.push_back(key);
      skip_space();
      expect(':', "':' after '" + key + "'");
      skip_space();
      if (key == "descr") descr(out);
      if (key == "fortran_order") out.fortran_order = boolean();
      if (key == "shape") shape(out);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}')
        fail("npy header: expected ',' or '}' after the value of '" + key + "' at byte " +
             std::to_string(pos_) + " (header: " + visible(h_) + ")");
    }
    ++pos_;  // '}'
    skip_space();
    if (pos_ != h_.size())
      fail("npy header has text after its closing '}' (header: " + visible(h_) + ")");
    for (const char* key : {"descr", "fortran_order", "shape"})
      if (std::find(seen.begin(), seen.end(), key) == seen.end())
        fail("npy header has no '" + std::string(key) + "' entry (header: " + visible(h_) + ")");
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw io_error(source_ + ": " + message);
  }
  char peek() const { return pos_ < h_.size() ? h_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < h_.size() && std::isspace(static_cast<unsigned char>(h_[pos_]))) ++pos_;
  }
  void expect(char c, const std::string& what) {
    if (peek() != c)
      fail("npy header is not a dict literal: expected " + what + " at byte " +
           std::to_string(pos_) + " (header: " + visible(h_) + ")");
    ++pos_;
  }
  std::string quoted(const std::string& what) {
    const char q = peek();
    if (q != '\'' && q != '"') expect('\'', what);
    const std::size_t end = h_.find(q, pos_ + 1);
    if (end == std::string::npos)
      fail("npy header has a string that is not closed (header: " + visible(h_) + ")");
    std::string text = h_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return text;
  }
  // 'descr': a quoted dtype string. A list is a structured dtype (numpy record arrays).
  void descr(NpyHeader& out) {
    if (peek() == '[')
      fail("dtype is a structured dtype (" + visible(h_.substr(pos_, 40)) +
           "...), expected float32 '<f4' or float64 '<f8'");
    if (peek() != '\'' && peek() != '"')
      fail("npy header 'descr' is not a quoted string (found " +
           visible(h_.substr(pos_, h_.find_first_of(",}", pos_) - pos_)) +
           "), expected a dtype in quotes such as '<f4'");
    out.descr = visible(quoted("a dtype string"));
    // NumPy writes '|' for one-byte types; '<' and '=' both mean little-endian on our host.
    if (out.descr.size() == 3 && out.descr[0] == '=') out.descr[0] = '<';
  }
  bool boolean() {
    if (h_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (h_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    fail("npy header 'fortran_order' is neither True nor False");
  }
  // 'shape': a tuple of non-negative integers: "()" for a 0-d array, "(5,)" for 1-d ("(5)" is the
  // integer 5 in Python, which numpy.load refuses as a shape).
  void shape(NpyHeader& out) {
    const std::size_t start = pos_;
    if (peek() != '(') fail("npy header 'shape' is not a tuple");
    ++pos_;
    const std::size_t close = h_.find(')', pos_);
    if (close == std::string::npos) fail("npy header 'shape' tuple is not closed");
    const std::string tuple = h_.substr(pos_, close - pos_);
    auto not_ints = [&] {
      fail("npy header 'shape' (" + visible(tuple) + ") is not a tuple of integers");
    };
    bool comma_after_last = false;
    std::size_t i = 0;
    for (;;) {
      while (i < tuple.size() && std::isspace(static_cast<unsigned char>(tuple[i]))) ++i;
      if (i >= tuple.size()) break;
      if (!std::isdigit(static_cast<unsigned char>(tuple[i]))) not_ints();
      // Digits, refusing any value above NumPy's int64 limit (a wrapped value would be accepted
      // as another, smaller shape: 18446744073709551618 = 2^64 + 2 must not become 2).
      const std::size_t first = i;
      std::size_t value = 0;
      bool too_big = false;
      while (i < tuple.size() && std::isdigit(static_cast<unsigned char>(tuple[i]))) {
        const std::size_t digit = static_cast<std::size_t>(tuple[i++] - '0');
        if (value > (kMaxIntp - digit) / 10) too_big = true;
        if (!too_big) value = value * 10 + digit;
      }
      if (too_big)
        fail("npy header 'shape' (" + visible(tuple) + ") has dimension " +
             tuple.substr(first, i - first) + ", larger than NumPy allows (2^63 - 1)");
      if (i < tuple.size() && tuple[i] == 'L') ++i;  // Python 2 longs
      out.shape.push_back(value);
      while (i < tuple.size() && std::isspace(static_cast<unsigned char>(tuple[i]))) ++i;
      comma_after_last = i < tuple.size() && tuple[i] == ',';
      if (comma_after_last) {
        ++i;
      } else if (i < tuple.size()) {
        not_ints();
      }
    }
    if (out.shape.size() == 1 && !comma_after_last)
      fail("npy header 'shape' (" + visible(h_.substr(start, close + 1 - start)) +
           ") is an integer in Python, not a tuple: a 1-d shape is written (n,)");
    pos_ = close + 1;
  }

  const std::string& h_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

std::string describe_dtype(const std::string& descr) {
  if (descr == "<f4") return "'<f4' (float32)";
  if (descr == "<f8") return "'<f8' (float64)";
  if (descr == "|b1") return "'|b1' (bool)";
  if (descr == "<i8") return "'<i8' (int64)";
  if (descr == "|u1") return "'|u1' (uint8)";
  return "'" + descr + "'";
}

std::size_t element_count(const std::vector<std::size_t>& shape) {
  std::size_t n = 1;
  for (auto d : shape) n *= d;  // cannot wrap: parse_npy_header checked the product
  return n;
}

// An allocation of `bytes` for `what`, with std::bad_alloc turned into an io_error naming the size.
template <class T>
xt::xarray<T> allocate_array(const std::vector<std::size_t>& shape, std::size_t bytes,
                             const std::string& source) {
  try {
    return xt::xarray<T>::from_shape(shape);
  } catch (const std::bad_alloc&) {
    fail(source, "out of memory allocating " + detail::bytes_text(double(bytes)) +
                     " for an array of shape " + shape_str(shape));
  }
}

// Checks dtype, order and data length against what the caller accepts.
void check_layout(const NpyHeader& h, const std::string& bytes, const std::string& source,
                  const std::vector<std::string>& accepted, const std::string& accepted_text,
                  const LoadLimits& limits) {
  // Big-endian data gets its own message: the dtype is right, the byte order is not.
  if (!h.descr.empty() && h.descr[0] == '>')
    fail(source, "dtype " + describe_dtype(h.descr) + " is big-endian, expected little-endian " +
                     accepted_text);
  bool ok = false;
  for (const auto& a : accepted) ok = ok || h.descr == a;
  if (!ok) fail(source, "dtype is " + describe_dtype(h.descr) + ", expected " + accepted_text);
  if (h.fortran_order)
    fail(source, "array of shape " + shape_str(h.shape) +
                     " is in Fortran order, expected C order (save np.ascontiguousarray(a))");
  // prod(shape) · itemsize: parse_npy_header checked that it fits in an int64.
  const std::size_t expected = h.size() * h.itemsize();
  if (expected > limits.max_array_bytes)
    fail(source, "array of shape " + shape_str(h.shape) + " and dtype " + describe_dtype(h.descr) +
                     " has " + detail::bytes_text(double(expected)) +
                     ", more than LoadLimits::max_array_bytes = " +
                     detail::bytes_text(double(limits.max_array_bytes)) +
                     " (raise the limit to load it)");
  const std::size_t actual = bytes.size() - h.data_offset;
  if (actual < expected)
    fail(source, "truncated: data has " + std::to_string(actual) + " bytes, expected " +
                     std::to_string(expected) + " for shape " + shape_str(h.shape) + " of dtype " +
                     describe_dtype(h.descr));
  if (actual > expected)
    fail(source, "data has " + std::to_string(actual) + " bytes, expected " +
                     std::to_string(expected) + " for shape " + shape_str(h.shape) + " of dtype " +
                     describe_dtype(h.descr) + " (trailing bytes)");
}

std::string header_text(const std::string& descr, const std::vector<std::size_t>& shape) {
  // {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }  as numpy.lib.format writes it
  std::string s = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    s += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) s += shape.size() == 1 ? "," : ", ";
  }
  s += "), }";
  // Pad with spaces and end with '\n' so that magic (6) + version (2) + length (2) + header
  // is a multiple of 64: the data then starts aligned.
  const std::size_t unpadded = kMagicLen + 2 + 2 + s.size() + 1;
  s.append((kAlign - unpadded % kAlign) % kAlign, ' ');
  s += '\n';
  return s;
}

std::string format_bytes(const std::string& descr, const std::vector<std::size_t>& shape,
                         const char* data, std::size_t nbytes) {
  const std::string header = header_text(descr, shape);
  std::string out(kMagic, kMagicLen);
  out += '\x01';  // version 1.0
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  if (nbytes != 0) out.append(data, nbytes);
  return out;
}

}  // namespace

namespace detail {
std::string bytes_text(double n) {
  std::ostringstream s;
  s.precision(0);
  s << std::fixed << n << " bytes";
  s.precision(1);
  if (n >= double(std::size_t(1) << 30))
    s << " (" << n / double(std::size_t(1) << 30) << " GiB)";
  else if (n >= double(std::size_t(1) << 20))
    s << " (" << n / double(std::size_t(1) << 20) << " MiB)";
  return s.str();
}
}  // namespace detail

std::size_t NpyHeader::size() const { return element_count(shape); }

std::size_t NpyHeader::itemsize() const {
  // "<f4", "|b1", "<i8", "<c16": a byte-order mark, a kind letter, the size in bytes.
  if (descr.size() < 3 || std::string("<>|=").find(descr[0]) == std::string::npos ||
      !std::isalpha(static_cast<unsigned char>(descr[1])))
    return 0;
  std::size_t n = 0;
  for (std::size_t i = 2; i < descr.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(descr[i])) || n > 1000) return 0;
    n = n * 10 + static_cast<std::size_t>(descr[i] - '0');
  }
  return n;
}

std::size_t NpyHeader::file_size() const {
  const std::size_t item = itemsize();
  std::size_t data = 0;
  if (item == 0 || __builtin_mul_overflow(size(), item, &data)) return 0;
  std::size_t total = 0;
  if (__builtin_add_overflow(data_offset, data, &total)) return 0;
  return total;
}

NpyHeader parse_npy_header(const std::string& bytes, const std::string& source,
                           const LoadLimits& limits) {
  // 1. Magic string and version.
  if (bytes.size() < kMagicLen + 2 || bytes.compare(0, kMagicLen, kMagic, kMagicLen) != 0)
    fail(source, "not an .npy file (it does not start with \"\\x93NUMPY\"; " +
                     std::to_string(bytes.size()) + " bytes)");
  NpyHeader h;
  h.major_version = static_cast<unsigned char>(bytes[kMagicLen]);
  if (h.major_version < 1 || h.major_version > 3)
    fail(source, "npy format version " + std::to_string(h.major_version) +
                     " is not supported, expected 1, 2 or 3");
  // 2. Header length: uint16 in version 1, uint32 in versions 2 and 3 (little-endian).
  const std::size_t len_bytes = h.major_version == 1 ? 2 : 4;
  const std::size_t prefix = kMagicLen + 2 + len_bytes;
  if (bytes.size() < prefix) fail(source, "truncated: the npy header length is cut off");
  std::size_t header_len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i)
    header_len |= std::size_t(static_cast<unsigned char>(bytes[kMagicLen + 2 + i])) << (8 * i);
  if (header_len > limits.max_header_bytes)
    fail(source, "npy header is " + std::to_string(header_len) +
                     " bytes, more than LoadLimits::max_header_bytes = " +
                     std::to_string(limits.max_header_bytes) +
                     " (as numpy.load's max_header_size)");
  if (bytes.size() < prefix + header_len)
    fail(source, "truncated: the npy header says " + std::to_string(header_len) +
                     " bytes, the file has " + std::to_string(bytes.size() - prefix) + " after it");
  const std::string header = bytes.substr(prefix, header_len);
  h.data_offset = prefix + header_len;

  // 3. The dict literal: 'descr', 'fortran_order' and 'shape', each exactly once.
  HeaderParser(header, source).parse(h);

  // 6. prod(shape) · itemsize must fit in NumPy's int64 (NumPy refuses such arrays too). Zero
  //    dimensions are skipped: (0, 2^52, 4294) is an empty array, but xtensor's strides still
  //    multiply the other dimensions, so their product must fit as well (found by fuzz_npy).
  std::size_t count = std::max<std::size_t>(1, h.itemsize());
  for (auto d : h.shape)
    if (d != 0 && (__builtin_mul_overflow(count, d, &count) || count > kMaxIntp))
      fail(source,
           "npy header 'shape' " + shape_str(h.shape) + " with dtype " + describe_dtype(h.descr) +
               " is too large: more bytes than a signed 64-bit size holds (NumPy refuses it too)");
  return h;
}

xt::xarray<float> parse_npy(const std::string& bytes, const std::string& source,
                            const LoadLimits& limits) {
  const NpyHeader h = parse_npy_header(bytes, source, limits);
  check_layout(h, bytes, source, {"<f4", "<f8"}, "float32 '<f4' or float64 '<f8'", limits);
  xt::xarray<float> a = allocate_array<float>(h.shape, h.size() * sizeof(float), source);
  const char* data = bytes.data() + h.data_offset;
  if (h.descr == "<f4") {
    if (a.size() != 0)
      std::memcpy(a.data(), data, a.size() * sizeof(float));  // data() may be null when empty
  } else {
    // float64 -> float32, element by element (memcpy: the data need not be 8-byte aligned)
    for (std::size_t i = 0; i < a.size(); ++i) {
      double v;
      std::memcpy(&v, data + 8 * i, 8);
      a.data()[i] = static_cast<float>(v);
    }
  }
  return a;
}

xt::xarray<bool> parse_npy_bool(const std::string& bytes, const std::string& source,
                                const LoadLimits& limits) {
  const NpyHeader h = parse_npy_header(bytes, source, limits);
  check_layout(h, bytes, source, {"|b1"}, "bool '|b1'", limits);
  xt::xarray<bool> a = allocate_array<bool>(h.shape, h.size(), source);
  const char* data = bytes.data() + h.data_offset;
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = data[i] != 0;
  return a;
}

xt::xarray<std::int64_t> parse_npy_int64(const std::string& bytes, const std::string& source,
                                         const LoadLimits& limits) {
  const NpyHeader h = parse_npy_header(bytes, source, limits);
  check_layout(h, bytes, source, {"<i8"}, "int64 '<i8'", limits);
  xt::xarray<std::int64_t> a = xt::xarray<std::int64_t>::from_shape(h.shape);
  if (a.size() != 0) std::memcpy(a.data(), bytes.data() + h.data_offset, a.size() * 8);
  return a;
}

xt::xarray<std::uint8_t> parse_npy_uint8(const std::string& bytes, const std::string& source,
                                         const LoadLimits& limits) {
  const NpyHeader h = parse_npy_header(bytes, source, limits);
  check_layout(h, bytes, source, {"|u1"}, "uint8 '|u1'", limits);
  xt::xarray<std::uint8_t> a = xt::xarray<std::uint8_t>::from_shape(h.shape);
  if (a.size() != 0) std::memcpy(a.data(), bytes.data() + h.data_offset, a.size());
  return a;
}

std::string format_npy_int64(const xt::xarray<std::int64_t>& array) {
  std::vector<std::size_t> shape(array.shape().begin(), array.shape().end());
  return format_bytes("<i8", shape, reinterpret_cast<const char*>(array.data()), array.size() * 8);
}

std::string format_npy_uint8(const xt::xarray<std::uint8_t>& array) {
  std::vector<std::size_t> shape(array.shape().begin(), array.shape().end());
  return format_bytes("|u1", shape, reinterpret_cast<const char*>(array.data()), array.size());
}

xt::xarray<std::int64_t> load_npy_int64(const std::string& path, const LoadLimits& limits) {
  return parse_npy_int64(read_file_bytes(path, "load_npy_int64"), "load_npy_int64: " + path,
                         limits);
}

void save_npy_int64(const std::string& path, const xt::xarray<std::int64_t>& array) {
  write_file_bytes(path, format_npy_int64(array), "save_npy_int64");
}

std::string format_npy(const xt::xarray<float>& array) {
  std::vector<std::size_t> shape(array.shape().begin(), array.shape().end());
  return format_bytes("<f4", shape, reinterpret_cast<const char*>(array.data()),
                      array.size() * sizeof(float));
}

std::string format_npy_bool(const xt::xarray<bool>& array) {
  std::vector<std::size_t> shape(array.shape().begin(), array.shape().end());
  std::string data(array.size(), '\0');
  for (std::size_t i = 0; i < array.size(); ++i) data[i] = array.data()[i] ? '\x01' : '\x00';
  return format_bytes("|b1", shape, data.data(), data.size());
}

std::size_t regular_file_size(const std::string& path, const std::string& where) {
  // stat first: an ifstream opens a directory without complaint and fails only on reading
  // ("basic_filebuf::underflow"), which names neither the path nor the problem.
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0)
    throw io_error(where + ": cannot open \"" + path + "\" for reading: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw io_error(where + ": \"" + path + "\" is a directory, expected a file");
  if (!S_ISREG(st.st_mode))
    throw io_error(where + ": \"" + path +
                   "\" is not a regular file (a device, pipe or socket), expected a file");
  return static_cast<std::size_t>(st.st_size);
}

std::string read_file_bytes(const std::string& path, const std::string& where,
                            std::size_t max_bytes) {
  const std::size_t size = regular_file_size(path, where);
  if (size > max_bytes)
    throw io_error(where + ": \"" + path + "\" has " + detail::bytes_text(double(size)) +
                   ", more than the limit of " + detail::bytes_text(double(max_bytes)) +
                   " (LoadLimits::max_array_bytes plus the header)");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw io_error(where + ": cannot open \"" + path + "\" for reading: " + std::strerror(errno));
  std::string bytes;
  try {
    bytes.resize(size);
  } catch (const std::bad_alloc&) {
    throw io_error(where + ": out of memory reading \"" + path + "\" (" +
                   detail::bytes_text(double(size)) + ")");
  }
  in.read(&bytes[0], static_cast<std::streamsize>(size));
  if (in.bad() || static_cast<std::size_t>(in.gcount()) != size)
    throw io_error(where + ": error while reading \"" + path + "\" (read " +
                   std::to_string(in.gcount()) + " of " + std::to_string(size) + " bytes)");
  return bytes;
}

void write_file_bytes(const std::string& path, const std::string& bytes, const std::string& where) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw io_error(where + ": cannot open \"" + path + "\" for writing: " + std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw io_error(where + ": error while writing \"" + path + "\"");
}

namespace {
// The longest .npy file the limits allow: prefix (12) + header + data.
std::size_t max_npy_file(const LoadLimits& limits) {
  std::size_t n = 0;
  if (__builtin_add_overflow(limits.max_array_bytes, limits.max_header_bytes + 12, &n))
    return static_cast<std::size_t>(-1);
  return n;
}
}  // namespace

xt::xarray<float> load_npy(const std::string& path, const LoadLimits& limits) {
  return parse_npy(read_file_bytes(path, "load_npy", max_npy_file(limits)), "load_npy: " + path,
                   limits);
}

xt::xarray<bool> load_npy_bool(const std::string& path, const LoadLimits& limits) {
  return parse_npy_bool(read_file_bytes(path, "load_npy_bool", max_npy_file(limits)),
                        "load_npy_bool: " + path, limits);
}

NpyHeader load_npy_header(const std::string& path, const LoadLimits& limits) {
  // Only the prefix (12 bytes) and the longest header the limits allow are read, never the data.
  const std::string where = "load_npy_header";
  const std::size_t size = regular_file_size(path, where);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw io_error(where + ": cannot open \"" + path + "\" for reading: " + std::strerror(errno));
  std::string bytes(std::min(size, limits.max_header_bytes + 12), '\0');
  in.read(&bytes[0], static_cast<std::streamsize>(bytes.size()));
  if (in.bad() || static_cast<std::size_t>(in.gcount()) != bytes.size())
    throw io_error(where + ": error while reading \"" + path + "\"");
  return parse_npy_header(bytes, where + ": " + path, limits);
}

void save_npy(const std::string& path, const xt::xarray<float>& array) {
  write_file_bytes(path, format_npy(array), "save_npy");
}

void save_npy_bool(const std::string& path, const xt::xarray<bool>& array) {
  write_file_bytes(path, format_npy_bool(array), "save_npy_bool");
}

}  // namespace xenc
