#include "member/backup_taker.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "adapters/local/atomic_file.h"
#include "adapters/local/delta_file.h"
#include "adapters/local/snapshot_file.h"
#include "engine/common/time_util.h"

namespace ruleplane {
namespace {

// Now as Go's time.Time marshals it (RFC 3339 with nanoseconds, trailing
// zeros dropped), the receive time etcd-backup-restore writes with each event.
std::string GoTimeNow() {
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return FormatRfc3339(Timestamp::FromUnixNanos(nanos.count()));
}

Result<EtcdStatus> FirstAnsweringStatus(EtcdClient& client, RequestLog& log) {
  Error last{ErrorCode::kUnavailable, "no etcd endpoint is configured", {}};
  for (const std::string& endpoint : client.config().endpoints) {
    auto status = client.MemberStatus(endpoint, log);
    if (status.ok()) return status;
    last = status.error();
  }
  return last;
}

}  // namespace

Result<TakenBackup> TakeFullBackup(EtcdClient& client, BackupStore& store, const BackupOptions& options,
                                   RequestLog& log) {
  auto status = FirstAnsweringStatus(client, log);
  if (!status.ok()) return status.error();
  auto scratch = store.objects().ScratchDirectory();
  if (!scratch.ok()) {
    return Error{ErrorCode::kFailedPrecondition,
                 "cannot create the backup store's scratch directory: " + scratch.error().message,
                 {}};
  }
  // Under a name that is not a snapshot's (a local store's own directory),
  // created only when something is written.
  std::string download = *scratch + "/.full-download";
  std::optional<RemovedAtExit> removed;
  if (!log.dry_run()) {
    auto created = CreateScratchFile(*scratch, "full-download");
    if (!created.ok()) return created.error();
    download = *created;
    removed.emplace(download);
  }
  auto taken = client.Snapshot(status->endpoint, download, log);
  if (!taken.ok()) return taken.error();
  TakenBackup backup;
  if (!log.dry_run()) {
    // Writes between the status call and the snapshot land in the file: the
    // revision it holds names it, so that deltas continue exactly after it.
    auto revision = SnapshotFileRevision(download, options.timeout);
    if (!revision.ok()) return revision.error();
    // etcd starts at revision 1; a database that never held a key says 0.
    backup.revision = std::max<int64_t>(*revision, 1);
  }
  auto name = store.WriteFull(download, backup.revision, status->cluster_id, std::chrono::system_clock::now(),
                              options.compression_suffix, log, options.final);
  if (!name.ok()) return name.error();
  backup.name = *name;
  return backup;
}

Result<TakenBackup> TakeDeltaBackup(EtcdClient& client, BackupStore& store, const BackupOptions& options,
                                    RequestLog& log) {
  auto listing = store.List();
  if (!listing.ok()) return listing.error();
  bool has_full = false;
  int64_t last_stored = 0;
  for (const StoredSnapshot& snapshot : listing->snapshots) {
    has_full = has_full || snapshot.kind == "Full";
    last_stored = std::max(last_stored, snapshot.last_revision);
  }
  if (!has_full) {
    return Error{ErrorCode::kFailedPrecondition,
                 "the backup store " + store.location() + " has no full snapshot: take `backup full` first",
                 {}};
  }
  auto status = FirstAnsweringStatus(client, log);
  if (!status.ok()) return status.error();
  TakenBackup backup;
  listing->SkipBeyondRevision(status->revision);
  backup.warnings = listing->warnings;
  has_full = false;
  last_stored = 0;
  for (const StoredSnapshot& snapshot : listing->snapshots) {
    has_full = has_full || snapshot.kind == "Full";
    last_stored = std::max(last_stored, snapshot.last_revision);
  }
  if (!has_full) {
    return Error{ErrorCode::kFailedPrecondition,
                 "the backup store " + store.location() +
                     " has no full snapshot at or below the cluster's revision " +
                     std::to_string(status->revision) + ": take `backup full` first",
                 {}};
  }
  if (status->revision <= last_stored) return backup;  // nothing happened since
  // The chain a delta would continue (the newest full snapshot and the
  // deltas after it) must be this cluster's history: one snapshot of another
  // cluster (a split brain's other side, or this cluster under another ID
  // before a restore) and a replay of it would be refused.
  for (size_t i = listing->LatestFullIndex(); i < listing->snapshots.size(); ++i) {
    const StoredSnapshot& snapshot = listing->snapshots[i];
    if (snapshot.MayBeOf(status->cluster_id)) continue;
    return Error{ErrorCode::kFailedPrecondition,
                 "the backup store's snapshot " + snapshot.path + " was taken from etcd cluster " +
                     MemberIdHex(snapshot.cluster_id) + ", this is cluster " +
                     MemberIdHex(status->cluster_id) +
                     ": a delta would continue another cluster's history; take `backup full` first",
                 {}};
  }

  int64_t until = status->revision;
  std::vector<EtcdEvent> events;
  int64_t event_bytes = 0;
  auto last = client.Watch(last_stored + 1, options.timeout, [&](const std::vector<EtcdEvent>& batch) {
    for (const EtcdEvent& event : batch) {
      if (event.kv.mod_revision > until) return false;
      // The events of one revision (a transaction) stay in one delta.
      if (options.delta_memory_limit > 0 && event_bytes > options.delta_memory_limit &&
          event.kv.mod_revision != events.back().kv.mod_revision) {
        until = events.back().kv.mod_revision;
        backup.more = true;
        return false;
      }
      event_bytes += static_cast<int64_t>(event.kv.key.size() + event.kv.value.size());
      events.push_back(event);
    }
    return events.empty() || events.back().kv.mod_revision < until;
  });
  if (!last.ok()) return last.error();
  if (events.empty() || events.back().kv.mod_revision != until) {
    return Error{ErrorCode::kDeadlineExceeded,
                 "the watch from revision " + std::to_string(last_stored + 1) + " did not reach revision " +
                     std::to_string(until) + " within the timeout",
                 {}};
  }
  auto name =
      store.WriteDelta(SerializeDelta(events, GoTimeNow()), last_stored + 1, until, status->cluster_id,
                       std::chrono::system_clock::now(), options.compression_suffix, log);
  if (!name.ok()) return name.error();
  backup.name = *name;
  backup.revision = until;
  backup.events = static_cast<int64_t>(events.size());
  return backup;
}

}  // namespace ruleplane
