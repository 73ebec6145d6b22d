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
// Everything else is an io_error whose message names the function, the file and what was found
// against what was expected: another dtype ('<i8', '|u1', a structured dtype), big-endian data
// ('>f4'), Fortran order, a truncated file or data of the wrong length, a bad magic string.
//
//     xt::xarray<float> x = xenc::load_npy("x.npy");      // np.save("x.npy", x)
//     xenc::save_npy("y.npy", y);                         // np.load("y.npy") -> float32
//
// Shapes:  any rank (0-d arrays are shape [] with one element).
// PyTorch: torch.from_numpy(np.load(path)); np.save(path, tensor.numpy())
// Throws:  xenc::io_error (derived from std::invalid_argument) for every problem above and for
//          files that cannot be opened, read or written.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "xenc/core/error.hpp"  // io_error

namespace xenc {

/// What an .npy header says.
struct NpyHeader {
  int major_version = 1;
  std::string descr;                ///< NumPy dtype string, e.g. "<f4", "<f8", "|b1"
  bool fortran_order = false;
  std::vector<std::size_t> shape;   ///< empty for a 0-d array
  std::size_t data_offset = 0;      ///< bytes from the start of the file to the data
  std::size_t size() const;         ///< number of elements, prod(shape)
};

/// Reads a float32 or float64 array (float64 is rounded to float32).
xt::xarray<float> load_npy(const std::string& path);
/// Reads a bool array (dtype '|b1'), e.g. a padding mask.
xt::xarray<bool> load_npy_bool(const std::string& path);
/// Reads only the header (to inspect dtype and shape before loading).
NpyHeader load_npy_header(const std::string& path);

/// Writes float32 ('<f4'), C order, format version 1.0.
void save_npy(const std::string& path, const xt::xarray<float>& array);
/// Writes bool ('|b1'), C order, format version 1.0.
void save_npy_bool(const std::string& path, const xt::xarray<bool>& array);

/// The same on bytes in memory (used for the members of .npz archives). `source` names the
/// origin in error messages, e.g. "w.npz: key \"norm.weight\"".
NpyHeader parse_npy_header(const std::string& bytes, const std::string& source);
xt::xarray<float> parse_npy(const std::string& bytes, const std::string& source);
xt::xarray<bool> parse_npy_bool(const std::string& bytes, const std::string& source);
std::string format_npy(const xt::xarray<float>& array);
std::string format_npy_bool(const xt::xarray<bool>& array);

/// The whole content of a file as bytes; throws io_error naming `where` and the path.
std::string read_file_bytes(const std::string& path, const std::string& where);
/// Writes bytes to a file (replacing it); throws io_error naming `where` and the path.
void write_file_bytes(const std::string& path, const std::string& bytes, const std::string& where);

}  // namespace xenc
