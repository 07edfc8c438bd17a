// TakeFullSnapshot: the stopped member's database copied with its SHA-256
// trailer (what etcd's snapshot stream is) and written to the backup store
// as a full snapshot at its revision, marked with the cluster ID of its WAL.
// Done when the store holds a full snapshot at the data directory's revision.
#include <chrono>

#include "actions/local/local_action_handler.h"
#include "adapters/local/data_dir.h"
#include "adapters/local/file_operations.h"
#include "adapters/local/snapshot_file.h"

namespace ruleplane {
namespace {

Result<bool> IsDone(const PlanStep& /*step*/, LocalActionContext& context, RequestLog& /*log*/) {
  return StoreListsForDataDir(context, [](const StoredSnapshot& snapshot, int64_t revision) {
    return snapshot.kind == "Full" && snapshot.last_revision == revision;
  });
}

Status Perform(const PlanStep& /*step*/, LocalActionContext& context, RequestLog& log) {
  if (context.store == nullptr)
    return Error{ErrorCode::kFailedPrecondition, "no backup store is configured", {}};
  const LocalMember& member = context.member;
  // etcd is stopped: its database file is the snapshot, and etcd's snapshot
  // stream is that file followed by its SHA-256.
  const std::string db = member.data_dir + "/member/snap/db";
  const std::string snapshot = member.data_dir + ".snapshot-tmp";
  if (log.Record(Request{Request::Kind::kFile, "copy", db, {snapshot}, "with a SHA-256 trailer", true})) {
    if (Status written = WriteSnapshotStream(db, snapshot); !written.ok()) return written;
  }
  int64_t revision = 0;
  uint64_t cluster_id = 0;
  if (!log.dry_run()) {
    auto read = SnapshotFileRevision(snapshot, member.command_timeout);
    if (!read.ok()) return read.error();
    revision = *read;
    auto cluster = WalClusterId(member.data_dir);
    if (!cluster.ok()) return cluster.error();
    cluster_id = *cluster;
  }
  auto written =
      context.store->WriteFull(snapshot, revision, cluster_id, std::chrono::system_clock::now(), "", log);
  if (!written.ok()) return written.error();
  return RemoveDerived(snapshot, "a copy of the database, now in the backup store", log);
}

}  // namespace

LocalActionHandler TakeFullSnapshotHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
