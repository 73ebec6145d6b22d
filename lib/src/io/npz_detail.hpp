// Inside xencoder::io (not installed): sizes in messages, and reading an archive's members with a
// choice, member by member, between the whole member and its .npy header only. npz.cpp and
// checkpoint.cpp use it: a checkpoint reads its metadata whole and, before any weight, only the
// weights' headers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "xenc/core/parameter.hpp"
#include "xenc/io/npy.hpp"

namespace xenc::detail {

/// "134217728 bytes (128.0 MiB)", "1073741824 bytes (1.0 GiB)": sizes in messages.
std::string bytes_text(double bytes);

/// Called for each member after the zip directory's claims passed the limits: true reads the
/// member whole, false only up to the end of its .npy header. May throw (a member-specific
/// limit). Null reads every member whole.
using WholeMember = std::function<bool(const std::string& key, std::uint64_t claimed_bytes)>;

/// The members' bytes by key (".npy" dropped), from a file or from bytes in memory; every
/// message starts with `where`.
std::map<std::string, std::string> read_npz_file(const std::string& path, const std::string& where,
                                                 const LoadLimits& limits,
                                                 const WholeMember& whole);
std::map<std::string, std::string> read_npz_bytes(const std::string& bytes,
                                                  const std::string& where,
                                                  const LoadLimits& limits,
                                                  const WholeMember& whole);

/// Every member parsed as float32 (freeing each member's bytes once parsed).
StateDict parse_members(std::map<std::string, std::string>&& members, const std::string& where,
                        const LoadLimits& limits);
/// Every member's header.
std::map<std::string, NpyHeader> parse_headers(const std::map<std::string, std::string>& members,
                                               const std::string& where, const LoadLimits& limits);

}  // namespace xenc::detail
