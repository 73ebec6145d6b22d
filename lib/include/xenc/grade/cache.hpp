// The grader's build cache: linked exercise programs kept under the whole text of what made them
// (the student's file, the compile and link commands, the digests of every file they read), so a
// regrade compiles only what changed and identical files (untouched stubs, copies) compile once.
//
// An entry is a folder named by the key's 64-bit digest, holding the key itself and the program.
// The digest only finds the folder: a program is handed out only when the stored key equals the
// wanted key byte for byte, so two different files never share a program, whatever their digests.
// Entries are written once, into a fresh folder renamed into place, and never replaced, so
// concurrent graders sharing a cache read whole entries. Only the grader writes the cache, from
// outside the sandbox, before the program first runs; no sandbox sees the cache's folder.
#pragma once

#include <string>
#include <utility>

namespace xenc::grade {

/// The 64-bit FNV-1a digest of bytes, as 16 hex digits (an index, never trusted alone).
std::string digest(const std::string& bytes);

/// The digest of a file's bytes; "" when it cannot be read.
std::string file_digest(const std::string& path);

/// A folder's stamp: the digest of every regular file under it, by relative path, with its size
/// and modification time (a cheap witness that nothing in it changed); "" when it is not a folder.
std::string tree_stamp(const std::string& dir);

/// Linked programs by key, in a folder only the grader writes (created 0700 when missing).
class ProgramCache {
 public:
  explicit ProgramCache(std::string dir) : dir_(std::move(dir)) {}
  /// Copies the program stored under exactly `key` to `to` (executable); false when none is.
  bool fetch(const std::string& key, const std::string& to) const;
  /// Stores a copy of `program` under `key`; keeps an existing entry of the same digest as it is.
  /// Returns false when the cache could not be written (grading goes on without it).
  bool store(const std::string& key, const std::string& program) const;

 private:
  std::string dir_;
};

}  // namespace xenc::grade
