// Inspecting a member's data directory before etcd starts: what the
// initialization tables call "WAL with member metadata" and "valid and up to
// date", observed the way etcd-backup-restore's initializer checks them
// (pkg/initializer/validator): the WAL's first records carry the member and
// cluster IDs; the database must open (bbolt; read through `etcdctl snapshot
// status`), and for a single-member cluster its revision must not be behind
// the latest backup; a `safe_guard` file, when present, must name this
// namespace. Reads only.
#pragma once

#include <cstdint>
#include <string>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane {

struct DataDirFacts {
  bool exists = false;
  bool empty = true;
  bool wal_has_metadata = false;  // member/wal has a segment whose metadata record has member and cluster IDs
  std::string member_id;          // hex, from the WAL metadata
  std::string cluster_id;         // hex
  bool db_exists = false;         // member/snap/db
  bool db_opens = false;
  int64_t db_revision = 0;
  bool corrupt = false;            // a database etcdctl says is bad, a WAL that does not parse
  std::string safe_guard;          // the safe_guard file's content, "" when absent
  bool valid = false;              // WAL metadata, a database that opens, not behind, safe_guard matches
  std::string verification_error;  // why not valid, for people

  // {"exists", "empty", "walHasMetadata", "memberID", "clusterID", "dbExists", "dbOpens",
  //  "dbRevision", "corrupt", "safeGuard", "valid", "verificationError"}
  Value ToValue() const;
};

// etcd-backup-restore's marker of the namespace a volume belongs to: the
// file safe_guard beside the data directory, on the volume it is on
// (pkg/initializer/validator/datavalidator.go, sanityCheck).
std::string SafeGuardPath(const std::string& data_dir);

// `latest_backup_revision` 0 = do not compare revisions (a member of a
// multi-member cluster catches up from the leader). `namespace_name` "" =
// do not check safe_guard. An error when the directory cannot be read, and
// kUnavailable when the database could not be checked (etcdctl missing,
// killed or out of time; adapters/local/snapshot_file.h, CheckDatabaseFile):
// "corrupt" is only ever etcdctl's verdict on the file.
Result<DataDirFacts> InspectDataDir(const std::string& path, int64_t latest_backup_revision,
                                    const std::string& namespace_name);

// The cluster ID in the WAL metadata of the data directory `path`; 0 when it
// has none (no WAL, or one that does not parse). kUnavailable when it cannot
// be read.
Result<uint64_t> WalClusterId(const std::string& path);

}  // namespace ruleplane
