// .npy reading and writing: the header is a Python dict literal, the data raw little-endian
// bytes in C order. We parse the three keys NumPy writes ('descr', 'fortran_order', 'shape')
// and refuse anything we would otherwise misread.
#include "xenc/io/npy.hpp"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>

#include <sys/stat.h>

#include "xenc/core/tensor.hpp"

// The data is little-endian; reading it with memcpy is correct only on a little-endian host.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "xenc/io/npy.cpp reads little-endian data with memcpy: add byte swapping for this host");

namespace xenc {

namespace {

constexpr char kMagic[] = "\x93NUMPY";  // 6 bytes
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kAlign = 64;      // NumPy >= 1.14 aligns the data to 64 bytes

[[noreturn]] void fail(const std::string& source, const std::string& message) {
  throw io_error(source + ": " + message);
}

// Position just after `key` (a quoted dict key such as 'descr') and the following ':'.
std::size_t find_value(const std::string& header, const std::string& key, const std::string& source) {
  std::size_t pos = header.find("'" + key + "'");
  if (pos == std::string::npos) pos = header.find("\"" + key + "\"");
  if (pos == std::string::npos)
    fail(source, "npy header has no '" + key + "' entry (header: " + header + ")");
  pos = header.find(':', pos + key.size() + 2);
  if (pos == std::string::npos) fail(source, "npy header entry '" + key + "' has no value");
  ++pos;
  while (pos < header.size() && std::isspace(static_cast<unsigned char>(header[pos]))) ++pos;
  return pos;
}

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

// NumPy's largest dimension and element count: npy_intp, a signed 64-bit integer.
constexpr std::size_t kMaxIntp = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());

// "1073741824 bytes (1.0 GiB)" for messages about sizes.
std::string bytes_text(std::size_t n) {
  std::ostringstream s;
  s << n << " bytes";
  if (n >= (std::size_t(1) << 20)) {
    s.precision(1);
    s << std::fixed << " (" << double(n) / double(std::size_t(1) << 30) << " GiB)";
  }
  return s.str();
}

// An allocation of `bytes` for `what`, with std::bad_alloc turned into an io_error naming the size.
template <class T>
xt::xarray<T> allocate_array(const std::vector<std::size_t>& shape, std::size_t bytes,
                             const std::string& source) {
  try {
    return xt::xarray<T>::from_shape(shape);
  } catch (const std::bad_alloc&) {
    fail(source, "out of memory allocating " + bytes_text(bytes) + " for an array of shape " +
                     shape_str(shape));
  }
}

// Checks dtype, order and data length against what the caller accepts.
void check_layout(const NpyHeader& h, const std::string& bytes, const std::string& source,
                  const std::vector<std::string>& accepted, const std::string& accepted_text,
                  const LoadLimits& limits) {
  // Big-endian data gets its own message: the dtype is right, the byte order is not.
  if (!h.descr.empty() && h.descr[0] == '>' )
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
                     " has " + bytes_text(expected) + ", more than LoadLimits::max_array_bytes = " +
                     bytes_text(limits.max_array_bytes) + " (raise the limit to load it)");
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
                     std::to_string(limits.max_header_bytes) + " (as numpy.load's max_header_size)");
  if (bytes.size() < prefix + header_len)
    fail(source, "truncated: the npy header says " + std::to_string(header_len) +
                     " bytes, the file has " + std::to_string(bytes.size() - prefix) + " after it");
  const std::string header = bytes.substr(prefix, header_len);
  h.data_offset = prefix + header_len;

  // 3. 'descr': a quoted dtype string. A list here is a structured dtype (numpy record arrays);
  //    anything else is a malformed header.
  std::size_t pos = find_value(header, "descr", source);
  if (pos < header.size() && header[pos] == '[')
    fail(source, "dtype is a structured dtype (" + header.substr(pos, 40) +
                     "...), expected float32 '<f4' or float64 '<f8'");
  if (pos >= header.size() || (header[pos] != '\'' && header[pos] != '"'))
    fail(source, "npy header 'descr' is not a quoted string (found " +
                     header.substr(pos, header.find_first_of(",}", pos) - pos) +
                     "), expected a dtype in quotes such as '<f4'");
  const char quote = header[pos];
  const std::size_t end = header.find(quote, pos + 1);
  if (end == std::string::npos) fail(source, "npy header 'descr' is not a closed string");
  h.descr = header.substr(pos + 1, end - pos - 1);
  // NumPy writes '|' for one-byte types; '<' and '=' both mean little-endian on our host.
  if (h.descr.size() == 3 && h.descr[0] == '=') h.descr[0] = '<';

  // 4. 'fortran_order': True or False.
  pos = find_value(header, "fortran_order", source);
  if (header.compare(pos, 4, "True") == 0)
    h.fortran_order = true;
  else if (header.compare(pos, 5, "False") == 0)
    h.fortran_order = false;
  else
    fail(source, "npy header 'fortran_order' is neither True nor False");

  // 5. 'shape': a tuple of non-negative integers, "()" for a 0-d array, "(5,)" for 1-d.
  pos = find_value(header, "shape", source);
  if (pos >= header.size() || header[pos] != '(') fail(source, "npy header 'shape' is not a tuple");
  const std::size_t close = header.find(')', pos);
  if (close == std::string::npos) fail(source, "npy header 'shape' tuple is not closed");
  std::string tuple = header.substr(pos + 1, close - pos - 1);
  std::size_t i = 0;
  while (i < tuple.size()) {
    while (i < tuple.size() && (std::isspace(static_cast<unsigned char>(tuple[i])) || tuple[i] == ','))
      ++i;
    if (i >= tuple.size()) break;
    if (!std::isdigit(static_cast<unsigned char>(tuple[i])))
      fail(source, "npy header 'shape' (" + tuple + ") is not a tuple of integers");
    // Digits, refusing any value above NumPy's int64 limit (a wrapped value would be accepted
    // as another, smaller shape: 18446744073709551618 = 2^64 + 2 must not become 2).
    const std::size_t start = i;
    std::size_t value = 0;
    bool too_big = false;
    while (i < tuple.size() && std::isdigit(static_cast<unsigned char>(tuple[i]))) {
      const std::size_t digit = static_cast<std::size_t>(tuple[i++] - '0');
      if (value > (kMaxIntp - digit) / 10) too_big = true;
      if (!too_big) value = value * 10 + digit;
    }
    if (too_big)
      fail(source, "npy header 'shape' (" + tuple + ") has dimension " + tuple.substr(start, i - start) +
                       ", larger than NumPy allows (2^63 - 1)");
    while (i < tuple.size() && tuple[i] == 'L') ++i;  // Python 2 longs
    if (i < tuple.size() && !std::isspace(static_cast<unsigned char>(tuple[i])) && tuple[i] != ',')
      fail(source, "npy header 'shape' (" + tuple + ") is not a tuple of integers");
    h.shape.push_back(value);
  }
  // 6. prod(shape) · itemsize must fit in NumPy's int64 (NumPy refuses such arrays too). Zero
  //    dimensions are skipped: (0, 2^52, 4294) is an empty array, but xtensor's strides still
  //    multiply the other dimensions, so their product must fit as well (found by fuzz_npy).
  std::size_t count = std::max<std::size_t>(1, h.itemsize());
  for (auto d : h.shape)
    if (d != 0 && (__builtin_mul_overflow(count, d, &count) || count > kMaxIntp))
      fail(source, "npy header 'shape' " + shape_str(h.shape) + " with dtype " + describe_dtype(h.descr) +
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
    if (a.size() != 0) std::memcpy(a.data(), data, a.size() * sizeof(float));  // data() may be null when empty
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
  return parse_npy_int64(read_file_bytes(path, "load_npy_int64"), "load_npy_int64: " + path, limits);
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
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw io_error(where + ": cannot open \"" + path + "\" for reading: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw io_error(where + ": \"" + path + "\" is a directory, expected a file");
  if (!S_ISREG(st.st_mode))
    throw io_error(where + ": \"" + path + "\" is not a regular file (a device, pipe or socket), expected a file");
  return static_cast<std::size_t>(st.st_size);
}

