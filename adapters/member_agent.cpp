#include "adapters/member_agent.h"

#include <algorithm>

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

MemberAgent::MemberAgent(MemberAgentOptions options, EtcdClient& cluster, KubeClient& kube)
    : options_(std::move(options)), cluster_(cluster), kube_(kube) {}

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
  if (Status renewed =
          RenewAgentLease(kube_, options_.namespace_name, options_.member_name, round.holder_identity, now,
                          3 * options_.heartbeat.count(), status->revision);
      !renewed.ok()) {
    round.error = renewed.error().message;
    round.holder_identity.clear();
  }
  if (leads) {
    if (Status cleaned = RemoveSuperfluousMembers(*members, status->member_id, round); !cleaned.ok())
      round.error = "superfluous members: " + cleaned.error().message;
  }
  return round;
}

}  // namespace ruleplane
