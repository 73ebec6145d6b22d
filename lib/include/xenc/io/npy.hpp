// NumPy .npy files: one array per file, what numpy.save writes and numpy.load reads.
//
// Format (NEP 1, versions 1.0, 2.0 and 3.0 are read; 1.0 is written):
//     "\x93NUMPY" major minor  header_len (uint16 little-endian; uint32 for 2.0 and 3.0)
//     header: a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//             padded with spaces and a final '\n' so that the data starts at a multiple of 64
//     data:   prod(shape) elements, raw bytes, row-major (C order)
//
// What xencoder accepts:
//   load_npy       float32 ('<f4') or float64 ('<f8', converted to float32), C order.
//   load_npy_bool  bool ('|b1'), C order: padding masks (true = padding, PyTorch's convention).
//   load_npy_int64 int64 ('<i8'), C order: token ids and labels (NumPy's default integer).
//   parse_npy_uint8 uint8 ('|u1'): raw bytes, e.g. the UTF-8 JSON text inside a checkpoint.
// Everything else is an io_error whose message names the function, the file and what was found
// against what was expected: another dtype ('<i8', '|u1', a structured dtype), big-endian data
// ('>f4'), Fortran order, a truncated file or data of the wrong length, a bad magic string.
//
//     xt::xarray<float> x = xenc::load_npy("x.npy");      // np.save("x.npy", x)
//     xenc::save_npy("y.npy", y);                         // np.load("y.npy") -> float32
//
// Limits: a file is read only after its claims are checked, so that a small crafted file cannot
// make the loader allocate gigabytes (a notebook kernel must survive it). LoadLimits holds the
// bounds; every loader takes one (default-constructed: 128 MiB per array, 256 MiB per archive,
// 10,000 header bytes as NumPy's np.load). Raise them for a bigger model:
//
//     xenc::LoadLimits limits;
//     limits.max_array_bytes = std::size_t(1) << 30;      // 1 GiB per array
//     xt::xarray<float> x = xenc::load_npy("big.npy", limits);
//
// Header shapes are checked as NumPy checks them: every dimension must fit in a signed 64-bit
// integer ((18446744073709551618, 8) is refused, not wrapped to (2, 8)), and so must
// prod(shape) · itemsize.
//
// Shapes:  any rank (0-d arrays are shape [] with one element).
// PyTorch: torch.from_numpy(np.load(path)); np.save(path, tensor.numpy())
// Throws:  xenc::io_error (derived from std::invalid_argument) for every problem above, for an
//          array or file larger than the LoadLimits, and for paths that cannot be opened, read or
//          written (a directory, a missing file, no permission). Never std::bad_alloc: running
//          out of memory while loading becomes an io_error naming the size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "xenc/core/error.hpp"  // io_error

