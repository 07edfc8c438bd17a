#include "member/member_backups.h"

#include <algorithm>
#include <array>
#include <ctime>

#include "adapters/kubernetes/agent_lease.h"
#include "adapters/kubernetes/etcd_status.h"
#include "adapters/object_store/store_config.h"
#include "engine/common/time_util.h"
#include "engine/extensions/cron_schedule.h"

namespace ruleplane {

Value BackupRound::ToValue() const {
  return Value::MakeMap({{Value::String("leads"), Value::Bool(leads)},
                         {Value::String("backup"), Value::String(backup)},
                         {Value::String("collected"), StringList(collected)},
                         {Value::String("error"), Value::String(error)}});
}

MemberBackups::MemberBackups(MemberAgentOptions options, EtcdClient& cluster, KubeClient& kube,
                             BackupStore& store, const std::atomic<bool>* stopping)
    : options_(std::move(options)), cluster_(cluster), kube_(kube), store_(store), stopping_(stopping) {}

Result<MemberBackups::DueBackup> MemberBackups::TakeDueBackup(std::chrono::system_clock::time_point now) {
  auto listing = store_.List();
  if (!listing.ok()) return listing.error();
  int64_t last_full_created = -1;
  for (const StoredSnapshot& snapshot : listing->snapshots) {
    if (snapshot.kind == "Full") last_full_created = std::max(last_full_created, snapshot.created_on);
  }
  auto schedule = expr::CronSchedule::Parse(options_.schedule);
  if (!schedule.ok()) return schedule.error();
  bool full_due = last_full_created < 0;
  if (!full_due) {
    auto next = schedule->Next(Timestamp{last_full_created, 0});
    if (!next.ok()) return next.error();
    full_due = std::chrono::system_clock::to_time_t(now) >= next->seconds;
  }
  // New credentials (a rotated key, another bucket's): a full snapshot, so
  // that what they reach is restorable on its own (etcd-backup-restore's
  // hasSnapStoreSecretUpdated).
  auto credentials = CredentialsModifiedTime(options_.store_credentials);
  if (!credentials.ok()) return credentials.error();
  if (!credentials_modified_) credentials_modified_ = *credentials;
  full_due = full_due || *credentials > *credentials_modified_;
  RequestLog log;
  BackupOptions backup;
  backup.compression_suffix = options_.compression_suffix;
  backup.delta_memory_limit = options_.delta_memory_limit;
  if (full_due) {
    auto taken = TakeFullBackup(cluster_, store_, backup, log);
    if (!taken.ok()) return taken.error();
    credentials_modified_ = *credentials;
    return DueBackup{*taken, options_.full_snapshot_lease};
  }
  if (options_.delta_period < std::chrono::seconds(1)) return DueBackup{};
  if (last_delta_ && now - *last_delta_ < options_.delta_period) return DueBackup{};
  auto taken = TakeDeltaBackup(cluster_, store_, backup, log);
  if (!taken.ok()) return taken.error();
  // A delta cut at the memory limit: the rest is due at the next round.
  last_delta_ = taken->more ? std::nullopt : std::optional(now);
  return DueBackup{*taken, options_.delta_snapshot_lease};
}

Status MemberBackups::CollectGarbage(int64_t cluster_revision, std::chrono::system_clock::time_point now,
                                     BackupRound& round) {
  // With the cluster's revision, a stray name beyond it is a warning, not a
  // full snapshot that would pass for the newest and leave the real one
  // unprotected.
  auto listing = store_.List(cluster_revision);
  if (!listing.ok()) return listing.error();
  auto doomed = SnapshotsToCollect(listing->snapshots, options_.retention, now);
  if (!doomed.ok()) return doomed.error();
  RequestLog log;
  for (const StoredSnapshot& snapshot : *doomed) {
    if (Status deleted = store_.Delete(snapshot, log); !deleted.ok())
      return Error{deleted.error().code, "deleting " + snapshot.path + ": " + deleted.error().message, {}};
    round.collected.push_back(snapshot.path);
  }
  return {};
}

Status MemberBackups::SetBackupReady(bool succeeded, const std::string& message,
                                     std::chrono::system_clock::time_point now) {
  if (options_.etcd_name.empty()) return {};
  const KubeResource etcd{"druid.gardener.cloud/v1alpha1", "etcds", options_.namespace_name,
                          options_.etcd_name, ""};
  auto stamp = TimestampFromUnixSeconds(std::chrono::system_clock::to_time_t(now));
  if (!stamp.ok()) return stamp.error();
  const std::string time = FormatRfc3339(*stamp);
  const Value condition = Value::MakeMap(
      {{Value::String("type"), Value::String("BackupReady")},
       {Value::String("status"), Value::String(succeeded ? "True" : "False")},
       {Value::String("reason"), Value::String(succeeded ? "BackupSucceeded" : "BackupFailed")},
       {Value::String("message"), Value::String(message)},
       {Value::String("lastTransitionTime"), Value::String(time)},
       {Value::String("lastUpdateTime"), Value::String(time)}});
  static constexpr std::array<std::string_view, 4> kCompared = {"type", "status", "reason", "message"};
  RequestLog log;
  Status written;
  // A conflict is someone else's status write in between: read it again and
  // decide again (at most three times in one round).
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto current = kube_.Get(etcd, log);
    if (!current.ok()) return current.error();
    const Value* conditions = ValueAt(*current, {"status", "conditions"});
    Value::List list =
        conditions != nullptr && conditions->is_list() ? conditions->list_value() : Value::List{};
    const bool already = std::any_of(list.begin(), list.end(), [&](const Value& existing) {
      return std::all_of(kCompared.begin(), kCompared.end(), [&](std::string_view field) {
        const Value* have = ValueAt(existing, {field});
        return have != nullptr && *have == *condition.Find(field);
      });
    });
    if (already) return {};
    const Value patch = FencedMergePatch(
        ResourceVersionOf(*current), "status",
        Value::MakeMap({{Value::String("conditions"),
                         Value::MakeList(WithStatusEntry(std::move(list), "type", condition))}}));
    KubeResource status = etcd;
    status.subresource = "status";
    auto patched = kube_.MergePatch(status, patch, log);
    if (patched.ok()) return {};
    written = patched.error();
    if (written.error().code != ErrorCode::kConflict) break;
  }
  return written;
}

