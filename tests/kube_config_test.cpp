// Kubeconfig and in-cluster configuration: what is read from where, and a
// clear refusal of what ruleplane does not do (exec plugins).
#include "adapters/kubernetes/kube_config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "adapters/kubernetes/kube_client.h"
#include "platform/base64.h"
#include "tests/support/temp_dir.h"

namespace ruleplane {
namespace {

using testing::TempDir;

std::string Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

constexpr const char* kTwoContexts = R"(apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod-cluster
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority: certs/ca.crt
- name: lab-cluster
  cluster:
    server: https://lab:6443
    insecure-skip-tls-verify: true
users:
- name: prod-user
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
- name: lab-user
  user:
    tokenFile: token
- name: cloud-user
  user:
    exec: {command: gke-gcloud-auth-plugin, apiVersion: client.authentication.k8s.io/v1beta1}
contexts:
- name: prod
  context: {cluster: prod-cluster, user: prod-user, namespace: shoot--a}
- name: lab
  context: {cluster: lab-cluster, user: lab-user}
- name: cloud
  context: {cluster: lab-cluster, user: cloud-user}
)";

TEST(Kubeconfig, ReadsTheCurrentContextWithRelativePathsAndData) {
  TempDir dir("kubeconfig");
  const std::string path = Write(dir.path() + "/config", kTwoContexts);
  auto config = LoadKubeconfig(path, "");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->server, "https://10.0.0.1:6443");
  EXPECT_EQ(config->namespace_name, "shoot--a");
  EXPECT_EQ(config->tls.ca_file, dir.path() + "/certs/ca.crt");
  EXPECT_EQ(config->tls.cert_pem, "CERT");
  EXPECT_EQ(config->tls.key_pem, "KEY");
  EXPECT_FALSE(config->tls.insecure_skip_verify);

  auto lab = LoadKubeconfig(path, "lab");
  ASSERT_TRUE(lab.ok()) << lab.error().message;
  EXPECT_EQ(lab->namespace_name, "default");
  EXPECT_EQ(lab->token_file, dir.path() + "/token");
  EXPECT_TRUE(lab->tls.insecure_skip_verify);
}

TEST(Kubeconfig, SaysWhatItCannotDo) {
  TempDir dir("kubeconfig-bad");
  const std::string path = Write(dir.path() + "/config", kTwoContexts);
  auto exec = LoadKubeconfig(path, "cloud");
  ASSERT_FALSE(exec.ok());
  EXPECT_NE(exec.error().message.find("exec plugin"), std::string::npos) << exec.error().message;
  auto missing = LoadKubeconfig(path, "nowhere");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no context named 'nowhere'"), std::string::npos);
  EXPECT_EQ(LoadKubeconfig(dir.path() + "/absent", "").error().code, ErrorCode::kNotFound);
  auto broken = LoadKubeconfig(Write(dir.path() + "/broken", "clusters: [\n"), "");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code, ErrorCode::kParse);
}

// Issue 24, classes 3 and 8: a server of any scheme was accepted (file://
// printed a local file in the error, gopher:// sent bytes of the file's
// choosing), and insecure-skip-tls-verify beside a CA silently sent the token
// to a server the CA does not vouch for. kubectl refuses both; so does this.
TEST(Kubeconfig, RefusesAServerThatIsNotHttpAndACaThatWouldNotBeChecked) {
  TempDir dir("kubeconfig-hostile");
  auto with_cluster = [&](const std::string& name, const std::string& cluster) {
    return Write(dir.path() + "/" + name, "current-context: c\nclusters:\n- name: k\n  cluster:\n" + cluster +
                                              "contexts:\n- name: c\n  context: {cluster: k, user: "
                                              "u}\nusers:\n- name: u\n  user: {token: t}\n");
  };
  for (const char* server : {"file:///etc/passwd", "gopher://127.0.0.1:6379/_SET", "dict://127.0.0.1:11211/x",
                             "ftp://example.org/", "10.0.0.1:6443"}) {
    auto config = LoadKubeconfig(with_cluster("scheme", std::string("    server: ") + server + "\n"), "");
    ASSERT_FALSE(config.ok()) << server;
    EXPECT_NE(config.error().message.find("only http:// and https://"), std::string::npos)
        << config.error().message;
  }
  auto insecure =
      LoadKubeconfig(with_cluster("insecure",
                                  "    server: https://10.0.0.1:6443\n    certificate-authority-data: Q0E=\n"
                                  "    insecure-skip-tls-verify: true\n"),
                     "");
  ASSERT_FALSE(insecure.ok());
  EXPECT_NE(insecure.error().message.find("insecure-skip-tls-verify with a certificate-authority"),
            std::string::npos)
      << insecure.error().message;
}

