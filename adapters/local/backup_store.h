// BackupStore: a backup store in etcd-backup-restore's layout, on any of
// its object-store providers (adapters/object_store/object_store.h; a local
// directory, etcd-backup-restore's "Local" provider, when constructed from
// a path). Under the store's prefix:
//
//   v2/Full-00000000-00001000-1700000000          flat (today's layout)
//   v2/Incr-00001001-00001100-1700000300.gz
//   v1/Backup-1700000000/Full-00000000-00001000-1700000000   the older layout, read only
//   clusters/8e9e05c52164694d/snapshot-Full-00000000-00001000-1700000000   an empty marker: the etcd
//                        cluster (its ID, hex) the snapshot of that name was taken from
//
// It reads both layouts, compressed snapshots (.gz, .zlib, .Z) and `.final`,
// and writes v2 objects whole or not at all: full snapshots as etcd's
// snapshot stream (the database followed by its SHA-256, verified before it
// is stored), deltas in etcd-backup-restore's format
// (adapters/local/delta_file.h), so that either tool restores from the
// other's backups. Names are parsed by engine/extensions/backup_listing.h.
//
// The markers keep two clusters' histories apart (after a split brain both
// sides append to one store): a delta continues only a chain of its own
// cluster's snapshots, and a replay refuses a chain that names two clusters.
// A marker is written before its snapshot, so that no snapshot of this tool's
// is ever without one; a snapshot without one (etcd-backup-restore's, or
// older) belongs to no cluster in particular.
// etcd derives a cluster's ID from its first members' peer URLs and the
// cluster token: a member that started a cluster of its own has another ID
// than the cluster it left, but an Etcd created again with the same name,
// namespace and size has the same one, and the markers cannot tell them apart.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/object_store/object_store.h"
#include "adapters/request.h"
#include "engine/common/error.h"
#include "engine/common/value.h"
#include "platform/file_input.h"

namespace ruleplane {

struct StoredSnapshot {
  std::string name;  // "Full-00000000-00001000-1700000000.gz", no folders
  std::string path;  // relative to the store: "v2/<name>", "v1/Backup-<unix>/<name>"
  std::string kind;  // "Full" or "Incr"
  int64_t start_revision = 0;
  int64_t last_revision = 0;
  int64_t created_on = 0;          // unix seconds, from the name
  std::string compression_suffix;  // ".gz", ".zlib", ".Z" or ""
  bool is_final = false;
  int64_t size_bytes = 0;
  uint64_t cluster_id = 0;  // from its marker; 0: none (etcd-backup-restore's, or older)

  // Whether it may be etcd cluster `cluster`'s: marked as that cluster's, or
  // unmarked (an unmarked snapshot agrees with any cluster).
  bool MayBeOf(uint64_t cluster) const { return cluster_id == 0 || cluster_id == cluster; }
};

inline constexpr int64_t kMaxRevisionsPerSecond = 1'000'000;
inline constexpr int64_t kRevisionClockSlackSeconds = 3600;

struct BackupStoreListing {
  std::string prefix;  // the store directory's name, etcd-backup-restore's store prefix
  // Sorted as etcd-backup-restore sorts: by last revision, then creation time.
  std::vector<StoredSnapshot> snapshots;
  // Files that look like snapshots and are not (bad names, leftover
  // temporary files, symbolic links, entries that cannot be read, names
  // beyond the cluster's revision); listed, never deleted.
  std::vector<std::string> warnings;

  // Moves every snapshot whose last revision is beyond the cluster's current
  // revision to the warnings: such a name (a stray
  // Full-...-9223372036854775807-...) cannot hold this cluster's data, and
  // would otherwise pass for the latest backup.
  void SkipBeyondRevision(int64_t cluster_revision);

  // Moves every snapshot marked as another etcd cluster's than `cluster_id`
  // to the warnings (the unmarked stay: etcd-backup-restore's, or older): a
  // history appended to the same prefix by a cluster that split off, or by an
  // Etcd created again under the same name, is not this cluster's.
  void KeepCluster(uint64_t cluster_id);

  // Judges each name against its neighbour below (by last revision): etcd
  // applies far fewer than kMaxRevisionsPerSecond (1,000,000) revisions a
  // second, so a snapshot whose last revision exceeds the one below by more
  // than that rate over the time between their names (plus an hour of clock
  // slack) is suspect: moved to the warnings. Needs no cluster: this is what
  // guards a restore while the cluster does not answer.
  void SkipImplausibleRevisions();

  // The newest full snapshot's index in `snapshots`, snapshots.size() when
  // there is none: the deltas after it are the entries that follow it.
  size_t LatestFullIndex() const;

  // {"reachable": true, "snapshots": [{"name", "kind", "startRevision",
  //  "lastRevision", "createdOn" (RFC 3339), "compression", "final", "path",
  //  "cluster" (hex, "" without a marker)}],
  //  "paths": ["<prefix>/v2/Full-..."], "warnings": [...]}: what both
  // generations of the initialization rules read (1.x `snapshots`, 2.x
  // `backups(paths)`).
  Value ToValue() const;

