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
namespace {

void AppendError(BackupRound& round, const std::string& error) {
  round.error += (round.error.empty() ? "" : "; ") + error;
}

RequestedSnapshot Failed(std::string error) {
  RequestedSnapshot answer;
  answer.error = std::move(error);
  return answer;
}

}  // namespace

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
  metrics_.ObserveStore(listing->snapshots);
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
  BackupOptions backup;
  backup.compression_suffix = options_.compression_suffix;
  backup.delta_memory_limit = options_.delta_memory_limit;
  if (full_due) {
    auto taken = Take("Full", backup);
    if (!taken.ok()) return taken.error();
    credentials_modified_ = *credentials;
    // The delta period starts with the first full snapshot, as
    // etcd-backup-restore's delta timer starts with its snapshotter: a delta
    // taken one heartbeat after it would only split the first period.
    if (!last_delta_) last_delta_ = now;
    return DueBackup{*taken, options_.full_snapshot_lease};
  }
  if (options_.delta_period < std::chrono::seconds(1)) return DueBackup{};
  if (last_delta_ && now - *last_delta_ < options_.delta_period) return DueBackup{};
  auto taken = Take("Incr", backup);
  if (!taken.ok() && taken.error().code == ErrorCode::kFailedPrecondition) {
    // No delta can continue the store's chain (its start revision was
    // compacted away, or there is no full snapshot to start from): only a
    // full snapshot keeps the backups restorable to now, so it is taken at
    // once rather than at the next scheduled one.
    auto full = Take("Full", backup);
    if (!full.ok()) return full.error();
    return DueBackup{*full, options_.full_snapshot_lease};
  }
  if (!taken.ok()) return taken.error();
  // A delta cut at the memory limit: the rest is due at the next round.
  last_delta_ = taken->more ? std::nullopt : std::optional(now);
  return DueBackup{*taken, options_.delta_snapshot_lease};
}

