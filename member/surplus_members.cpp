#include "member/surplus_members.h"

#include <algorithm>
#include <tuple>

namespace ruleplane {
namespace {

// The ordinal of "<etcd>-<ordinal>" (up to three digits), or -1.
int64_t OrdinalOf(const std::string& name, const std::string& etcd_name) {
  const std::string prefix = etcd_name + "-";
  if (name.size() <= prefix.size() || name.size() > prefix.size() + 3 || name.rfind(prefix, 0) != 0)
    return -1;
  const std::string ordinal = name.substr(prefix.size());
  if (ordinal.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(ordinal);
}

}  // namespace

std::vector<EtcdMember> SurplusMembers(const std::vector<EtcdMember>& members, const std::string& etcd_name,
                                       int64_t kept, uint64_t leader, uint64_t self) {
  std::vector<EtcdMember> surplus;
  for (const EtcdMember& member : members) {
    if (member.id != self && OrdinalOf(member.name, etcd_name) >= std::max<int64_t>(kept, 0))
      surplus.push_back(member);
  }
  auto order = [&](const EtcdMember& member) {
    const int kind = member.is_learner ? 0 : member.id == leader ? 2 : 1;
    return std::make_tuple(kind, -OrdinalOf(member.name, etcd_name));
  };
  std::stable_sort(surplus.begin(), surplus.end(),
                   [&](const EtcdMember& a, const EtcdMember& b) { return order(a) < order(b); });
  return surplus;
}

Quorum QuorumWithout(const std::vector<EtcdMember>& members, const std::set<uint64_t>& healthy,
                     const EtcdMember& removed) {
  Quorum quorum;
  for (const EtcdMember& member : members) {
    if (member.is_learner || member.id == removed.id) continue;
    ++quorum.voting;
    if (healthy.count(member.id) > 0) ++quorum.healthy;
  }
  return quorum;
}

}  // namespace ruleplane
