// RestoreFullSnapshot (snapshot, initialCluster): the backup store's full
// snapshot restored with `etcdctl snapshot restore` into a temporary
// directory, its revision verified, then renamed into the empty data
// directory; a member that joins an existing cluster keeps the verified
// restore beside its data directory instead. Done when the data directory
// holds the snapshot's revision.
#include <algorithm>
#include <chrono>

#include "actions/local/etcd_config.h"
#include "actions/local/local_action_handler.h"
#include "adapters/local/atomic_file.h"
#include "adapters/local/file_operations.h"
#include "adapters/local/initial_cluster.h"
#include "adapters/local/snapshot_file.h"
#include "platform/failure_point.h"

namespace ruleplane {
namespace {

Error IoError(std::string message) { return Error{ErrorCode::kIo, std::move(message), {}}; }

// Done when the data directory holds the snapshot's revision. A member that
// joins an existing cluster never holds it (see Perform).
Result<bool> IsDone(const PlanStep& step, LocalActionContext& context, RequestLog& /*log*/) {
  return DataDirHoldsSnapshot(context, StepParam(step, "snapshot"));
}

Status Perform(const PlanStep& step, LocalActionContext& context, RequestLog& log) {
  if (context.store == nullptr)
    return Error{ErrorCode::kFailedPrecondition, "no backup store is configured", {}};
  const LocalMember& member = context.member;
  BackupStore& store = *context.store;
  const std::string name = StepParam(step, "snapshot");
  std::string initial_cluster = StepParam(step, "initialCluster");
  // etcdctl restores only as a member of the initial cluster. A member the
  // configuration does not list yet (a scale-up whose ConfigMap still names
  // the old members) joins through AddMember: it restores as itself beside them.
  const std::vector<std::string> listed = InitialClusterNames(initial_cluster);
  if (std::find(listed.begin(), listed.end(), member.name) == listed.end())
    initial_cluster += (initial_cluster.empty() ? "" : ",") + member.name + "=" + member.peer_url;
  if (Status checked = CheckInitialCluster(initial_cluster); !checked.ok()) return checked;
  auto listing = store.List();
  if (!listing.ok()) return listing.error();
  const StoredSnapshot* snapshot = nullptr;
  for (const StoredSnapshot& candidate : listing->snapshots) {
    if (candidate.name == name) snapshot = &candidate;
  }
  if (snapshot == nullptr) return Error{ErrorCode::kNotFound, "the backup store has no snapshot " + name, {}};

  const std::string work = member.data_dir + ".restore-tmp";
  if (Status removed = RemoveDerived(work, "a partial restore from an interrupted run", log); !removed.ok()) {
    return removed;
  }
  if (Status made = MakeDirectory(work, log); !made.ok()) return made;
  const std::string db_file = work + "/snapshot.db";
  if (log.Record(
          Request{Request::Kind::kFile, "copy", store.PathOf(name), {db_file}, "decompressed", true})) {
    if (Status copied = store.ReadSnapshotToFile(name, db_file); !copied.ok()) return copied;
  }
  const std::string restored = work + "/data";
  if (Status ran =
          RunRecorded({"etcdctl", "snapshot", "restore", db_file, "--name", member.name, "--data-dir",
                       restored, "--initial-cluster", initial_cluster, "--initial-advertise-peer-urls",
                       member.peer_url, "--initial-cluster-token",
                       member.cluster_token.empty()
                           ? TemplateValue(member.config_template, "initial-cluster-token", "etcd-cluster")
                           : member.cluster_token},
                      member.command_timeout, log);
      !ran.ok()) {
    return ran;
  }
  FailPoint("local:restore-before-rename");
  if (!log.dry_run()) {
    auto revision = SnapshotFileRevision(restored + "/member/snap/db", member.command_timeout);
    if (!revision.ok()) return revision.error();
    // etcd's first revision is 1; a database no key was ever written to reads 0.
    if (std::max<int64_t>(*revision, 1) != std::max<int64_t>(snapshot->last_revision, 1)) {
      return IoError("the restored database has revision " + std::to_string(*revision) +
                     ", the snapshot's name says " + std::to_string(snapshot->last_revision));
    }
  }
  // etcd 3.4 cannot join an existing cluster from restored data: the restored
  // WAL carries a new cluster ID, and a database without its WAL would have
  // the leader's log applied again on top of it. A member that joins keeps
  // the verified restore beside its data directory and starts empty; the
  // leader sends it the data.
  const bool joins = InitialClusterNames(initial_cluster).size() > 1;
  if (joins) {
    // Named after its own second, and unique: two restores within one second used to collide.
    auto aside = MoveAside(restored, std::chrono::system_clock::now(), log, member.data_dir + ".restored");
    if (!aside.ok()) return aside.error();
  } else {
    if (Status made = MakeDirectory(member.data_dir, log); !made.ok()) return made;
    if (!log.dry_run() && !IsEmptyDirectory(member.data_dir)) {
      return Error{
          ErrorCode::kFailedPrecondition, "the data directory " + member.data_dir + " is not empty", {}};
    }
    if (Status moved = Rename(restored + "/member", member.data_dir + "/member", log); !moved.ok())
      return moved;
  }
  return RemoveDerived(work, "the decompressed copy of " + name, log);
}

}  // namespace

LocalActionHandler RestoreFullSnapshotHandler() {
  return {.is_done = IsDone, .perform = Perform, .fence = nullptr, .poll_interval = std::nullopt};
}

}  // namespace ruleplane
