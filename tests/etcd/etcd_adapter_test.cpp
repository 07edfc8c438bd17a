// EtcdAdapter's membership steps against a real etcd member.
#include <ctime>

#include <gtest/gtest.h>

#include "adapters/etcd/etcd_adapter.h"
#include "tests/support/etcd_cluster.h"

namespace ruleplane::testing {
namespace {

PlanStep AddLearnerStep(const std::string& peer_url) {
  PlanStep step;
  step.id = "test/add/1";
  step.action = "AddMember";
  step.target = "x";
  step.adapter = "etcd";
  step.params = Value::MakeMap({{Value::String("name"), Value::String("x")},
                                {Value::String("peerURL"), Value::String(peer_url)},
                                {Value::String("learner"), Value::Bool(true)}});
  return step;
}

// etcd 3.4 derives a new member's ID from its peer URLs and the second it is
// added in: added again within the second its removed predecessor was added
// in, it gets the removed ID and etcd answers "member not found". A second
// later it does not, so that is a retry, not a failed initialization (found
// by the fault campaign: a member replaced twice within a second).
TEST(EtcdAdapter, AMemberAddedAgainWithinTheSecondOfItsRemovedPredecessorIsRetried) {
  TempDir root("etcd-adapter");
  auto cluster = EtcdCluster::Create(1, root.path());
  ASSERT_TRUE(cluster->StartAll().ok());
  EtcdClient client = cluster->Client();
  EtcdAdapter adapter(client);
  const std::string url = "http://127.0.0.1:" + std::to_string(FreeLoopbackPort());
  RequestLog log;
  Status again;
  for (int attempt = 0; attempt < 5; ++attempt) {
    // At the start of a second, so that all three requests fall within it.
    const std::time_t before = std::time(nullptr);
    while (std::time(nullptr) == before) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const std::time_t second = std::time(nullptr);
    auto added = client.MemberAdd({url}, true, log);
    ASSERT_TRUE(added.ok()) << added.error().message;
    ASSERT_TRUE(client.MemberRemove(added->id, log).ok());
    again = adapter.Perform(AddLearnerStep(url), log);
    if (std::time(nullptr) == second) break;
    // A second boundary passed: no collision; start over.
    auto members = client.MemberList(log);
    ASSERT_TRUE(members.ok());
    for (const EtcdMember& member : *members) {
      if (member.is_learner) {
        ASSERT_TRUE(client.MemberRemove(member.id, log).ok());
      }
    }
    again = Status();
  }
  ASSERT_FALSE(again.ok()) << "etcd took the same peer URL again within the second";
  EXPECT_EQ(again.error().code, ErrorCode::kUnavailable) << again.error().message;

  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  Status later = adapter.Perform(AddLearnerStep(url), log);
  ASSERT_TRUE(later.ok()) << later.error().message;
  auto done = adapter.IsDone(AddLearnerStep(url), log);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(*done);
}

}  // namespace
}  // namespace ruleplane::testing