 private:
  // Moves the snapshots `reason` gives a reason for ("" keeps one) to the
  // warnings, with it.
  void SkipWhere(const std::function<std::string(const StoredSnapshot&)>& reason);
};

class BackupStore {
 public:
  // A local directory (LocalObjectStore).
  explicit BackupStore(std::string directory);
  explicit BackupStore(std::unique_ptr<ObjectStore> objects);

  // "/var/etcd/backup/main", "s3://bucket/main": for messages.
  std::string location() const { return objects_->Location(); }
  ObjectStore& objects() { return *objects_; }

  // A store that does not exist lists as empty; what the provider skipped,
  // and objects whose names are not snapshots, are listed as warnings.
  // SkipImplausibleRevisions always; with `cluster_revision` (when the
  // cluster answers), SkipBeyondRevision too.
  Result<BackupStoreListing> List(std::optional<int64_t> cluster_revision = std::nullopt) const;

  // The local file of a snapshot by name (both layouts); "" when absent or
  // when the store is not a directory.
  std::string PathOf(const std::string& name) const;

  // A delta's bytes, decompressed, with its SHA-256 trailer: at most
  // max_delta_bytes() and the ratio of compression.h, checked while it is
  // read.
  Result<std::string> ReadSnapshot(const std::string& name) const;
  // kMaxDeltaFileBytes (128 MiB) unless set (member-init --max-delta-bytes).
  int64_t max_delta_bytes() const { return max_delta_bytes_; }
  void set_max_delta_bytes(int64_t bytes) { max_delta_bytes_ = bytes; }
  // A snapshot decompressed into a local file (written atomically),
  // streaming: a full snapshot is never held in memory; at most kMaxFullSnapshotBytes
  // (32 GiB) and the ratio of compression.h. On failure, nothing is left at
  // `destination`.
  Status ReadSnapshotToFile(const std::string& name, const std::string& destination) const;

  // Stores `source_file` (etcd's snapshot stream: db + SHA-256, verified
  // before it is stored), taken from the cluster `cluster_id` (its marker is
  // written first; 0: none), as v2/Full-00000000-<revision %08d>-<unix now>
  // <compression suffix>[.final], taking the file: uncompressed, it is moved in (a
  // local store renames it into place); compressed, it is compressed while
  // it is written and then removed. `final`: etcd-backup-restore's final
  // snapshot (?final=true, taken before the cluster is hibernated), named
  // with its ".final" suffix, which garbage collection never deletes.
  // Returns the name. Records the write in `log`.
  Result<std::string> WriteFull(const std::string& source_file, int64_t revision, uint64_t cluster_id,
                                std::chrono::system_clock::time_point now,
                                const std::string& compression_suffix, RequestLog& log, bool final = false);
  // Stores a delta (bytes from SerializeDelta) of the cluster `cluster_id`
  // (marker first, as WriteFull) as
  // v2/Incr-<start %08d>-<last %08d>-<unix now><compression suffix>, once
  // ParseDelta (the reader replay uses) accepts it and its events lie in
  // [start, last] with the last at `last_revision`: a delta the replay would
  // refuse is never stored (kFailedPrecondition, nothing written, also in a
  // dry run).
  Result<std::string> WriteDelta(const std::string& delta_bytes, int64_t start_revision,
                                 int64_t last_revision, uint64_t cluster_id,
                                 std::chrono::system_clock::time_point now,
                                 const std::string& compression_suffix, RequestLog& log);

  // Removes a listed snapshot (garbage collection), then its marker. Records it in `log`.
  Status Delete(const StoredSnapshot& snapshot, RequestLog& log);

 private:
  // The listed snapshot named `name`; kNotFound naming the store otherwise.
  Result<StoredSnapshot> Find(const std::string& name) const;
  // Writes the marker of `name` (nothing for cluster 0).
  Status WriteMarker(const std::string& name, uint64_t cluster_id, RequestLog& log);

  std::unique_ptr<ObjectStore> objects_;
  int64_t max_delta_bytes_ = kMaxDeltaFileBytes;
};

// The snapshot an object path in the store names ("v2/Full-...",
// "v1/Backup-<unix>/Full-..."; size_bytes 0); nullopt when it names none.
std::optional<StoredSnapshot> StoredSnapshotOf(const std::string& path);

// The cluster the snapshots of one replay (a full snapshot and the deltas
// after it) were taken from (0: none is marked); kFailedPrecondition when
// they name more than one, naming them. A snapshot without a marker agrees
// with any.
Result<uint64_t> ChainCluster(const std::vector<StoredSnapshot>& chain);

// Checks etcd's snapshot stream: the last 32 bytes are the SHA-256 of the
// rest. kIo "checksum mismatch" / "too short" naming `what`.
Status VerifySnapshotTrailer(const std::string& path, const std::string& what);

}  // namespace ruleplane
