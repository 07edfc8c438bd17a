// etcd's snapshot files: a bbolt database followed by its SHA-256 (the
// stream /v3/maintenance/snapshot sends and `etcdctl snapshot save` writes).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "engine/common/error.h"

namespace ruleplane {

// What `etcdctl snapshot status` concluded about a database file: it opens
// and holds `revision`, or etcd's own reading of it found it damaged.
struct DatabaseFileCheck {
  bool opens = false;
  int64_t revision = 0;
  std::string problem;  // why it does not open, as etcdctl said it
};

// Reads `path` with `etcdctl snapshot status -w json`. "Does not open" is a
// verdict only: etcdctl ran to completion and said the file itself is bad
// (bbolt's "invalid database", "version mismatch", "checksum error", "file
// size too small", a failed integrity check, or a crash inside bbolt while
// it read the file's pages), or the file is empty. Every other failure means
// the file could not be checked and is an error: kIo when etcdctl cannot be
// started, kDeadlineExceeded at the timeout, kUnavailable when it was killed
// or failed without a verdict on the file (it cannot open it, say) or when
// another process holds the file's lock (a running etcd; etcdctl is not
// run), kNotFound when there is no file.
Result<DatabaseFileCheck> CheckDatabaseFile(const std::string& path, std::chrono::milliseconds timeout);

// How long `etcdctl snapshot status` may take on a file of `bytes`: it reads
// every page and hashes every key, so 2 minutes plus 10 s for each 100 MB
// begun (at least 10 MB/s).
std::chrono::milliseconds DatabaseCheckTimeout(uintmax_t bytes);

// The revision a snapshot file or a member's database holds, as
// CheckDatabaseFile reads it; kIo when etcdctl says the file is bad, and
// CheckDatabaseFile's errors when it could not check.
Result<int64_t> SnapshotFileRevision(const std::string& path, std::chrono::milliseconds timeout);

// A full snapshot checked before it is published: etcdctl opens it and the
// revision it holds is not past `revision` (it may be below: a compaction
// removes a delete's tombstone). kIo naming what is wrong, and
// CheckDatabaseFile's errors when it could not check.
Status VerifyFullSnapshot(const std::string& path, int64_t revision, std::chrono::milliseconds timeout);

// Writes `database` (a stopped member's member/snap/db) followed by its
// SHA-256 to `destination`: the snapshot stream etcd would send.
Status WriteSnapshotStream(const std::string& database, const std::string& destination);

}  // namespace ruleplane
