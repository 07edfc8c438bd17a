#include "controller/etcd_membership.h"

#include <algorithm>

namespace ruleplane {

bool EtcdMembership::Lists(const std::string& member_id, const std::string& cluster) const {
  return observed() && cluster == cluster_id &&
         std::find(member_ids.begin(), member_ids.end(), member_id) != member_ids.end();
}

EtcdMembership ReadEtcdMembership(EtcdClient& client, RequestLog& log) {
  EtcdMembership membership;
  std::string failures;
  for (const std::string& endpoint : client.config().endpoints) {
    auto status = client.MemberStatus(endpoint, log);
    if (!status.ok()) {
      failures += (failures.empty() ? "" : "; ") + endpoint + ": " + status.error().message;
      continue;
    }
    // The list from the member that just answered: in a split brain, another
    // endpoint answers for another cluster.
    auto members = client.MemberList(log, endpoint);
    if (!members.ok()) {
      failures += (failures.empty() ? "" : "; ") + endpoint + ": " + members.error().message;
      continue;
    }
    membership.cluster_id = MemberIdHex(status->cluster_id);
    membership.revision = status->revision;
    for (const EtcdMember& listed : *members) membership.member_ids.push_back(MemberIdHex(listed.id));
    return membership;
  }
  membership.unavailable =
      failures.empty() ? "no member endpoint is known" : "no member answered (" + failures + ")";
  return membership;
}

}  // namespace ruleplane
