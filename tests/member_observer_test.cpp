// How member-init finds the cluster without --endpoints: the client URLs of
// the members its configuration's initial-cluster lists.
#include "adapters/member_observer.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/temp_dir.h"

namespace ruleplane {
namespace {

std::string WriteConfig(const testing::TempDir& dir, const std::string& text) {
  const std::string path = dir.path() + "/etcd.conf.yaml";
  std::ofstream(path) << text;
  return path;
}

TEST(ClientEndpointsOfConfig, EveryPeerHostOnTheClientPortAndScheme) {
  testing::TempDir dir("endpoints");
  auto endpoints = ClientEndpointsOfConfig(WriteConfig(
      dir,
      "initial-cluster: etcd-0=https://etcd-0.etcd-peer.ns.svc:2380,etcd-1=https://127.1.2.11:2380\n"
      "listen-client-urls: https://0.0.0.0:3379\n"));
  ASSERT_TRUE(endpoints.ok()) << endpoints.error().message;
  EXPECT_EQ(*endpoints,
            (std::vector<std::string>{"https://etcd-0.etcd-peer.ns.svc:3379", "https://127.1.2.11:3379"}));
}

TEST(ClientEndpointsOfConfig, HttpAnd2379WithoutListenUrlsAndNothingWithoutInitialCluster) {
  testing::TempDir dir("endpoints-defaults");
  auto endpoints = ClientEndpointsOfConfig(WriteConfig(dir, "initial-cluster: m0=http://127.0.0.1:12380\n"));
  ASSERT_TRUE(endpoints.ok()) << endpoints.error().message;
  EXPECT_EQ(*endpoints, std::vector<std::string>{"http://127.0.0.1:2379"});

  auto none = ClientEndpointsOfConfig(WriteConfig(dir, "name: m0\n"));
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->empty());

  auto missing = ClientEndpointsOfConfig(dir.path() + "/no-such.yaml");
  EXPECT_FALSE(missing.ok());
}

}  // namespace
}  // namespace ruleplane
