#include "adapters/member_agent.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "engine/extensions/cron_schedule.h"

namespace ruleplane {
namespace {

const Value* At(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* at = &object;
  for (std::string_view key : keys) {
    if (!at->is_map() || (at = at->Find(key)) == nullptr) return nullptr;
  }
  return at;
}

}  // namespace

Value AgentRound::ToValue() const {
  return Value::MakeMap({{Value::String("healthy"), Value::Bool(healthy)},
                         {Value::String("holderIdentity"), Value::String(holder_identity)},
                         {Value::String("backup"), Value::String(backup)},
                         {Value::String("error"), Value::String(error)}});
}

std::string FormatMicroTime(std::chrono::system_clock::time_point time) {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + length, sizeof text - length, ".%06lldZ", static_cast<long long>(micros % 1000000));
  return text;
}

MemberAgent::MemberAgent(MemberAgentOptions options, EtcdClient& cluster, KubeClient& kube,
                         BackupStore* store)
    : options_(std::move(options)), cluster_(cluster), kube_(kube), store_(store) {}

Status MemberAgent::RenewLease(const std::string& name, const std::string& holder,
                               std::chrono::system_clock::time_point now) {
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
  const Value* version = At(*current, {"metadata", "resourceVersion"});
  const Value patch = Value::MakeMap(
      {{Value::String("metadata"), Value::MakeMap({{Value::String("resourceVersion"),
                                                    version != nullptr ? *version : Value::String("")}})},
       {Value::String("spec"),
        Value::MakeMap(
            {{Value::String("holderIdentity"), Value::String(holder)},
             {Value::String("renewTime"), Value::String(FormatMicroTime(now))},
             {Value::String("leaseDurationSeconds"), Value::Int(3 * options_.heartbeat.count())}})}});
  auto patched = kube_.MergePatch(lease, patch, log);
  if (!patched.ok()) return patched.error();
  return {};
}

Result<std::string> MemberAgent::TakeDueBackup(std::chrono::system_clock::time_point now) {
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
  Result<TakenBackup> taken = Error{ErrorCode::kInternal, "none", {}};
  std::string lease;
  if (full_due) {
    taken = TakeFullBackup(cluster_, *store_, backup, log);
    lease = options_.full_snapshot_lease;
  } else if (!last_delta_ || now - *last_delta_ >= options_.delta_period) {
    taken = TakeDeltaBackup(cluster_, *store_, backup, log);
    lease = options_.delta_snapshot_lease;
    if (taken.ok()) last_delta_ = now;
  } else {
    return std::string();
  }
  if (!taken.ok()) return taken.error();
  if (taken->name.empty()) return std::string();  // the cluster has not moved
  if (!lease.empty()) {
    if (Status renewed = RenewLease(lease, std::to_string(taken->revision), now); !renewed.ok()) {
      return renewed.error();
    }
  }
  return taken->name;
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
  if (Status renewed = RenewLease(options_.member_name, round.holder_identity, now); !renewed.ok()) {
    round.error = renewed.error().message;
    round.holder_identity.clear();
  }
  if (!leads || store_ == nullptr) return round;
  auto backup = TakeDueBackup(now);
  if (!backup.ok()) {
    round.error += std::string(round.error.empty() ? "" : "; ") + "backup: " + backup.error().message;
  } else {
    round.backup = *backup;
  }
  return round;
}

}  // namespace ruleplane