namespace xenc {

/// Bounds on what the loaders (npy, npz, state_dict, checkpoint) accept from one file. Every
/// claim a file makes (a zip directory's sizes, an .npy header's shape, a checkpoint's config) is
/// checked against them before anything is allocated, and the message names the field to raise.
/// The defaults fit every model this project trains (its largest array is a few MiB) with a wide
/// margin, and keep the memory a crafted file can cost a loader well under 1 GiB: loading an .npz
/// holds at most about 2 · max_total_bytes (the members' bytes and the arrays), building a model
/// from it one more max_total_bytes. Raise them to load more:
///
///     xenc::LoadLimits limits;
///     limits.max_total_bytes = std::size_t(2) << 30;     // a 2 GiB checkpoint
struct LoadLimits {
  /// Largest array data, in bytes (prod(shape) · itemsize): 128 MiB = 2^25 float32 values, e.g.
  /// a [4096, 8192] matrix or a 32,768-word embedding with d_model = 1024.
  std::size_t max_array_bytes = std::size_t(128) << 20;
  /// Largest sum of all member sizes of one .npz archive (a checkpoint's parameters), in bytes:
  /// 256 MiB = 2^26 float32 parameters.
  std::size_t max_total_bytes = std::size_t(256) << 20;
  /// Largest .npy header (the dict literal), in bytes: 10,000, as numpy.load's max_header_size.
  std::size_t max_header_bytes = 10000;
  /// Largest checkpoint metadata (the UTF-8 JSON text of xenc.meta), in bytes: 4 MiB, checked
  /// before the text is read or parsed (parsing takes up to about 32 bytes per text byte). The
  /// vocabulary is the large part: 4 MiB holds about 300,000 words.
  std::size_t max_meta_bytes = std::size_t(4) << 20;
  /// Longest sequence T a loader accepts: a checkpoint's config.max_len, and what programs use
  /// to refuse a longer sentence or a [B, T] / [B, T, D] input before running the model (the
  /// attention scores of one layer alone take B · nhead · T² floats): 2048, the same as
  /// xenc::kMaxSequenceLength, the limit of Vocabulary::encode_batch (text/vocabulary.hpp).
  std::size_t max_sequence_length = 2048;
};

/// What an .npy header says.
struct NpyHeader {
  int major_version = 1;
  std::string descr;  ///< NumPy dtype string, e.g. "<f4", "<f8", "|b1"
  bool fortran_order = false;
  std::vector<std::size_t> shape;  ///< empty for a 0-d array
  std::size_t data_offset = 0;     ///< bytes from the start of the file to the data
  std::size_t size() const;        ///< number of elements, prod(shape)
  /// Bytes per element from descr ('<f4' -> 4, '|b1' -> 1), 0 when descr is not "<kind><n>".
  std::size_t itemsize() const;
  /// data_offset + prod(shape) · itemsize(): the length of a well-formed file (0 if unknown).
  std::size_t file_size() const;
};

/// Reads a float32 or float64 array (float64 is rounded to float32).
xt::xarray<float> load_npy(const std::string& path, const LoadLimits& limits = {});
/// Reads a bool array (dtype '|b1'), e.g. a padding mask.
xt::xarray<bool> load_npy_bool(const std::string& path, const LoadLimits& limits = {});
/// Reads an int64 array (dtype '<i8'), e.g. token ids or labels.
xt::xarray<std::int64_t> load_npy_int64(const std::string& path, const LoadLimits& limits = {});
/// Writes int64 ('<i8'), C order, format version 1.0.
void save_npy_int64(const std::string& path, const xt::xarray<std::int64_t>& array);
/// Reads only the header (dtype and shape), not the data: at most 12 + max_header_bytes bytes of
/// the file are read, so a program can estimate the memory a file needs before loading it:
///     const xenc::NpyHeader h = xenc::load_npy_header("x.npy");
///     std::size_t bytes = h.size() * sizeof(float);     // what load_npy will allocate
/// The header is checked as parse_npy_header checks it; the data length is not (load_npy does).
NpyHeader load_npy_header(const std::string& path, const LoadLimits& limits = {});

/// Writes float32 ('<f4'), C order, format version 1.0.
void save_npy(const std::string& path, const xt::xarray<float>& array);
/// Writes bool ('|b1'), C order, format version 1.0.
void save_npy_bool(const std::string& path, const xt::xarray<bool>& array);

/// The same on bytes in memory (used for the members of .npz archives). `source` names the
/// origin in error messages, e.g. "w.npz: key \"norm.weight\"".
/// parse_npy_header needs only the bytes up to the end of the header (data may be cut off).
NpyHeader parse_npy_header(const std::string& bytes, const std::string& source,
                           const LoadLimits& limits = {});
xt::xarray<float> parse_npy(const std::string& bytes, const std::string& source,
                            const LoadLimits& limits = {});
xt::xarray<bool> parse_npy_bool(const std::string& bytes, const std::string& source,
                                const LoadLimits& limits = {});
std::string format_npy(const xt::xarray<float>& array);
std::string format_npy_bool(const xt::xarray<bool>& array);
xt::xarray<std::int64_t> parse_npy_int64(const std::string& bytes, const std::string& source,
                                         const LoadLimits& limits = {});
xt::xarray<std::uint8_t> parse_npy_uint8(const std::string& bytes, const std::string& source,
                                         const LoadLimits& limits = {});
std::string format_npy_int64(const xt::xarray<std::int64_t>& array);
std::string format_npy_uint8(const xt::xarray<std::uint8_t>& array);

/// The whole content of a regular file as bytes; throws io_error naming `where` and the path
/// when it is missing, a directory (or another non-file), unreadable, or longer than max_bytes.
std::string read_file_bytes(const std::string& path, const std::string& where,
                            std::size_t max_bytes = static_cast<std::size_t>(-1));
/// The size in bytes of a regular file; throws io_error as read_file_bytes does (used to check
/// what an archive claims against what the file holds).
std::size_t regular_file_size(const std::string& path, const std::string& where);
/// Writes bytes to a file (replacing it); throws io_error naming `where` and the path.
void write_file_bytes(const std::string& path, const std::string& bytes, const std::string& where);

}  // namespace xenc
