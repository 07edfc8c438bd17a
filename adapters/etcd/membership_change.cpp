#include "adapters/etcd/membership_change.h"

#include <algorithm>

namespace ruleplane {

bool HasPeerUrl(const EtcdMember& member, const std::string& url) {
  return std::find(member.peer_urls.begin(), member.peer_urls.end(), url) != member.peer_urls.end();
}

Status NoOtherMemberJoining(const std::vector<EtcdMember>& members, const std::string& peer_url) {
  for (const EtcdMember& member : members) {
    if (!HasPeerUrl(member, peer_url) && (member.name.empty() || member.is_learner)) {
      return Error{
          ErrorCode::kUnavailable,
          "member " + MemberIdHex(member.id) +
              " is still joining (added and not started, or a learner): one membership change at a time",
          {}};
    }
  }
  return {};
}

}  // namespace ruleplane
