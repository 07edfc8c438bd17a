// Compaction of the backups, as etcd-backup-restore's `compact` does it: the
// newest full snapshot and the deltas after it restored into an etcd of this
// process's own (on loopback, in a work directory), its history compacted to
// the last revision and its database defragmented, and the result stored as a
// new full snapshot at that revision, so that a restore reads one file instead
// of replaying the deltas. The store's snapshots are only read: the older ones
// stay until garbage collection (the newest full snapshot is never collected).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "adapters/local/backup_store.h"
#include "adapters/request.h"
#include "engine/common/error.h"

namespace ruleplane {

struct CompactionOptions {
  // Holds the restored data (compaction.etcd) and etcd's log; a copy left by
  // an interrupted run is replaced.
  std::string work_dir;
  std::string compression_suffix = ".gz";  // of the new full snapshot: ".gz", ".zlib" or ""
  std::chrono::milliseconds command_timeout{std::chrono::minutes(10)};
  // The etcd cluster whose history is compacted (the ID its members answer
  // with): the snapshots marked as another cluster's are skipped
  // (BackupStoreListing::KeepCluster). 0: the newest history, whichever
  // cluster's it is.
  uint64_t cluster_id = 0;
  // The cluster's revision when the compaction was decided: snapshots beyond
  // it are skipped (BackupStoreListing::SkipBeyondRevision).
  std::optional<int64_t> max_revision;
};

struct CompactionOutcome {
  std::string snapshot;  // the new full snapshot's name; "" when there were no deltas to compact
  int64_t revision = 0;  // its revision (the newest full snapshot's when nothing was compacted)
  size_t deltas = 0;     // the deltas it replaced
  int64_t database_bytes_before = 0, database_bytes_after = 0;  // before and after the defragmentation
};

// Fails (nothing stored) when the store has no full snapshot (of the
// cluster), a delta is missing or does not replay, the snapshots are marked
// as more than one cluster's (backup_store.h), or etcd does not start.
Result<CompactionOutcome> CompactBackups(BackupStore& store, const CompactionOptions& options,
                                         RequestLog& log);

}  // namespace ruleplane