Status MemberBackups::CollectGarbage(const EtcdStatus& cluster, std::chrono::system_clock::time_point now,
                                     BackupRound& round) {
  // With the cluster's revision, a stray name beyond it is a warning, not a
  // full snapshot that would pass for the newest and leave the real one
  // unprotected. Another cluster's snapshots on the prefix are neither
  // collected nor counted, for the same reason: its newer full snapshot
  // would leave this cluster's newest one to LimitBased.
  auto listing = store_.List(cluster.revision);
  if (!listing.ok()) return listing.error();
  if (cluster.cluster_id != 0) listing->KeepCluster(cluster.cluster_id);
  RetentionOptions retention = options_.retention;
  retention.schedule = options_.schedule;
  // The compaction Job names its full snapshot on the full-snapshot Lease;
  // without that Lease's word this round collects nothing.
  if (!options_.full_snapshot_lease.empty()) {
    RequestLog reads;
    auto lease = kube_.Get(
        {"coordination.k8s.io/v1", "leases", options_.namespace_name, options_.full_snapshot_lease, ""},
        reads);
    if (!lease.ok() && lease.error().code != ErrorCode::kNotFound) {
      return Error{lease.error().code,
                   "reading the Lease " + options_.full_snapshot_lease +
                       " before collecting: " + lease.error().message,
                   {}};
    }
    const Value* compacted =
        lease.ok() ? ValueAt(*lease, {"metadata", "annotations", kCompactedFullAnnotation}) : nullptr;
    if (compacted != nullptr && compacted->is_string()) retention.compacted_full = compacted->string_value();
  }
  auto doomed = SnapshotsToCollect(listing->snapshots, retention, now);
  if (!doomed.ok()) return doomed.error();
  RequestLog log;
  for (const StoredSnapshot& snapshot : *doomed) {
    if (Status deleted = store_.Delete(snapshot, log); !deleted.ok()) {
      metrics_.Collected(snapshot.kind, false);
      metrics_.Failure(deleted.error().message);
      return Error{deleted.error().code, "deleting " + snapshot.path + ": " + deleted.error().message, {}};
    }
    metrics_.Collected(snapshot.kind, true);
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
  if (!round.leads) {
    unreported_readiness_.reset();  // the leader's reports are newer than this member's
    return round;
  }
  auto backup = TakeDueBackup(now);
  if (!backup.ok() && stopping_ != nullptr && stopping_->load()) {
    round.error = "backup: interrupted by shutdown";  // not an upload that failed
    return round;
  }
  Report(backup.ok() ? Result<TakenBackup>(backup->taken) : Result<TakenBackup>(backup.error()),
         backup.ok() ? backup->lease : "", round);
  metrics_.RoundRun();

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
  if (Status collected = CollectGarbage(*current, collecting, round); !collected.ok())
    AppendError(round, "garbage collection: " + collected.error().message);
  return round;
}

Result<TakenBackup> MemberBackups::Take(const std::string& kind, const BackupOptions& backup) {
  RequestLog log;
  const auto started = std::chrono::steady_clock::now();
  auto taken = kind == "Full" ? TakeFullBackup(cluster_, store_, backup, log)
                              : TakeDeltaBackup(cluster_, store_, backup, log);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (!taken.ok()) {
    if (stopping_ == nullptr || !stopping_->load())
      metrics_.SnapshotFailed(kind, seconds, taken.error().message);
  } else if (!taken->name.empty()) {
    if (auto stored = StoredSnapshotOf("v2/" + taken->name)) metrics_.SnapshotTaken(*stored, seconds);
  }
  return taken;
}

void MemberBackups::Report(const Result<TakenBackup>& taken, const std::string& lease, BackupRound& round) {
  // A snapshot can take minutes: what it did is recorded at the time it ended.
  const auto ended = std::chrono::system_clock::now();
  // With nothing new to report, a report the API server refused before is
  // made again: otherwise a quiet cluster (no delta) never shows its backup.
  std::optional<Readiness> readiness = unreported_readiness_;
  if (!taken.ok()) {
    AppendError(round, "backup: " + taken.error().message);
    readiness = Readiness{false, taken.error().message, ended};
  } else if (!taken->name.empty()) {
    round.backup = taken->name;
    const std::string revision = std::to_string(taken->revision);
    if (!lease.empty()) {
      if (Status renewed = RenewAgentLease(kube_, options_.namespace_name, lease, revision, ended,
                                           3 * options_.heartbeat.count());
          !renewed.ok())
        AppendError(round, "snapshot lease: " + renewed.error().message);
    }
    readiness = Readiness{true, "the last snapshot upload succeeded", ended};
  }
  if (!readiness) return;
  const Status reported = SetBackupReady(readiness->succeeded, readiness->message, readiness->at);
  unreported_readiness_ = reported.ok() ? std::nullopt : readiness;
  if (!reported.ok()) AppendError(round, "BackupReady: " + reported.error().message);
}

RequestedSnapshot MemberBackups::Serve(const SnapshotRequest& request, BackupRound& round) {
  RequestLog reads;
  auto status = cluster_.MemberStatus(options_.client_url, reads);
  if (!status.ok()) return Failed("this member does not answer: " + status.error().message);
  if (status->leader == 0) return Failed("the cluster has no leader");
  if (status->leader != status->member_id) {
    RequestedSnapshot answer;
    answer.outcome = RequestedSnapshot::Outcome::kNotLeader;
    answer.error = "this member does not lead";
    auto members = cluster_.MemberList(reads);
    if (!members.ok()) return answer;
    for (const EtcdMember& member : *members) {
      if (member.id == status->leader && !member.client_urls.empty())
        answer.leader_client_url = member.client_urls[0];
    }
    return answer;
  }
  round.leads = true;
  // etcd-backup-restore's TriggerDeltaSnapshot refuses so too.
  if (!request.full && options_.delta_period < std::chrono::seconds(1))
    return Failed("delta snapshots are disabled (--delta-snapshot-period under 1s)");
  auto& last_requested = request.full ? last_requested_full_ : last_requested_delta_;
  const auto asked = std::chrono::steady_clock::now();
  if (last_requested && asked - *last_requested < options_.snapshot_request_interval) {
    const auto wait = std::chrono::ceil<std::chrono::seconds>(options_.snapshot_request_interval -
                                                              (asked - *last_requested));
    RequestedSnapshot answer;
    answer.outcome = RequestedSnapshot::Outcome::kTooSoon;
    answer.error = std::string("a ") + (request.full ? "full snapshot" : "delta snapshot") +
                   " was taken on request less than " +
                   std::to_string(options_.snapshot_request_interval.count()) +
                   "s ago (--snapshot-request-interval): ask again in " + std::to_string(wait.count()) + "s";
    return answer;
  }
  BackupOptions backup;
  backup.compression_suffix = options_.compression_suffix;
  backup.delta_memory_limit = options_.delta_memory_limit;
  backup.final = request.full && request.final;
  auto taken = Take(request.full ? "Full" : "Incr", backup);
  if (!taken.ok() && stopping_ != nullptr && stopping_->load()) return Failed("interrupted by shutdown");
  if (taken.ok()) last_requested = asked;
  if (taken.ok() && !request.full && !taken->more) last_delta_ = std::chrono::system_clock::now();
  Report(taken, request.full ? options_.full_snapshot_lease : options_.delta_snapshot_lease, round);
  if (!taken.ok()) return Failed(taken.error().message);
  RequestedSnapshot answer;
  if (taken->name.empty()) {
    answer.outcome = RequestedSnapshot::Outcome::kNothingNew;
    return answer;
  }
  std::optional<StoredSnapshot> stored = StoredSnapshotOf("v2/" + taken->name);
  if (!stored) return Failed("the snapshot's name does not parse: " + taken->name);
  answer.outcome = RequestedSnapshot::Outcome::kTaken;
  answer.snapshot = *stored;
  return answer;
}

RequestedSnapshot MemberBackups::Request(SnapshotRequest request, std::chrono::milliseconds timeout) {
  auto pending = std::make_shared<Pending>();
  pending->request = request;
  std::unique_lock<std::mutex> lock(requests_mutex_);
  if (closed_) return Failed("the member-agent is stopping");
  requests_.push_back(pending);
  requests_changed_.notify_all();
  requests_changed_.wait_for(lock, timeout, [&] { return pending->done || closed_; });
  if (pending->done) return pending->answer;
  std::erase(requests_, pending);  // not started: nobody waits for it any more
  return Failed(closed_ ? "the member-agent is stopping"
                        : "no answer within " + std::to_string(timeout.count() / 1000) + "s");
}

void MemberBackups::ServeRequests(std::vector<BackupRound>& rounds) {
  while (true) {
    std::shared_ptr<Pending> next;
    {
      std::lock_guard<std::mutex> lock(requests_mutex_);
      if (requests_.empty()) return;
      next = requests_.front();
      requests_.pop_front();
    }
    BackupRound round;
    RequestedSnapshot answer = Serve(next->request, round);
    if (!round.idle()) rounds.push_back(std::move(round));
    {
      std::lock_guard<std::mutex> lock(requests_mutex_);
      next->answer = std::move(answer);
      next->done = true;
    }
    requests_changed_.notify_all();
  }
}

bool MemberBackups::WaitForWork(std::chrono::steady_clock::time_point until, const std::atomic<bool>& stop) {
  std::unique_lock<std::mutex> lock(requests_mutex_);
  while (!stop) {
    const auto now = std::chrono::steady_clock::now();
    if (!requests_.empty() || now >= until) return true;
    requests_changed_.wait_until(lock, std::min(until, now + std::chrono::milliseconds(100)));
  }
  return false;
}

void MemberBackups::Close() {
  {
    std::lock_guard<std::mutex> lock(requests_mutex_);
    closed_ = true;
    requests_.clear();
  }
  requests_changed_.notify_all();
}

}  // namespace ruleplane
