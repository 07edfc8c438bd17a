// `ruleplane member-agent` beside a real 3-member etcd cluster, against a
// real kube-apiserver: each healthy member's Lease renewed with its member ID
// and role, the leader taking a full snapshot and then a delta into the
// backup store and renewing the snapshot Leases with their revisions, and a
// stopped member's Lease left to expire.
#include <gtest/gtest.h>

#include "adapters/kubernetes/kube_client.h"
#include "engine/common/json_value.h"
#include "tests/run_ruleplane.h"
#include "tests/support/etcd_cluster.h"
#include "tests/support/kube_cluster.h"

namespace ruleplane::testing {
namespace {

std::string Field(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* at = &object;
  for (std::string_view key : keys) {
    if (!at->is_map() || (at = at->Find(key)) == nullptr) return "";
  }
  return at->is_string() ? at->string_value() : "";
}

// The last revision in a snapshot's name: "Full-00000000-00000042-1700000000" -> 42.
int64_t LastRevision(const std::string& name) { return std::stoll(name.substr(14, 8)); }

TEST(MemberAgent, RenewsLeasesAndTheLeaderTakesBackups) {
  TempDir dir("member-agent");
  auto etcd = EtcdCluster::Create(3, dir.path());
  ASSERT_TRUE(etcd->StartAll().ok());
  auto kube = KubeCluster::Start(dir.path() + "/kube");
  ASSERT_TRUE(kube.ok()) << kube.error().message;
  KubeClient admin((*kube)->AdminConfig());
  RequestLog log;
  const KubeResource leases{"coordination.k8s.io/v1", "leases", "default", "", ""};
  for (const std::string name : {"m0", "m1", "m2", "etcd-main-full-snap", "etcd-main-delta-snap"}) {
    auto made = admin.Create(leases,
                             *ParseJson(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
                                        R"("metadata":{"name":")" +
                                        name + R"("}})"),
                             log);
    ASSERT_TRUE(made.ok()) << made.error().message;
  }
  std::string endpoints;
  for (const std::string& url : etcd->ClientUrls()) endpoints += (endpoints.empty() ? "" : ",") + url;
  const std::string store = dir.path() + "/store/etcd-main";
  auto agent = [&](int i, const std::string& extra = "") {
    return testing_support::Ruleplane(
        "member-agent --once --name " + etcd->member(i).name + " --client-url " + etcd->member(i).client_url +
        " --endpoints " + endpoints + " --etcd etcd-main --namespace default --kubeconfig " +
        (*kube)->WriteKubeconfig("admin") + " --backup-store " + store + " " + extra);
  };
  auto lease = [&](const std::string& name) {
    auto read = admin.Get({"coordination.k8s.io/v1", "leases", "default", name, ""}, log);
    EXPECT_TRUE(read.ok()) << name;
    return read.ok() ? *read : Value::Null();
  };

  EtcdClient client = etcd->Client();
  int leader = -1;
  std::string full;
  for (int i = 0; i < 3; ++i) {
    const testing_support::CommandResult run = agent(i);
    ASSERT_EQ(run.exit_code, 0) << run.out;
    auto status = client.MemberStatus(etcd->member(i).client_url, log);
    ASSERT_TRUE(status.ok());
    const bool leads = status->leader == status->member_id;
    const Value renewed = lease(etcd->member(i).name);
    EXPECT_EQ(Field(renewed, {"spec", "holderIdentity"}),
              MemberIdHex(status->member_id) + (leads ? ":Leader" : ":Member"));
    const std::string renew_time = Field(renewed, {"spec", "renewTime"});
    EXPECT_EQ(renew_time.size(), 27u) << "a MicroTime with six digits: " << renew_time;
    auto round = ParseJson(run.out.substr(0, run.out.find('\n')));
    ASSERT_TRUE(round.ok()) << run.out;
    if (leads) {
      leader = i;
      full = Field(*round, {"backup"});
    } else {
      EXPECT_EQ(Field(*round, {"backup"}), "") << "only the leader backs up";
    }
  }
  ASSERT_GE(leader, 0);
  ASSERT_EQ(full.rfind("Full-", 0), 0u) << full;
  EXPECT_EQ(Field(lease("etcd-main-full-snap"), {"spec", "holderIdentity"}),
            std::to_string(LastRevision(full)));

  NumberedWriter writer(etcd->ClientUrls(), "agent/");
  ASSERT_TRUE(writer.WriteSome(25).ok());
  const testing_support::CommandResult delta = agent(leader, "--delta-snapshot-period 0");
  ASSERT_EQ(delta.exit_code, 0) << delta.out;
  auto round = ParseJson(delta.out.substr(0, delta.out.find('\n')));
  ASSERT_TRUE(round.ok()) << delta.out;
  const std::string incr = Field(*round, {"backup"});
  ASSERT_EQ(incr.rfind("Incr-", 0), 0u) << delta.out;
  EXPECT_EQ(LastRevision(incr), writer.acknowledged().back().revision);
  EXPECT_EQ(Field(lease("etcd-main-delta-snap"), {"spec", "holderIdentity"}),
            std::to_string(LastRevision(incr)));

  // A stopped member's lease is not renewed: it expires, and etcd-druid's rules see that.
  const int follower = (leader + 1) % 3;
  const std::string before = Field(lease(etcd->member(follower).name), {"spec", "renewTime"});
  etcd->StopMember(follower);
  const testing_support::CommandResult stopped = agent(follower);
  EXPECT_EQ(stopped.exit_code, 1) << stopped.out;
  EXPECT_NE(stopped.out.find("does not answer"), std::string::npos) << stopped.out;
  EXPECT_EQ(Field(lease(etcd->member(follower).name), {"spec", "renewTime"}), before);
}

}  // namespace
}  // namespace ruleplane::testing
