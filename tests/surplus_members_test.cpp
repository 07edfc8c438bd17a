// Which member left behind by a scale-down the leading member-agent removes:
// learners first, the leader last, the highest ordinal first, never itself;
// and the quorum a removal leaves, counted exactly.
#include "member/surplus_members.h"

#include <gtest/gtest.h>

namespace ruleplane {
namespace {

EtcdMember Member(uint64_t id, const std::string& name, bool learner = false) {
  EtcdMember member;
  member.id = id;
  member.name = name;
  member.is_learner = learner;
  return member;
}

std::vector<std::string> Names(const std::vector<EtcdMember>& members) {
  std::vector<std::string> names;
  for (const EtcdMember& member : members) names.push_back(member.name);
  return names;
}

TEST(SurplusMembers, LearnersFirstThenVotersHighestOrdinalFirstTheLeaderLastNeverItself) {
  const std::vector<EtcdMember> members = {
      Member(1, "etcd-main-0"),  Member(2, "etcd-main-1"),    Member(3, "etcd-main-2"),
      Member(4, "etcd-main-3"),  Member(5, "etcd-main-4"),    Member(6, "etcd-main-5", true),
      Member(7, "etcd-main-6"),  Member(8, "other-7"),        Member(9, ""),
      Member(10, "etcd-main-x"), Member(11, "etcd-main-1000")};
  // Leader 7 (etcd-main-6), the agent runs beside member 1.
  EXPECT_EQ(Names(SurplusMembers(members, "etcd-main", 3, 7, 1)),
            (std::vector<std::string>{"etcd-main-5", "etcd-main-4", "etcd-main-3", "etcd-main-6"}));
  // The agent runs beside the leader, etcd-main-4: it never removes itself.
  EXPECT_EQ(Names(SurplusMembers(members, "etcd-main", 3, 5, 5)),
            (std::vector<std::string>{"etcd-main-5", "etcd-main-6", "etcd-main-3"}));
  EXPECT_TRUE(SurplusMembers(members, "etcd-main", 7, 1, 1).empty());
}

TEST(QuorumWithout, AMajorityOfTheVotersLeftExactly) {
  const std::vector<EtcdMember> members = {Member(1, "m0"), Member(2, "m1"), Member(3, "m2"),
                                           Member(4, "m3"), Member(5, "m4"), Member(6, "m5", true)};
  // 5 voters, 3 healthy: removing an unhealthy one leaves 3 of 4, a healthy one 2 of 4 (no majority).
  const std::set<uint64_t> three = {1, 2, 3};
  Quorum without_down = QuorumWithout(members, three, members[4]);
  EXPECT_EQ(without_down.voting, 4);
  EXPECT_EQ(without_down.healthy, 3);
  EXPECT_TRUE(without_down.quorate());
  Quorum without_healthy = QuorumWithout(members, three, members[0]);
  EXPECT_EQ(without_healthy.voting, 4);
  EXPECT_EQ(without_healthy.healthy, 2);
  EXPECT_FALSE(without_healthy.quorate()) << "2 of 4 is not a majority";
  // A learner's removal leaves the voters as they are: 3 of 5.
  Quorum without_learner = QuorumWithout(members, three, members[5]);
  EXPECT_EQ(without_learner.voting, 5);
  EXPECT_EQ(without_learner.healthy, 3);
  EXPECT_TRUE(without_learner.quorate());
  // 2 healthy of 5: even an unhealthy member's removal leaves 2 of 4.
  EXPECT_FALSE(QuorumWithout(members, {1, 2}, members[4]).quorate());
  EXPECT_FALSE(QuorumWithout(members, {1, 2, 6}, members[5]).quorate()) << "a healthy learner does not vote";
  // 3 voters, all healthy: 2 of 2 after one goes; 1 voter removed from 2 leaves 1 of 1.
  const std::vector<EtcdMember> small = {Member(1, "m0"), Member(2, "m1"), Member(3, "m2")};
  EXPECT_TRUE(QuorumWithout(small, {1, 2, 3}, small[2]).quorate());
  EXPECT_FALSE(QuorumWithout(small, {1, 3}, small[2]).quorate()) << "1 of 2";
  EXPECT_TRUE(QuorumWithout({small[0], small[1]}, {1, 2}, small[1]).quorate());
  EXPECT_FALSE(QuorumWithout({small[0]}, {1}, small[0]).quorate()) << "no voter left";
}

}  // namespace
}  // namespace ruleplane
