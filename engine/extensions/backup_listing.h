// etcd-backup-restore's backup store as a listing of object paths (internal to
// the expression engine): backups(paths) and parseBackupName(name).
//
//   prefix/v1/Backup-1700000000/Full-00000000-00001000-1700000000   the old layout, one folder per full
//   snapshot prefix/v2/Incr-00001001-00001100-1700000300.gz                  the flat layout
//   prefix/v2/Full-00000000-00001000-1700000000/3                   chunk 3 of a multipart upload
//
// A snapshot name is <Full|Incr>-<start revision>-<last revision>-<unix seconds>
// with an optional compression suffix (.gz, .Z, .zlib) and then an optional
// .final; the start revision is at most the last. Anything else does not parse.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/common/value.h"

namespace ruleplane::expr {

struct BackupSnapshot {
  std::string_view name;  // the snapshot name, without folders or chunk number
  bool full = false;      // a Full snapshot, else Incr
  int64_t start_revision = 0;
  int64_t last_revision = 0;
  Timestamp created_at;
  std::string_view compression;  // "", "gzip", "lzw" or "zlib"
  bool final = false;
  bool chunk = false;
  std::string_view layout;  // "v1" or "v2"; "" for a bare name
};

// A bare snapshot name (no '/'); nullopt when it does not parse.
std::optional<BackupSnapshot> ParseBackupName(std::string_view name);

// An object path in either layout; nullopt when it is not a snapshot.
std::optional<BackupSnapshot> ParseBackupPath(std::string_view path);

// backups(paths): one map per path that is a snapshot ({"path", "name",
// "kind", "startRevision", "lastRevision", "createdAt", "compression",
// "final", "chunk", "layout"}), sorted as etcd-backup-restore sorts them: by
// last revision, then whole snapshots before chunks, then creation time,
// otherwise in input order. `paths` is a list; a non-string element is an error.
Value ListBackups(const Value& paths);

// parseBackupName(name): the same map for one bare name (layout ""), or null.
Value BackupNameValue(const Value& name);

}  // namespace ruleplane::expr