BackupRound MemberBackups::Run(std::chrono::system_clock::time_point now) {
  BackupRound round;
  RequestLog reads;
  // Only the leader backs up; an unanswering member is the heartbeat's to report.
  auto status = cluster_.MemberStatus(options_.client_url, reads);
  round.leads = status.ok() && status->leader != 0 && status->leader == status->member_id;
  if (!round.leads) return round;
  auto append_error = [&](const std::string& error) {
    round.error += (round.error.empty() ? "" : "; ") + error;
  };
  auto backup = TakeDueBackup(now);
  if (!backup.ok() && stopping_ != nullptr && stopping_->load()) {
    round.error = "backup: interrupted by shutdown";  // not an upload that failed
    return round;
  }
  // A snapshot can take minutes: what it did is recorded at the time it ended.
  const auto ended = std::chrono::system_clock::now();
  Status reported;
  if (!backup.ok()) {
    append_error("backup: " + backup.error().message);
    reported = SetBackupReady(false, backup.error().message, ended);
  } else if (!backup->taken.name.empty()) {
    round.backup = backup->taken.name;
    const std::string revision = std::to_string(backup->taken.revision);
    if (!backup->lease.empty()) {
      if (Status renewed = RenewAgentLease(kube_, options_.namespace_name, backup->lease, revision, ended,
                                           3 * options_.heartbeat.count());
          !renewed.ok())
        append_error("snapshot lease: " + renewed.error().message);
    }
    reported = SetBackupReady(true, "the last snapshot upload succeeded", ended);
  }
  if (!reported.ok()) append_error("BackupReady: " + reported.error().message);

  // Collected whether or not the backup failed, as etcd-backup-restore's
  // collector runs on a timer of its own: a store that refuses uploads
  // because it is full is when collection is needed most, and the decision
  // never deletes the newest full snapshot or the deltas after it, whatever
  // the backup did. The snapshot may have taken minutes: leadership and the
  // revision are read again, so that only the leader collects.
  const auto collecting = std::chrono::system_clock::now();
  if (stopping_ != nullptr && stopping_->load()) return round;
  if (last_collection_ && collecting - *last_collection_ < options_.garbage_collection_period) return round;
  auto current = cluster_.MemberStatus(options_.client_url, reads);
  if (!current.ok() || current->leader == 0 || current->leader != current->member_id) return round;
  last_collection_ = collecting;
  if (Status collected = CollectGarbage(current->revision, collecting, round); !collected.ok())
    append_error("garbage collection: " + collected.error().message);
  return round;
}

}  // namespace ruleplane
