// The Kubernetes adapter's client against a real kube-apiserver 1.20.2 under
// RBAC: the Etcd CRD from deploy/, objects written and read back, a stale
// resourceVersion refused as a conflict, server-side dry runs that store
// nothing, deletes with preconditions, pagination, and 403s that name the
// rule that would allow the request.
#include "adapters/kubernetes/kube_client.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fstream>
#include <thread>

#include "adapters/kubernetes/manifests.h"
#include "engine/common/json_value.h"
#include "tests/support/kube_test_bed.h"
#include "tests/support/source_paths.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

const KubeResource kEtcds{"druid.gardener.cloud/v1alpha1", "etcds", "default", "", ""};
KubeResource Etcd(const std::string& name, const std::string& subresource = "") {
  return {kEtcds.api_version, kEtcds.plural, kEtcds.namespace_name, name, subresource};
}

class KubeClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("kube-client");
    auto bed = KubeTestBed::Start(dir_->path(), {.cluster = {.users = {"limited", "operator"}}});
    ASSERT_TRUE(bed.ok()) << bed.error().message;
    bed_ = bed->release();
    kube_ = &bed_->kube();
  }
  static void TearDownTestSuite() {
    delete bed_;
    kube_ = nullptr;
    delete dir_;
  }
  void SetUp() override {
    if (kube_ == nullptr) GTEST_FAIL() << "the API server did not start";
  }

  // A new Etcd object named `name`, created through the client.
  Value CreateEtcd(KubeClient& client, const std::string& name) {
    RequestLog log;
    auto created = client.Create(
        kEtcds,
        Json(R"({"apiVersion":"druid.gardener.cloud/v1alpha1","kind":"Etcd","metadata":{"name":")" + name +
             R"(","labels":{"app":"ruleplane-test"}},"spec":{"replicas":3}})"),
        log);
    EXPECT_TRUE(created.ok()) << created.error().message;
    return created.ok() ? *created : Value::Null();
  }

  static TempDir* dir_;
  static KubeTestBed* bed_;
  static KubeCluster* kube_;
};

TempDir* KubeClientTest::dir_ = nullptr;
KubeTestBed* KubeClientTest::bed_ = nullptr;
KubeCluster* KubeClientTest::kube_ = nullptr;

TEST_F(KubeClientTest, WritesAndReadsAnEtcdWithItsStatusAndScale) {
  KubeClient client(kube_->AdminConfig());
  const Value created = CreateEtcd(client, "etcd-main");
  EXPECT_FALSE(Text(created, {"metadata", "resourceVersion"}).empty());

  RequestLog log;
  auto status = client.MergePatch(
      Etcd("etcd-main", "status"),
      Json(R"({"status":{"clusterSize":3,"replicas":1,"conditions":[{"type":"Ready",)"
           R"("status":"True","reason":"Quorate","lastTransitionTime":"2024-05-01T10:00:00Z"}]}})"),
      log);
  ASSERT_TRUE(status.ok()) << status.error().message;
  auto read = client.Get(Etcd("etcd-main"), log);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(Text(*read, {"status", "clusterSize"}), "3");
  EXPECT_EQ(Text(*read, {"metadata", "generation"}), "1") << "a status patch does not bump the generation";

  auto scale = client.Get(Etcd("etcd-main", "scale"), log);
  ASSERT_TRUE(scale.ok()) << scale.error().message;
  EXPECT_EQ(Text(*scale, {"kind"}), "Scale");
  EXPECT_EQ(Text(*scale, {"spec", "replicas"}), "3");
  auto scaled = client.MergePatch(Etcd("etcd-main", "scale"), Json(R"({"spec":{"replicas":5}})"), log);
  ASSERT_TRUE(scaled.ok()) << scaled.error().message;
  EXPECT_EQ(Text(*client.Get(Etcd("etcd-main"), log), {"spec", "replicas"}), "5");

  // Every request was recorded as it was sent.
  ASSERT_FALSE(log.requests().empty());
  EXPECT_EQ(log.requests()[0].verb, "PATCH");
  EXPECT_EQ(log.requests()[0].target, kube_->server() +
                                          "/apis/druid.gardener.cloud/v1alpha1/namespaces/default/etcds/"
                                          "etcd-main/status");
}