std::string read_file_bytes(const std::string& path, const std::string& where, std::size_t max_bytes) {
  const std::size_t size = regular_file_size(path, where);
  if (size > max_bytes)
    throw io_error(where + ": \"" + path + "\" has " + bytes_text(size) + ", more than the limit of " +
                   bytes_text(max_bytes) + " (LoadLimits::max_array_bytes plus the header)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw io_error(where + ": cannot open \"" + path + "\" for reading: " + std::strerror(errno));
  std::string bytes;
  try {
    bytes.resize(size);
  } catch (const std::bad_alloc&) {
    throw io_error(where + ": out of memory reading \"" + path + "\" (" + bytes_text(size) + ")");
  }
  in.read(&bytes[0], static_cast<std::streamsize>(size));
  if (in.bad() || static_cast<std::size_t>(in.gcount()) != size)
    throw io_error(where + ": error while reading \"" + path + "\" (read " + std::to_string(in.gcount()) +
                   " of " + std::to_string(size) + " bytes)");
  return bytes;
}

void write_file_bytes(const std::string& path, const std::string& bytes, const std::string& where) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw io_error(where + ": cannot open \"" + path + "\" for writing: " + std::strerror(errno));
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
  return parse_npy(read_file_bytes(path, "load_npy", max_npy_file(limits)), "load_npy: " + path, limits);
}

xt::xarray<bool> load_npy_bool(const std::string& path, const LoadLimits& limits) {
  return parse_npy_bool(read_file_bytes(path, "load_npy_bool", max_npy_file(limits)),
                        "load_npy_bool: " + path, limits);
}

NpyHeader load_npy_header(const std::string& path, const LoadLimits& limits) {
  return parse_npy_header(read_file_bytes(path, "load_npy_header", max_npy_file(limits)),
                          "load_npy_header: " + path, limits);
}

void save_npy(const std::string& path, const xt::xarray<float>& array) {
  write_file_bytes(path, format_npy(array), "save_npy");
}

void save_npy_bool(const std::string& path, const xt::xarray<bool>& array) {
  write_file_bytes(path, format_npy_bool(array), "save_npy_bool");
}

}  // namespace xenc
