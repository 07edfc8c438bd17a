#include "member/member_agent.h"

#include <algorithm>

#include "adapters/etcd/membership_change.h"
#include "member/surplus_members.h"

namespace ruleplane {

Value StringList(const std::vector<std::string>& strings) {
  Value::List list;
  for (const std::string& text : strings) list.push_back(Value::String(text));
  return Value::MakeList(std::move(list));
}

Value AgentRound::ToValue() const {
  return Value::MakeMap({{Value::String("healthy"), Value::Bool(healthy)},
                         {Value::String("holderIdentity"), Value::String(holder_identity)},
                         {Value::String("backup"), Value::String(backup)},
                         {Value::String("collected"), StringList(collected)},
                         {Value::String("removed"), StringList(removed)},
                         {Value::String("kept"), StringList(kept)},
                         {Value::String("peerURLUpdated"), Value::String(peer_url_updated)},
                         {Value::String("error"), Value::String(error)}});
}

void AgentRound::AddError(const std::string& text) { error += (error.empty() ? "" : "; ") + text; }

MemberAgent::MemberAgent(MemberAgentOptions options, EtcdClient& cluster, KubeClient& kube)
    : options_(std::move(options)), cluster_(cluster), kube_(kube) {}

std::set<uint64_t> MemberAgent::HealthyMembers(const std::vector<EtcdMember>& members,
                                               const EtcdStatus& self) {
  // Short probes: a member that does not answer must not hold up the next heartbeat.
  EtcdClientConfig config = cluster_.config();
  config.timeout = std::min<std::chrono::milliseconds>(config.timeout, std::chrono::seconds(2));
  EtcdClient probe(config);
  std::set<uint64_t> healthy = {self.member_id};
  for (const EtcdMember& member : members) {
    if (member.id == self.member_id) continue;
    for (const std::string& url : member.client_urls) {
      RequestLog log;
      auto status = probe.MemberStatus(url, log);
      if (!status.ok()) continue;
      if (status->member_id == member.id && status->cluster_id == self.cluster_id && status->leader != 0)
        healthy.insert(member.id);
      break;
    }
  }
  return healthy;
}

std::string MemberAgent::PodStandsFor(const EtcdMember& member) {
  RequestLog log;
  auto pod = kube_.Get({"v1", "pods", options_.namespace_name, member.name, ""}, log);
  if (!pod.ok()) {
    if (pod.error().code == ErrorCode::kNotFound) return "";
    return "its Pod could not be read: " + pod.error().message;
  }
  const Value* deleting = ValueAt(*pod, {"metadata", "deletionTimestamp"});
  if (deleting != nullptr && !deleting->is_null()) return "";
  return "its Pod runs";
}

Status MemberAgent::RemoveSurplusMember(const std::vector<EtcdMember>& members, const EtcdStatus& self,
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
  if (kept < 1) return {};  // a scale to zero is not a scale-in
  const std::vector<EtcdMember> surplus =
      SurplusMembers(members, options_.etcd_name, kept, self.leader, self.member_id);
  if (surplus.empty()) return {};
  const std::set<uint64_t> healthy = HealthyMembers(members, self);
  for (const EtcdMember& member : surplus) {
    if (const std::string pod = PodStandsFor(member); !pod.empty()) {
      round.kept.push_back(member.name + ": " + pod);
      continue;
    }
    const Quorum left = QuorumWithout(members, healthy, member);
    if (!left.quorate()) {
      round.kept.push_back(member.name + ": without it " + std::to_string(left.healthy) + " of " +
                           std::to_string(left.voting) + " voting members would be healthy, no majority");
      continue;
    }
    if (Status removed = cluster_.MemberRemove(member.id, log); !removed.ok()) return removed;
    round.removed.push_back(member.name);
    return {};  // one membership change per heartbeat
  }
  return {};
}

Status MemberAgent::UpdateOwnPeerUrl(const std::vector<EtcdMember>& members, const EtcdStatus& self,
                                     AgentRound& round) {
  if (options_.peer_url.empty()) return {};
  for (const EtcdMember& member : members) {
    if (member.id != self.member_id || member.peer_urls == std::vector<std::string>{options_.peer_url})
      continue;
    if (Status alone = NoOtherMemberJoining(members, options_.peer_url); !alone.ok()) return alone;
    RequestLog log;
    if (Status updated = cluster_.MemberUpdate(member.id, {options_.peer_url}, log); !updated.ok())
      return updated;
    round.peer_url_updated = options_.peer_url;
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
  round.cluster_id = status->cluster_id;
  auto members = cluster_.MemberList(reads);
  if (!members.ok()) {
    round.error = "no member list: " + members.error().message;
    return round;
  }
  const std::string recorder = MemberIdHex(status->member_id) + ":" + MemberIdHex(status->cluster_id);
  const bool voting = std::any_of(members->begin(), members->end(), [&](const EtcdMember& member) {
    return member.id == status->member_id && !member.is_learner;
  });
  if (!voting || status->leader == 0) {
    round.error = voting ? "the member knows no leader" : "the member is not a voting member of the cluster";
    // Not healthy, so no renewal; its revision still bounds what a re-bootstrap loses.
    if (Status recorded = RecordAgentRevision(kube_, options_.namespace_name, options_.member_name, now,
                                              status->revision, recorder);
        !recorded.ok())
      round.error += "; revision not recorded: " + recorded.error().message;
    return round;
  }
  round.healthy = true;
  const bool leads = status->leader == status->member_id;
  // etcd-backup-restore's holder since v0.40 (pkg/health/heartbeat/heartbeat.go):
  // "<memberID>:<clusterID>:<role>", both IDs in hex without padding.
  round.holder_identity = recorder + (leads ? ":Leader" : ":Member");
  if (Status updated = UpdateOwnPeerUrl(*members, *status, round); !updated.ok())
    round.AddError("the peer URL in the member list stays: " + updated.error().message);
  // Peer TLS as the cluster knows this member now (its peer URLs in the member list).
  bool peer_tls = false;
  for (const EtcdMember& member : *members) {
    if (member.id != status->member_id) continue;
    const std::vector<std::string> urls =
        round.peer_url_updated.empty() ? member.peer_urls : std::vector<std::string>{round.peer_url_updated};
    peer_tls = !urls.empty() && std::all_of(urls.begin(), urls.end(), [](const std::string& url) {
      return url.rfind("https://", 0) == 0;
    });
  }
  if (Status renewed = RenewAgentLease(
          kube_, options_.namespace_name, options_.member_name, round.holder_identity, now,
          3 * options_.heartbeat.count(), status->revision,
          {{kPeerTlsEnabledAnnotation, peer_tls ? "true" : "false"}, {kRevisionMemberAnnotation, recorder}});
      !renewed.ok()) {
    round.AddError(renewed.error().message);
    round.holder_identity.clear();
  }
  if (leads) {
    if (Status cleaned = RemoveSurplusMember(*members, *status, round); !cleaned.ok())
      round.AddError("surplus members: " + cleaned.error().message);
  }
  return round;
}

}  // namespace ruleplane