TEST_F(KubeClientTest, AStaleResourceVersionIsAConflictAndNothingChanges) {
  KubeClient client(kube_->AdminConfig());
  const Value created = CreateEtcd(client, "etcd-conflict");
  const std::string observed = Text(created, {"metadata", "resourceVersion"});
  RequestLog log;
  // Someone else writes after we observed.
  ASSERT_TRUE(client.MergePatch(Etcd("etcd-conflict"), Json(R"({"spec":{"replicas":4}})"), log).ok());

  auto fenced = client.MergePatch(
      Etcd("etcd-conflict"),
      Json(R"({"metadata":{"resourceVersion":")" + observed + R"("},"spec":{"replicas":0}})"), log);
  ASSERT_FALSE(fenced.ok());
  EXPECT_EQ(fenced.error().code, ErrorCode::kConflict) << fenced.error().message;
  EXPECT_NE(fenced.error().message.find("Conflict"), std::string::npos) << fenced.error().message;
  EXPECT_EQ(Text(*client.Get(Etcd("etcd-conflict"), log), {"spec", "replicas"}), "4");

  auto stale_delete = client.Delete(Etcd("etcd-conflict"), {observed, ""}, 0, log);
  ASSERT_FALSE(stale_delete.ok());
  EXPECT_EQ(stale_delete.error().code, ErrorCode::kConflict) << stale_delete.error().message;
  const std::string current = Text(*client.Get(Etcd("etcd-conflict"), log), {"metadata", "resourceVersion"});
  EXPECT_TRUE(client.Delete(Etcd("etcd-conflict"), {current, ""}, 0, log).ok());
  auto gone = client.Get(Etcd("etcd-conflict"), log);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(client.Delete(Etcd("etcd-conflict"), {}, 0, log).ok()) << "deleting what is gone is done";
}

TEST_F(KubeClientTest, AServerDryRunValidatesAndStoresNothing) {
  KubeClient client(kube_->AdminConfig());
  const Value created = CreateEtcd(client, "etcd-dry");
  KubeClient dry(kube_->AdminConfig());
  dry.set_server_dry_run(true);
  RequestLog log;
  auto patched = dry.MergePatch(Etcd("etcd-dry"), Json(R"({"spec":{"replicas":1}})"), log);
  ASSERT_TRUE(patched.ok()) << patched.error().message;
  EXPECT_EQ(Text(*patched, {"spec", "replicas"}), "1") << "the would-be object";
  EXPECT_NE(log.requests().back().target.find("dryRun=All"), std::string::npos);
  auto invalid = dry.MergePatch(Etcd("etcd-dry"), Json(R"({"spec":{"replicas":-1}})"), log);
  ASSERT_FALSE(invalid.ok()) << "validated by the server";
  EXPECT_EQ(invalid.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(invalid.error().message.find("spec.replicas"), std::string::npos) << invalid.error().message;
  EXPECT_TRUE(dry.Delete(Etcd("etcd-dry"), {}, 0, log).ok());

  auto stored = client.Get(Etcd("etcd-dry"), log);
  ASSERT_TRUE(stored.ok()) << "a dry-run delete deletes nothing";
  EXPECT_EQ(Text(*stored, {"spec", "replicas"}), "3");
  EXPECT_EQ(Text(*stored, {"metadata", "resourceVersion"}), Text(created, {"metadata", "resourceVersion"}));
}

TEST_F(KubeClientTest, AClientDryRunSendsNoWrite) {
  KubeClient client(kube_->AdminConfig());
  CreateEtcd(client, "etcd-client-dry");
  RequestLog dry(/*dry_run=*/true);
  auto patched = client.MergePatch(Etcd("etcd-client-dry"), Json(R"({"spec":{"replicas":1}})"), dry);
  ASSERT_TRUE(patched.ok());
  EXPECT_TRUE(patched->is_null());
  ASSERT_EQ(dry.requests().size(), 1u);
  EXPECT_EQ(DescribeRequest(dry.requests()[0]), "PATCH " + kube_->server() +
                                                    "/apis/druid.gardener.cloud/v1alpha1/namespaces/default/"
                                                    "etcds/etcd-client-dry {\"spec\":{\"replicas\":1}}");
  RequestLog log;
  EXPECT_EQ(Text(*client.Get(Etcd("etcd-client-dry"), log), {"spec", "replicas"}), "3");
}

// Which API versions the server serves, from discovery, which a user bound
// to no Role may read: Kubernetes 1.20 serves PodDisruptionBudgets as
// policy/v1beta1 only (policy/v1 came in 1.21).
TEST_F(KubeClientTest, DiscoverySaysWhichVersionServesAResourceEvenToAUserWithoutARole) {
  KubeClient limited(kube_->ConfigFor("limited"));
  RequestLog log;
  auto v1 = limited.Serves("policy/v1", "poddisruptionbudgets", log);
  ASSERT_TRUE(v1.ok()) << v1.error().message;
  EXPECT_FALSE(*v1);
  auto v1beta1 = limited.Serves("policy/v1beta1", "poddisruptionbudgets", log);
  ASSERT_TRUE(v1beta1.ok()) << v1beta1.error().message;
  EXPECT_TRUE(*v1beta1);
  auto jobs = limited.Serves("batch/v1", "jobs", log);
  ASSERT_TRUE(jobs.ok() && *jobs);
  auto unknown = limited.Serves("batch/v1", "cronjobs-of-nobody", log);
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(*unknown);
  ASSERT_FALSE(log.requests().empty());
  EXPECT_EQ(DescribeRequest(log.requests()[0]), "GET " + kube_->server() + "/apis/policy/v1");
}

TEST_F(KubeClientTest, ListsByLabelAcrossPages) {
  KubeClient client(kube_->AdminConfig());
  RequestLog log;
  for (int i = 0; i < 7; ++i) {
    const std::string labels = i % 2 == 0 ? R"({"app":"etcd","instance":"etcd-main"})" : R"({"app":"other"})";
    auto made =
        client.Create({"coordination.k8s.io/v1", "leases", "default", "", ""},
                      Json(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"l)" +
                           std::to_string(i) + R"(","labels":)" + labels + "}}"),
                      log);
    ASSERT_TRUE(made.ok()) << made.error().message;
  }
  client.set_page_size(2);
  RequestLog reads;
  auto leases = client.List({"coordination.k8s.io/v1", "leases", "default", "", ""},
                            "app=etcd,instance=etcd-main", reads);
  ASSERT_TRUE(leases.ok()) << leases.error().message;
  const Value* items = leases->Find("items");
  ASSERT_NE(items, nullptr);
  std::vector<std::string> names;
  for (const Value& item : items->list_value()) names.push_back(Text(item, {"metadata", "name"}));
  EXPECT_EQ(names, (std::vector<std::string>{"l0", "l2", "l4", "l6"}));
  EXPECT_EQ(reads.requests().size(), 2u) << "two pages of two";
}

