// NumPy .npz archives: a zip file with one .npy member per array, what numpy.savez (members
// stored) and numpy.savez_compressed (members deflated) write. xencoder keeps weights in them,
// keyed by PyTorch state_dict names, so that
//
//     np.savez("w.npz", **{k: v.numpy() for k, v in module.state_dict().items()})
//     xenc::StateDict state = xenc::load_npz("w.npz");      // and back:
//     xenc::save_npz("w.npz", encoder.state_dict());
//     module.load_state_dict({k: torch.from_numpy(v) for k, v in np.load("w.npz").items()})
//
// The archive is read and written with libzip. Member "name.npy" becomes key "name" (as
// numpy.load does). Each member is an .npy file, read with the rules of xenc/io/npy.hpp:
// float32 or float64 (converted to float32), little-endian, C order.
//
// Before anything is allocated, each member's claims are checked: the zip directory's sizes
// (zip64 sizes included) against the file's real size (a stored member cannot be larger than
// the file, a deflated one not more than 1032 times its compressed size, deflate's limit), the
// .npy header inside against the directory, and both against the LoadLimits (xenc/io/npy.hpp):
// 128 MiB per array and 256 MiB per archive unless the caller raises them. A few-KiB file that
// claims a 4 GiB or 1 TB member is refused at once, naming the member and both sizes.
//
// Throws:  xenc::io_error naming the function, the file and (for a member) the key: the path is
//          missing or a directory, the file is not a zip archive, two members have one name
//          (the name is given), a member claims more than the file holds or more than the
//          limits, a member is corrupt (CRC), has another dtype, is big-endian, in Fortran
//          order or truncated, or two members have one key.
#pragma once

#include <map>
#include <string>

#include "xenc/core/parameter.hpp"
#include "xenc/io/npy.hpp"

namespace xenc {

/// Every member as a float32 array, by key.
StateDict load_npz(const std::string& path, const LoadLimits& limits = {});

/// Writes every entry as "<key>.npy" (float32, C order). compressed = false stores the members
/// (numpy.savez), true deflates them (numpy.savez_compressed). Replaces an existing file.
void save_npz(const std::string& path, const StateDict& state, bool compressed = false);

/// Every member's raw .npy bytes by key, for members that are not float (e.g. a bool mask:
/// parse_npy_bool(members.at("mask"), "file.npz: key \"mask\"")).
std::map<std::string, std::string> load_npz_members(const std::string& path,
                                                    const LoadLimits& limits = {});

/// Every member's .npy header (dtype and shape) by key, without its data: each member is read
/// (inflated) only up to the end of its header, so a program can estimate what loading needs
/// before it loads, e.g. the memory of a model built from these weights:
///     for (const auto& [key, h] : xenc::load_npz_headers("w.npz"))
///       bytes += h.size() * sizeof(float);
/// The directory's claims are checked against the file as load_npz checks them, and each header
/// against its member's size; the data (and its CRC) are not read. max_array_bytes and
/// max_total_bytes are not applied (nothing that large is allocated): compare the shapes with
/// them, or with the program's own estimate, before calling load_npz.
std::map<std::string, NpyHeader> load_npz_headers(const std::string& path,
                                                  const LoadLimits& limits = {});

/// The same on an archive's bytes in memory; `source` names it in messages.
StateDict parse_npz(const std::string& bytes, const std::string& source,
                    const LoadLimits& limits = {});
std::map<std::string, std::string> parse_npz_members(const std::string& bytes,
                                                     const std::string& source,
                                                     const LoadLimits& limits = {});
std::map<std::string, NpyHeader> parse_npz_headers(const std::string& bytes,
                                                   const std::string& source,
                                                   const LoadLimits& limits = {});

/// Writes raw .npy bytes (from format_npy / format_npy_bool) as members "<key>.npy".
void save_npz_members(const std::string& path, const std::map<std::string, std::string>& members,
                      bool compressed = false);

}  // namespace xenc
