// Ports chosen free and closed before etcd binds them can be taken in
// between (etcd 3.4 cannot take an inherited socket): the test cluster
// starts again on new ports. The port is taken on purpose here
// (tests/support/taken_port.h); without the retry, the test fails. (The
// product's own temporary etcd: tests/etcd/delta_replay_test.cpp.)
#include <gtest/gtest.h>

#include "tests/support/etcd_cluster.h"
#include "tests/support/taken_port.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

TEST(PortRetry, AnEtcdClusterWhosePeerPortWasTakenStartsOnNewPorts) {
  TempDir dir("port-retry-cluster");
  TakenPort taken({2});  // member m0's peer port
  auto cluster = EtcdCluster::Create(3, dir.path());
  ASSERT_EQ(taken.handed_out(), 1);
  ASSERT_EQ(cluster->member(0).peer_url, "http://127.0.0.1:" + std::to_string(taken.port()));
  Status started = cluster->StartAll();
  ASSERT_TRUE(started.ok()) << started.error().message;
  EXPECT_TRUE(Contains(Slurp(cluster->member(0).log_path), "address already in use"))
      << "the first start could not bind: " << Slurp(cluster->member(0).log_path);
  for (int i = 0; i < cluster->size(); ++i) {
    EXPECT_FALSE(Contains(cluster->member(i).peer_url + cluster->member(i).client_url,
                          ":" + std::to_string(taken.port())))
        << cluster->member(i).name;
  }
  EtcdClient client = cluster->Client();
  RequestLog log;
  EXPECT_TRUE(client.Put("/port-retry", "started", log).ok());
}

}  // namespace
}  // namespace ruleplane::testing
