// How member-init finds the cluster without --endpoints: the client URLs of
// the members its configuration's initial-cluster lists. And an observation
// whose database could not be checked fails rather than saying "corrupt".
#include "observers/member_observer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/common/json_value.h"
#include "engine/common/time_util.h"
#include "tests/support/fake_etcdctl.h"
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

// Issue 41, hazard 1: a template rendered for one member while the Etcd
// says three (a scale-up from one): every ordinal the cluster could have is
// asked, named as the member's own host is. An address that is not named
// after the member (an IP) says nothing of its siblings.
TEST(ClientEndpointsOfConfig, EveryOrdinalTheClusterCouldHaveWhenTheTemplateLagsTheSpec) {
  testing::TempDir dir("endpoints-siblings");
  const std::string config =
      WriteConfig(dir,
                  "initial-cluster: etcd-main-0=http://etcd-main-0.etcd-main-peer.ns.svc:2380\n"
                  "listen-client-urls: http://0.0.0.0:2379\n");
  auto etcd = ParseJson(R"({"spec":{"replicas":3},"status":{"clusterSize":1}})");
  ASSERT_TRUE(etcd.ok());
  auto endpoints = ClientEndpointsOfConfig(config, "etcd-main-0", *etcd);
  ASSERT_TRUE(endpoints.ok()) << endpoints.error().message;
  EXPECT_EQ(*endpoints, (std::vector<std::string>{"http://etcd-main-0.etcd-main-peer.ns.svc:2379",
                                                  "http://etcd-main-1.etcd-main-peer.ns.svc:2379",
                                                  "http://etcd-main-2.etcd-main-peer.ns.svc:2379"}));
  // The status larger than the spec (a scale-down not yet followed): its members too.
  auto shrinking = ParseJson(R"({"spec":{"replicas":1},"status":{"clusterSize":2}})");
  ASSERT_TRUE(shrinking.ok());
  auto two = ClientEndpointsOfConfig(config, "etcd-main-0", *shrinking);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->size(), 2u);

  auto by_address = ClientEndpointsOfConfig(
      WriteConfig(dir, "initial-cluster: etcd-main-0=http://127.0.0.1:12380\n"), "etcd-main-0", *etcd);
  ASSERT_TRUE(by_address.ok());
  EXPECT_EQ(*by_address, std::vector<std::string>{"http://127.0.0.1:2379"});
}

// A member whose database etcdctl cannot check: the observation fails (so
// that member-init exits non-zero and changes nothing); with a verdict from
// etcdctl it succeeds and says corrupt.
TEST(ObserveMember, FailsWhenTheDatabaseCouldNotBeCheckedAndSaysCorruptOnlyOnAVerdict) {
  testing::TempDir dir("observe-unchecked");
  MemberObservationSources sources;
  sources.member.name = "m0";
  sources.member.peer_url = "http://127.0.0.1:12380";
  sources.member.client_url = "http://127.0.0.1:12379";
  sources.member.data_dir = dir.path() + "/data";
  sources.member.config_template = WriteConfig(dir, "name: m0\ninitial-cluster: m0=http://127.0.0.1:12380\n");
  sources.member.config_out = dir.path() + "/etcd.conf.yaml.out";
  auto etcd = ParseJson(R"({"apiVersion":"druid.gardener.cloud/v1alpha1","kind":"Etcd",)"
                        R"("metadata":{"name":"etcd-main","namespace":"default"},"spec":{"replicas":1}})");
  ASSERT_TRUE(etcd.ok());
  sources.etcd = *etcd;
  std::filesystem::create_directories(sources.member.data_dir + "/member/snap");
  std::ofstream(sources.member.data_dir + "/member/snap/db") << std::string(8192, 'x');
  const std::string bin = dir.path() + "/bin";
  std::filesystem::create_directories(bin);
  auto now = TimestampFromUnixSeconds(1700000000);
  ASSERT_TRUE(now.ok());

  {
    testing::ScopedPath path(bin);  // no etcdctl
    auto unchecked = ObserveMember(sources, *now);
    ASSERT_FALSE(unchecked.ok()) << "observed as: " << FormatJson(unchecked->document, 2);
    EXPECT_EQ(unchecked.error().code, ErrorCode::kUnavailable) << unchecked.error().message;
    EXPECT_NE(unchecked.error().message.find("could not check"), std::string::npos)
        << unchecked.error().message;
  }

  ASSERT_TRUE(testing::WriteFakeEtcdctl(bin, "echo 'Error: invalid database' >&2; exit 1"));
  testing::ScopedPath path(bin);
  auto judged = ObserveMember(sources, *now);
  ASSERT_TRUE(judged.ok()) << judged.error().message;
  const Value* data_dir = judged->document.Find("dataDir");
  ASSERT_NE(data_dir, nullptr);
  ASSERT_NE(data_dir->Find("corrupt"), nullptr);
  EXPECT_TRUE(data_dir->Find("corrupt")->bool_value()) << FormatJson(*data_dir, 2);
}

}  // namespace
}  // namespace ruleplane