TEST_F(KubeClientTest, AForbiddenRequestNamesTheRuleThatWouldAllowIt) {
  KubeClient limited(kube_->ConfigFor("limited"));
  RequestLog log;
  auto denied = limited.MergePatch({"apps/v1", "statefulsets", "default", "etcd-main", "scale"},
                                   Json(R"({"spec":{"replicas":0}})"), log);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(denied.error().message.find("patch statefulsets/scale etcd-main in namespace default"),
            std::string::npos)
      << denied.error().message;
  EXPECT_NE(denied.error().message.find(
                R"({apiGroups: ["apps"], resources: ["statefulsets/scale"], verbs: ["patch"]})"),
            std::string::npos)
      << denied.error().message;

  KubeClient stranger(kube_->ConfigFor("nobody"));
  auto unauthenticated = stranger.Get(Etcd("etcd-main"), log);
  ASSERT_FALSE(unauthenticated.ok());
  EXPECT_EQ(unauthenticated.error().code, ErrorCode::kPermissionDenied) << unauthenticated.error().message;
}

TEST_F(KubeClientTest, TheShippedRoleAllowsWhatRuleplaneDoesAndNothingElse) {
  KubeClient admin(kube_->AdminConfig());
  RequestLog log;
  auto rbac = LoadManifests(std::string(SourceDir()) + "/deploy/rbac.yaml");
  ASSERT_TRUE(rbac.ok()) << rbac.error().message;
  // The Role, bound (besides its ServiceAccount) to the token user "operator".
  rbac->push_back(RoleBinding("operator", "ruleplane"));
  Status applied = ApplyManifests(admin, *rbac, "default", log);
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  ASSERT_TRUE(ApplyManifests(admin, *rbac, "default", log).ok()) << "applying again updates in place";
  // The NetworkPolicy shipped beside it is one the API server takes.
  auto policy = LoadManifests(std::string(SourceDir()) + "/deploy/network-policy.yaml");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  Status policy_applied = ApplyManifests(admin, *policy, "default", log);
  ASSERT_TRUE(policy_applied.ok()) << policy_applied.error().message;
  EXPECT_TRUE(
      admin.Get({"networking.k8s.io/v1", "networkpolicies", "default", "ruleplane-etcd-members", ""}, log)
          .ok());
  CreateEtcd(admin, "etcd-rbac");
  auto secret =
      admin.Create({"v1", "secrets", "default", "", ""},
                   Json(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"keep-me"}})"), log);
  ASSERT_TRUE(secret.ok()) << secret.error().message;

  KubeClient operator_client(kube_->ConfigFor("operator"));
  // RBAC changes reach the authorizer through its informer: wait for the binding.
  Result<Value> status = Error{ErrorCode::kPermissionDenied, "not asked", {}};
  for (int attempt = 0; attempt < 50 && !status.ok(); ++attempt) {
    status =
        operator_client.MergePatch(Etcd("etcd-rbac", "status"), Json(R"({"status":{"clusterSize":3}})"), log);
    if (!status.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_TRUE(operator_client.Get(Etcd("etcd-rbac"), log).ok());
  EXPECT_TRUE(operator_client.List({"coordination.k8s.io/v1", "leases", "default", "", ""}, "", log).ok());
  auto lease = operator_client.Create({"coordination.k8s.io/v1", "leases", "default", "", ""},
                                      Json(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
                                           R"("metadata":{"name":"etcd-rbac-0"}})"),
                                      log);
  EXPECT_TRUE(lease.ok()) << lease.error().message;

  Status deleted = operator_client.Delete({"v1", "secrets", "default", "keep-me", ""}, {}, std::nullopt, log);
  ASSERT_FALSE(deleted.ok()) << "deleting a Secret is outside the Role";
  EXPECT_EQ(deleted.error().code, ErrorCode::kPermissionDenied);
  // ruleplane deletes what it created for an Etcd being deleted, never an Etcd.
  Status other = operator_client.Delete(Etcd("etcd-rbac"), {}, std::nullopt, log);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::kPermissionDenied) << other.error().message;
  auto etcd_in_other_namespace =
      operator_client.Get({kEtcds.api_version, "etcds", "kube-system", "x", ""}, log);
  ASSERT_FALSE(etcd_in_other_namespace.ok());
  EXPECT_EQ(etcd_in_other_namespace.error().code, ErrorCode::kPermissionDenied)
      << "a Role, not a ClusterRole";
  EXPECT_TRUE(admin.Get({"v1", "secrets", "default", "keep-me", ""}, log).ok());
}

