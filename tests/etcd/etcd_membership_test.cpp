// ReadEtcdMembership against real etcd 3.4 (issue 41, hazard 4): the member
// list a quorum-loss recovery's data-loss bound is checked against, read
// from a survivor that knows no leader.
#include "controller/etcd_membership.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "tests/support/etcd_cluster.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

std::vector<std::string> Sorted(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(EtcdMembership, ASurvivorOfAQuorumLossStillAnswersWithItsClusterAndMembers) {
  TempDir root("etcd-membership");
  auto cluster = EtcdCluster::Create(3, root.path());
  ASSERT_TRUE(cluster->StartAll().ok());
  EtcdClient client = cluster->Client();
  RequestLog log;
  auto status = client.MemberStatus(cluster->member(0).client_url, log);
  ASSERT_TRUE(status.ok()) << status.error().message;

  const EtcdMembership healthy = ReadEtcdMembership(client, log);
  ASSERT_TRUE(healthy.observed()) << healthy.unavailable;
  EXPECT_EQ(healthy.cluster_id, MemberIdHex(status->cluster_id));
  EXPECT_EQ(healthy.member_ids.size(), 3u);
  EXPECT_TRUE(healthy.Lists(MemberIdHex(status->member_id), MemberIdHex(status->cluster_id)));
  EXPECT_FALSE(healthy.Lists(MemberIdHex(status->member_id), "another"));

  cluster->StopMember(1);
  cluster->StopMember(2);
  ASSERT_TRUE(cluster->WaitLeaderless(0)) << "the survivor still knows a leader";
  const EtcdMembership survivor = ReadEtcdMembership(client, log);
  ASSERT_TRUE(survivor.observed()) << survivor.unavailable;
  EXPECT_EQ(survivor.cluster_id, healthy.cluster_id);
  EXPECT_EQ(Sorted(survivor.member_ids), Sorted(healthy.member_ids));

  cluster->StopMember(0);
  const EtcdMembership none = ReadEtcdMembership(client, log);
  EXPECT_FALSE(none.observed());
  EXPECT_NE(none.unavailable.find("no member answered"), std::string::npos) << none.unavailable;
}

}  // namespace
}  // namespace ruleplane::testing