TEST(InCluster, ReadsTheServiceAccountFiles) {
  TempDir dir("in-cluster");
  Write(dir.path() + "/token", "t0ken\n");
  Write(dir.path() + "/ca.crt", "CA");
  Write(dir.path() + "/namespace", "garden");
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto config = InClusterConfig(dir.path());
  unsetenv("KUBERNETES_SERVICE_HOST");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->namespace_name, "garden");
  EXPECT_EQ(config->token_file, dir.path() + "/token");
  EXPECT_EQ(config->tls.ca_file, dir.path() + "/ca.crt");
  EXPECT_FALSE(InClusterConfig(dir.path()).ok()) << "not in a Pod without KUBERNETES_SERVICE_HOST";
}

TEST(KubeResource, BuildsThePathsOfCoreGroupedAndSubresources) {
  EXPECT_EQ((KubeResource{"v1", "pods", "ns", "p-0", ""}).Path(), "/api/v1/namespaces/ns/pods/p-0");
  EXPECT_EQ((KubeResource{"apps/v1", "statefulsets", "ns", "etcd", "scale"}).Path(),
            "/apis/apps/v1/namespaces/ns/statefulsets/etcd/scale");
  EXPECT_EQ((KubeResource{"apiextensions.k8s.io/v1", "customresourcedefinitions", "", "", ""}).Path(),
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
}

TEST(KubeStatusError, DecodesTheStatusAndAdvises) {
  const KubeResource etcd{"druid.gardener.cloud/v1alpha1", "etcds", "ns", "etcd-main", "status"};
  Error invalid = KubeStatusError(
      422, "patch", etcd,
      R"({"kind":"Status","reason":"Invalid","message":"bad","details":{"causes":[{"field":"status.members[0].status","message":"Required value"}]}})");
  EXPECT_EQ(invalid.code, ErrorCode::kInvalidArgument);
  EXPECT_NE(invalid.message.find("status.members[0].status: Required value"), std::string::npos)
      << invalid.message;
  EXPECT_EQ(KubeStatusError(409, "patch", etcd, R"({"reason":"Conflict"})").code, ErrorCode::kConflict);
  EXPECT_EQ(KubeStatusError(429, "patch", etcd, "").code, ErrorCode::kUnavailable);
  EXPECT_EQ(KubeStatusError(503, "patch", etcd, "").code, ErrorCode::kUnavailable);
  Error forbidden = KubeStatusError(403, "patch", etcd, R"({"reason":"Forbidden"})");
  EXPECT_EQ(forbidden.code, ErrorCode::kPermissionDenied);
  EXPECT_NE(forbidden.message.find(R"(resources: ["etcds/status"], verbs: ["patch"])"), std::string::npos);
}

// Issue 23, hazard 4: a patch fenced with an empty resourceVersion used to be
// sent, and the API server applies it unconditionally.
TEST(KubeClient, AFencedPatchWithoutAResourceVersionIsRefusedBeforeItIsSent) {
  KubeConfig config;
  config.server = "https://127.0.0.1:9";
  KubeClient client(config);
  RequestLog log;
  auto patched =
      client.MergePatch({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", "status"},
                        FencedMergePatch("", "status", Value::MakeMap({})), log);
  ASSERT_FALSE(patched.ok());
  EXPECT_EQ(patched.error().code, ErrorCode::kFailedPrecondition) << patched.error().message;
  EXPECT_TRUE(log.requests().empty()) << "nothing is sent";
}

}  // namespace
}  // namespace ruleplane
