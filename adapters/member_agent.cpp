#include "adapters/member_agent.h"

#include <algorithm>
#include <array>
#include <ctime>

#include "adapters/kubernetes/etcd_status.h"
#include "engine/common/time_util.h"
#include "engine/extensions/cron_schedule.h"

namespace ruleplane {
Value AgentRound::ToValue() const {
  return Value::MakeMap({{Value::String("healthy"), Value::Bool(healthy)},
                         {Value::String("holderIdentity"), Value::String(holder_identity)},
                         {Value::String("backup"), Value::String(backup)},
                         {Value::String("removed"),
                          [&] {
                            Value::List names;
                            for (const std::string& name : removed) names.push_back(Value::String(name));
                            return Value::MakeList(std::move(names));
                          }()},
                         {Value::String("error"), Value::String(error)}});
}

MemberAgent::MemberAgent(MemberAgentOptions options, EtcdClient& cluster, KubeClient& kube,
                         BackupStore* store)
    : options_(std::move(options)), cluster_(cluster), kube_(kube), store_(store) {}

Status MemberAgent::RenewLease(const std::string& name, const std::string& holder,
                               std::chrono::system_clock::time_point now, int64_t revision) {
  RequestLog log;
  const KubeResource lease{"coordination.k8s.io/v1", "leases", options_.namespace_name, name, ""};
  auto current = kube_.Get(lease, log);
  if (!current.ok()) {
    if (current.error().code == ErrorCode::kNotFound) {
      return Error{ErrorCode::kFailedPrecondition,
                   "the Lease " + name + " does not exist (etcd-druid creates it)",
                   {}};
    }
    return current.error();
  }
  // Fenced as FencedMergePatch fences, with the revision annotation beside the resourceVersion.
  Value::Map metadata = {{Value::String("resourceVersion"), Value::String(ResourceVersionOf(*current))}};
  if (revision >= 0) {
    metadata.emplace_back(
        Value::String("annotations"),
        Value::MakeMap({{Value::String(kRevisionAnnotation), Value::String(std::to_string(revision))}}));
  }
  const Value patch =
      Value::MakeMap({{Value::String("metadata"), Value::MakeMap(std::move(metadata))},
                      {Value::String("spec"),
                       Value::MakeMap({{Value::String("holderIdentity"), Value::String(holder)},
                                       {Value::String("renewTime"), Value::String(FormatMicroTime(now))},
                                       {Value::String("leaseDurationSeconds"),
                                        Value::Int(3 * options_.heartbeat.count())}})}});
  auto patched = kube_.MergePatch(lease, patch, log);
  if (!patched.ok()) return patched.error();
  return {};
}

Result<MemberAgent::DueBackup> MemberAgent::TakeDueBackup(std::chrono::system_clock::time_point now) {
  auto listing = store_->List();
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
  RequestLog log;
  BackupOptions backup;
  if (full_due) {
    auto taken = TakeFullBackup(cluster_, *store_, backup, log);
    if (!taken.ok()) return taken.error();
    return DueBackup{*taken, options_.full_snapshot_lease};
  }
  if (last_delta_ && now - *last_delta_ < options_.delta_period) return DueBackup{};
  auto taken = TakeDeltaBackup(cluster_, *store_, backup, log);
  if (!taken.ok()) return taken.error();
  last_delta_ = now;
  return DueBackup{*taken, options_.delta_snapshot_lease};
}

Status MemberAgent::SetBackupReady(bool succeeded, const std::string& message,
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
  // decide again (at most three times in one heartbeat).
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

Status MemberAgent::RemoveSuperfluousMembers(const std::vector<EtcdMember>& members, uint64_t self,
                                             AgentRound& round) {
  if (options_.etcd_name.empty()) return {};
  RequestLog log;
  auto etcd = kube_.Get(
      {"druid.gardener.cloud/v1alpha1", "etcds", options_.namespace_name, options_.etcd_name, ""}, log);
  if (!etcd.ok()) return etcd.error();
  const Value* replicas = ValueAt(*etcd, {"spec", "replicas"});
  const Value* cluster_size = ValueAt(*etcd, {"status", "clusterSize"});
  if (replicas == nullptr || !replicas->is_int() || cluster_size == nullptr || !cluster_size->is_int())
    return {};
  const int64_t kept = std::max(replicas->int_value(), cluster_size->int_value());
  if (kept < 1) return {};
  const std::string prefix = options_.etcd_name + "-";
  for (const EtcdMember& member : members) {
    const std::string ordinal = member.name.rfind(prefix, 0) == 0 ? member.name.substr(prefix.size()) : "";
    if (member.id == self || ordinal.empty() || ordinal.size() > 3 ||
        ordinal.find_first_not_of("0123456789") != std::string::npos || std::stoll(ordinal) < kept)
      continue;
    if (Status removed = cluster_.MemberRemove(member.id, log); !removed.ok()) return removed;
    round.removed.push_back(member.name);
  }
  return {};
}

AgentRound MemberAgent::Heartbeat(std::chrono::system_clock::time_point now) {
  AgentRound round;
  RequestLog reads;
  auto status = cluster_.MemberStatus(options_.client_url, reads);
  if (!status.ok()) {
    round.error = "the member does not answer: " + status.error().message;
    return round;
  }
  auto members = cluster_.MemberList(reads);
  if (!members.ok()) {
    round.error = "no member list: " + members.error().message;
    return round;
  }
  const bool voting = std::any_of(members->begin(), members->end(), [&](const EtcdMember& member) {
    return member.id == status->member_id && !member.is_learner;
  });
  if (!voting || status->leader == 0) {
    round.error = voting ? "the member knows no leader" : "the member is not a voting member of the cluster";
    return round;
  }
  round.healthy = true;
  const bool leads = status->leader == status->member_id;
  round.holder_identity = MemberIdHex(status->member_id) + (leads ? ":Leader" : ":Member");
  if (Status renewed = RenewLease(options_.member_name, round.holder_identity, now, status->revision);
      !renewed.ok()) {
    round.error = renewed.error().message;
    round.holder_identity.clear();
  }
  if (leads) {
    if (Status cleaned = RemoveSuperfluousMembers(*members, status->member_id, round); !cleaned.ok())
      round.error = "superfluous members: " + cleaned.error().message;
  }
  if (!leads || store_ == nullptr) return round;
  auto append_error = [&](const std::string& error) {
    round.error += (round.error.empty() ? "" : "; ") + error;
  };
  auto backup = TakeDueBackup(now);
  Status reported;
  if (!backup.ok()) {
    append_error("backup: " + backup.error().message);
    reported = SetBackupReady(false, backup.error().message, now);
  } else if (!backup->taken.name.empty()) {
    round.backup = backup->taken.name;
    const std::string revision = std::to_string(backup->taken.revision);
    if (!backup->lease.empty()) {
      if (Status renewed = RenewLease(backup->lease, revision, now); !renewed.ok())
        append_error("snapshot lease: " + renewed.error().message);
    }
    reported = SetBackupReady(true, "the last snapshot upload succeeded", now);
  }
  if (!reported.ok()) append_error("BackupReady: " + reported.error().message);
  return round;
}

}  // namespace ruleplane
