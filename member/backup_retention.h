// Which backups etcd-backup-restore's garbage collector deletes, as a pure
// decision over a listing and a time (no I/O), so that member-agent can
// collect the backups it takes with the same --garbage-collection-policy,
// --max-backups and --delta-snapshot-retention-period a Gardener operator
// already sets, and so that any listing can be replayed in a test.
//
//   auto doomed = SnapshotsToCollect(listing.snapshots, options, std::chrono::system_clock::now());
//   if (!doomed.ok()) return doomed.error();
//   for (const StoredSnapshot& snapshot : *doomed) Remove(store_directory + "/" + snapshot.path);
//
// The decision is etcd-backup-restore's (gardener/etcd-backup-restore at
// debd95bd, pkg/snapshot/snapshotter/garbagecollector.go: RunGarbageCollector,
// getFullSnapshotIndexList, GarbageCollectDeltaSnapshots). In the listing's
// order (by last revision, then creation time), a full snapshot and the deltas
// after it up to the next full are a "stream":
//
//   - every stream but the latest loses its deltas created before
//     now - delta_retention (default 0: all of them); the latest stream is
//     never touched;
//   - Exponential (the default) judges each full but the newest against the
//     next newer full, with "today" the UTC day of `now` and eod its 23:59:59:
//       fulls of today in the hour (of day, UTC) of `now`: all kept;
//       other fulls of today: the newest of each clock hour kept (each
//         full is kept when the next newer one lies in another window);
//       fulls of the 7 UTC days before today: the newest of each day kept;
//       older: the newest of each 7-day window kept, the windows ending at
//         yesterday's 23:59:59 (eod moves back a day when the walk, newest to
//         oldest, reaches the first full 8 days or more before eod), back to
//         35 days before eod;
//       older still: deleted;
//   - LimitBased keeps the newest max_backups fulls and deletes older ones.
//     With a full-snapshot schedule, it counts schedule periods, not files
//     (ruleplane's difference): of the fulls that share a period (the same
//     next activation after their creation), only the newest counts and the
//     others are deleted, so that fulls asked for on demand (/snapshot/full,
//     eight times in a minute) replace each other instead of pushing the
//     older periods' backups out of the count.
//
// Whatever etcd-backup-restore does, the decision holds:
//   - the newest full snapshot (the last Full in the listing's order) is
//     never deleted, nor anything after it: every delta a restore replays on
//     top of it (start revision beyond its last revision) is kept;
//   - while the newest full is the compaction's (RetentionOptions::compacted_full),
//     the full before it and the deltas between them are never deleted;
//   - the newest `.final` snapshot is never deleted (etcd-backup-restore
//     deletes it like any full): it is what etcd-druid asked for when it
//     stopped the cluster last; an older one is judged as any full, so that
//     `?final=true` asked for in a loop cannot fill the store;
//   - a snapshot it cannot place is kept and changes nothing: a kind other
//     than Full/Incr, a start revision beyond the last, a path whose last part
//     is not the name (a chunk of a multipart upload: etcd-backup-restore's
//     GarbageCollectChunks deletes those of uploads its own process finished,
//     which a listing cannot tell);
//   - a delta is judged by the delta rule only (etcd-backup-restore also
//     judges a delta that sorts first as if it were a full);
//   - each snapshot returned came from the input, once.
// Objects under an immutability policy (IsDeletable) are the deleter's
// concern: a listing does not carry their expiry.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/local/backup_store.h"
#include "engine/common/error.h"

namespace ruleplane {

enum class GarbageCollectionPolicy {
  kExponential,  // "Exponential": hourly, daily, weekly fulls (etcd-backup-restore's default)
  kLimitBased,   // "LimitBased": the newest max_backups fulls
};

// etcd-backup-restore's defaults (pkg/types/snapshotter.go): DefaultMaxBackups
// and DefaultGarbageCollectionPeriod, how often its collector runs.
inline constexpr int64_t kDefaultMaxBackups = 7;
inline constexpr std::chrono::minutes kDefaultGarbageCollectionPeriod{1};

struct RetentionOptions {
  GarbageCollectionPolicy policy = GarbageCollectionPolicy::kExponential;
  int64_t max_backups = kDefaultMaxBackups;  // LimitBased only; at least 1
  // Deltas of older streams created within this time before `now` are kept;
  // at least 0 and at most Go's largest time.Duration (about 292 years).
  std::chrono::seconds delta_retention{0};
  // The full-snapshot schedule (cron, --schedule): LimitBased counts its
  // periods. "" counts files, as etcd-backup-restore does.
  std::string schedule;
  // The name of the full snapshot the compaction Job stored last
  // (kCompactedFullAnnotation on the full-snapshot Lease), "" for none.
  // While it is the newest full, the full before it and every delta between
  // the two are kept: what it replaced stays until a member's own full
  // snapshot, taken from the live cluster, supersedes it.
  std::string compacted_full = {};
};

// "Exponential" or "LimitBased", spelt exactly as etcd-backup-restore's flag
// takes them; anything else is kInvalidArgument naming the value.
Result<GarbageCollectionPolicy> ParseGarbageCollectionPolicy(std::string_view text);
const char* GarbageCollectionPolicyName(GarbageCollectionPolicy policy);

// The snapshots to delete at `now`, in the listing's order. `snapshots` is
// BackupStoreListing::snapshots (sorted again here, stably, as the store
// sorts). kInvalidArgument when the options are out of range (as
// etcd-backup-restore's SnapshotterConfig.Validate: LimitBased needs
// max_backups >= 1).
Result<std::vector<StoredSnapshot>> SnapshotsToCollect(const std::vector<StoredSnapshot>& snapshots,
                                                       const RetentionOptions& options,
                                                       std::chrono::system_clock::time_point now);

}  // namespace ruleplane