TEST_F(KubeClientTest, AKubeconfigFileIsEnoughToConnect) {
  auto config = LoadKubeconfig(kube_->WriteKubeconfig("admin"), "");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->namespace_name, "default");
  KubeClient client(*config);
  RequestLog log;
  EXPECT_TRUE(client.Get({"v1", "namespaces", "", "default", ""}, log).ok());
}

// In a Pod: the service-account token, the CA and the namespace from the
// projected volume, laid out as the kubelet lays it out (token -> ..data/token,
// ..data -> a timestamped directory), and the token rotated by swapping the
// ..data link while one client keeps running.
TEST_F(KubeClientTest, InClusterTheRotatedServiceAccountTokenIsReadAgain) {
  namespace fs = std::filesystem;
  const std::string secrets = dir_->path() + "/serviceaccount";
  auto project = [&](const std::string& version, const std::string& token) {
    const std::string data = secrets + "/..2026_11_24_" + version;
    fs::create_directories(data);
    std::ofstream(data + "/token") << token;
    fs::copy_file(kube_->AdminConfig().tls.ca_file, data + "/ca.crt", fs::copy_options::overwrite_existing);
    std::ofstream(data + "/namespace") << "default";
    fs::create_symlink(fs::path(data).filename(), secrets + "/..data_tmp");
    fs::rename(secrets + "/..data_tmp", secrets + "/..data");  // atomic, as the kubelet swaps it
  };
  fs::create_directories(secrets);
  project("1", "expired-token");
  for (const char* file : {"token", "ca.crt", "namespace"}) {
    fs::create_symlink(std::string("..data/") + file, secrets + "/" + file);
  }
  const std::string server = kube_->server();
  const std::string port = server.substr(server.rfind(':') + 1);
  ASSERT_EQ(setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1), 0);
  ASSERT_EQ(setenv("KUBERNETES_SERVICE_PORT", port.c_str(), 1), 0);

  auto config = InClusterConfig(secrets);
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->namespace_name, "default");
  KubeClient client(*config);
  RequestLog log;
  const KubeResource namespace_default{"v1", "namespaces", "", "default", ""};
  auto refused = client.Get(namespace_default, log);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("HTTP 401"), std::string::npos) << refused.error().message;

  project("2", "admin-token");
  auto read = client.Get(namespace_default, log);
  EXPECT_TRUE(read.ok()) << "the same client, the new token: " << read.error().message;

  project("3", "expired-token");
  EXPECT_FALSE(client.Get(namespace_default, log).ok()) << "and the next rotation is seen too";
}

}  // namespace
}  // namespace ruleplane::testing
