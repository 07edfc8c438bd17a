#include "member/backup_compaction.h"

#include <filesystem>
#include <vector>

#include "actions/local/local_adapter.h"
#include "adapters/etcd/etcd_client.h"
#include "adapters/local/atomic_file.h"
#include "adapters/local/loopback_etcd.h"
#include "adapters/local/snapshot_file.h"
#include "platform/failure_point.h"

namespace fs = std::filesystem;

namespace ruleplane {
namespace {

// The restore and the replay are the local adapter's, as member-init runs
// them, for a member of its own on loopback.
constexpr const char* kMemberName = "compaction";
constexpr const char* kPeerUrl = "http://127.0.0.1:2380";

PlanStep LocalStep(std::string action, Value::Map params) {
  PlanStep step;
  step.action = std::move(action);
  step.target = kMemberName;
  step.adapter = "local";
  step.params = Value::MakeMap(std::move(params));
  return step;
}

Status RemoveCopy(const std::string& path, RequestLog& log) {
  if (!fs::exists(path)) return {};
  if (!log.Record(Request{Request::Kind::kFile, "remove", path, {}, "a copy of the backups", true}))
    return {};
  std::error_code error;
  fs::remove_all(path, error);
  if (error) return Error{ErrorCode::kIo, "cannot remove " + path + ": " + error.message(), {}};
  return {};
}

}  // namespace

Result<CompactionOutcome> CompactBackups(BackupStore& store, const CompactionOptions& options,
                                         RequestLog& log) {
  auto listing = store.List(options.max_revision);
  if (!listing.ok()) return listing.error();
  if (options.cluster_id != 0) listing->KeepCluster(options.cluster_id);
  const size_t full = listing->LatestFullIndex();
  if (full == listing->snapshots.size()) {
    const std::string of_cluster =
        options.cluster_id == 0 ? "" : " of etcd cluster " + MemberIdHex(options.cluster_id);
    return Error{ErrorCode::kFailedPrecondition,
                 "the backup store " + store.location() + " has no full snapshot" + of_cluster,
                 {}};
  }
  CompactionOutcome outcome;
  outcome.revision = listing->snapshots[full].last_revision;
  Value::List deltas;
  for (size_t i = full + 1; i < listing->snapshots.size(); ++i)
    deltas.push_back(Value::String(listing->snapshots[i].name));
  outcome.deltas = deltas.size();
  if (deltas.empty()) return outcome;
  const int64_t last_revision = listing->snapshots.back().last_revision;
  // One cluster's history only; the compacted snapshot is that cluster's.
  const std::vector<StoredSnapshot> chain(listing->snapshots.begin() + static_cast<std::ptrdiff_t>(full),
                                          listing->snapshots.end());
  auto cluster_id = ChainCluster(chain);
  if (!cluster_id.ok()) return cluster_id.error();

  const std::string data_dir = options.work_dir + "/compaction.etcd";
  if (Status removed = RemoveCopy(data_dir, log); !removed.ok()) return removed.error();
  LocalMember member;
  member.name = kMemberName;
  member.peer_url = kPeerUrl;
  member.data_dir = data_dir;
  member.command_timeout = options.command_timeout;
  LocalAdapter local(member, &store, nullptr);
  const std::string initial_cluster = std::string(kMemberName) + "=" + kPeerUrl;
  for (const PlanStep& step :
       {LocalStep("RestoreFullSnapshot",
                  {{Value::String("snapshot"), Value::String(listing->snapshots[full].name)},
                   {Value::String("initialCluster"), Value::String(initial_cluster)}}),
        LocalStep("ApplyIncrementalSnapshots",
                  {{Value::String("snapshots"), Value::MakeList(std::move(deltas))},
                   {Value::String("initialCluster"), Value::String(initial_cluster)}})}) {
    if (Status done = local.Perform(step, log); !done.ok()) return done.error();
  }

  auto etcd = StartLoopbackEtcd(kMemberName, data_dir, options.work_dir + "/compaction.log", log);
  if (!etcd.ok()) return etcd.error();
  EtcdClient client(EtcdClientConfig{{etcd->client_url}, {}, options.command_timeout});
  if (!log.dry_run() && etcd->revision != last_revision) {
    return Error{ErrorCode::kIo,
                 "the replayed data is at revision " + std::to_string(etcd->revision) +
                     ", the last delta's is " + std::to_string(last_revision),
                 {}};
  }
  outcome.revision = last_revision;
  auto before = client.MemberStatus(etcd->client_url, log);
  if (!before.ok()) return before.error();
  outcome.database_bytes_before = before->db_size;
  if (Status compacted = client.Compact(last_revision, log); !compacted.ok()) return compacted.error();
  if (Status defragmented = client.Defragment(etcd->client_url, log); !defragmented.ok())
    return defragmented.error();
  auto after = client.MemberStatus(etcd->client_url, log);
  if (!after.ok()) return after.error();
  outcome.database_bytes_after = after->db_size;
  etcd->process.Stop(std::chrono::seconds(30));
  FailPoint("compaction:before-upload");

  // etcd is stopped: its database file is the snapshot, and etcd's snapshot
  // stream is that file followed by its SHA-256.
  const std::string snapshot = options.work_dir + "/compaction.snapshot";
  const RemovedAtExit unpublished(snapshot);  // WriteFull takes it; on a failure it goes
  if (log.Record(Request{Request::Kind::kFile,
                         "copy",
                         data_dir + "/member/snap/db",
                         {snapshot},
                         "with a SHA-256 trailer",
                         true})) {
    if (Status written = WriteSnapshotStream(data_dir + "/member/snap/db", snapshot); !written.ok())
      return written.error();
    // Verified as every other full snapshot is before it is stored: a
    // database the defragmentation or the copy damaged is never published
    // (the next garbage collection would delete the deltas it replaced).
    if (Status verified = VerifyFullSnapshot(snapshot, last_revision, options.command_timeout);
        !verified.ok()) {
      Error error = verified.error();
      error.message = "the compacted snapshot was not published: " + error.message;
      return error;
    }
  }
  auto stored = store.WriteFull(snapshot, last_revision, *cluster_id, std::chrono::system_clock::now(),
                                options.compression_suffix, log);
  if (!stored.ok()) return stored.error();
  outcome.snapshot = *stored;  // WriteFull took the file
  if (Status removed = RemoveCopy(data_dir, log); !removed.ok()) return removed.error();
  return outcome;
}

}  // namespace ruleplane
