// Taking one backup from a running cluster into the backup store, as
// etcd-backup-restore's snapshotter does: a full snapshot (etcd's snapshot
// stream, named by the revision the file holds), or a delta (the watch
// events since the store's latest snapshot, up to the revision the cluster
// had when the delta began, in etcd-backup-restore's format).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "adapters/etcd/etcd_client.h"
#include "adapters/local/backup_store.h"

namespace ruleplane {

struct BackupOptions {
  std::string compression_suffix;  // ".gz", ".zlib", ".Z" or ""
  // A delta stops at the first revision after its events' keys and values
  // pass this many bytes (0 = no bound); TakenBackup::more says the cluster
  // has moved further.
  int64_t delta_memory_limit = 0;
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  bool final = false;  // a full snapshot named ".final" (BackupStore::WriteFull)
};

struct TakenBackup {
  std::string name;      // in the store; "" when there was nothing to take
  int64_t revision = 0;  // the last revision it holds
  int64_t events = 0;    // a delta's events
  bool more = false;     // a delta cut at the memory limit: the next one is due at once
  // The store listing's warnings (entries skipped: links, unreadable,
  // names beyond the cluster's revision).
  std::vector<std::string> warnings;
};

// A full snapshot from the first endpoint that answers.
Result<TakenBackup> TakeFullBackup(EtcdClient& client, BackupStore& store, const BackupOptions& options,
                                   RequestLog& log);

// A delta from the store's latest snapshot's last revision + 1 to the
// cluster's current revision (or the revision where the memory limit cut
// it, never inside a revision); nothing when the cluster has not moved.
// Snapshots named beyond the cluster's current revision are skipped (and
// reported in `warnings`), so that a stray name does not stop the backups. No full
// snapshot in the store, a compacted start revision, or a snapshot of
// another cluster's (backup_store.h) in the chain it would continue (the
// newest full snapshot and the deltas after it): kFailedPrecondition (take a
// full snapshot).
Result<TakenBackup> TakeDeltaBackup(EtcdClient& client, BackupStore& store, const BackupOptions& options,
                                    RequestLog& log);

}  // namespace ruleplane
