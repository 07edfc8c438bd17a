// The test kubelet (tests/support/node_agent.h) against a real kube-apiserver
// and kube-controller-manager 1.20.2: a StatefulSet whose Pods run a real
// 3-member etcd, a Pod deleted and recreated with its data, a container's
// service-account kubeconfig, volumes and the DNS stand-in, a readiness
// probe holding back an OrderedReady StatefulSet; no process outlives the
// agent.
#include "tests/support/node_agent.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "adapters/etcd/etcd_client.h"
#include "adapters/kubernetes/kube_client.h"
#include "engine/common/json_value.h"
#include "platform/base64.h"
#include "tests/support/kube_cluster.h"
#include "tests/support/source_paths.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

EtcdClient MemberClient(const std::string& endpoint) {
  EtcdClientConfig config;
  config.endpoints = {endpoint};
  return EtcdClient(config);
}

bool Alive(int pid) { return pid > 0 && (kill(pid, 0) == 0 || errno != ESRCH); }

bool PodReady(const Value& pod) {
  const Value* conditions = ValueAt(pod, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_list()) return false;
  for (const Value& condition : conditions->list_value())
    if (Text(condition, {"type"}) == "Ready") return Text(condition, {"status"}) == "True";
  return false;
}

KubeResource PodNamed(const std::string& name) { return {"v1", "pods", "default", name, ""}; }

// A real etcd member per Pod, as etcd-druid runs them: Parallel, because a
// member without quorum never serves its client port (so /health cannot
// answer, and OrderedReady would wait for etcd-0 forever).
Value EtcdStatefulSet(const std::string& name, int replicas) {
  std::string initial_cluster;
  for (int i = 0; i < replicas; ++i) {
    initial_cluster += (i == 0 ? "" : ",") + name + "-" + std::to_string(i) + "=http://" + name + "-" +
                       std::to_string(i) + ".etcd-peer.default.svc:2380";
  }
  return Json(
      R"j({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":")j" + name +
      R"j("},"spec":{"serviceName":"etcd-peer","replicas":)j" + std::to_string(replicas) +
      R"j(,"podManagementPolicy":"Parallel","selector":{"matchLabels":{"app":")j" + name +
      R"j("}},"template":{"metadata":{"labels":{"app":")j" + name +
      R"j("}},"spec":{"terminationGracePeriodSeconds":30,"containers":[{"name":"etcd","image":"etcd:3.4.23",)j"
      R"j("command":["etcd"],"args":["--name","$(POD_NAME)","--data-dir","/var/etcd/data/new.etcd",)j"
      R"j("--listen-peer-urls","http://$(POD_IP):2380","--listen-client-urls","http://$(POD_IP):2379",)j"
      R"j("--advertise-client-urls","http://$(POD_IP):2379",)j"
      R"j("--initial-advertise-peer-urls","http://$(POD_NAME).etcd-peer.default.svc:2380",)j"
      R"j("--initial-cluster",")j" +
      initial_cluster +
      R"j(","--initial-cluster-token","node-agent-test"],)j"
      R"j("env":[{"name":"POD_NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},)j"
      R"j({"name":"POD_IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}}],)j"
      R"j("ports":[{"name":"client","containerPort":2379},{"name":"peer","containerPort":2380}],)j"
      R"j("readinessProbe":{"httpGet":{"path":"/health","port":"client"},"periodSeconds":1},)j"
      R"j("volumeMounts":[{"name":"data","mountPath":"/var/etcd/data"}]}]}},)j"
      R"j("volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],)j"
      R"j("resources":{"requests":{"storage":"1Gi"}}}}]}})j");
}

class NodeAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("node-agent");
    auto kube = KubeCluster::Start(dir_->path() + "/kube", KubeClusterOptions{.controller_manager = true});
    ASSERT_TRUE(kube.ok()) << kube.error().message;
    kube_ = std::move(*kube);
    admin_ = std::make_unique<KubeClient>(kube_->AdminConfig());
    prefix_ = RandomLoopbackPrefix();
    auto agent = NodeAgent::Start(kube_->AdminConfig(), {.root = dir_->path() + "/node",
                                                         .binaries = {{"ruleplane", RuleplaneBinary()}},
                                                         .ip_prefix = prefix_});
    ASSERT_TRUE(agent.ok()) << agent.error().message;
    agent_ = std::move(*agent);
  }

  Value Get(const KubeResource& object) {
    RequestLog log;
    auto got = admin_->Get(object, log);
    return got.ok() ? *got : Value::Null();
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<KubeCluster> kube_;
  std::unique_ptr<KubeClient> admin_;
  std::string prefix_;
  std::unique_ptr<NodeAgent> agent_;
  RequestLog log_;
};

TEST_F(NodeAgentTest, RunsAStatefulSetOfEtcdMembersAndRecreatesADeletedPodWithItsData) {
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(
      admin_->Create({"apps/v1", "statefulsets", "default", "", ""}, EtcdStatefulSet("etcd", 3), log_).ok());
  const KubeResource statefulset{"apps/v1", "statefulsets", "default", "etcd", ""};
  ASSERT_TRUE(Eventually(
      [&] {
        return Text(Get(statefulset), {"status", "readyReplicas"}) == "3";
      },
      std::chrono::seconds(120)))
      << FormatJson(Get(statefulset), 2) << "\nsee " << dir_->path() << "/node/pods/*/etcd.log";
  std::cout
      << "[ timing ] 3 etcd Pods Ready after "
      << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started).count()
      << " s\n";

  std::vector<std::string> endpoints;
  std::vector<int> pids;
  for (int i = 0; i < 3; ++i) {
    const std::string name = "etcd-" + std::to_string(i);
    const Value pod = Get(PodNamed(name));
    EXPECT_TRUE(PodReady(pod)) << FormatJson(pod, 2);
    EXPECT_EQ(Text(pod, {"spec", "nodeName"}), "node-1");
    EXPECT_EQ(Text(pod, {"status", "phase"}), "Running");
    EXPECT_EQ(Text(pod, {"status", "podIP"}), prefix_ + std::to_string(10 + i));
    EXPECT_EQ(agent_->PodIP(name), prefix_ + std::to_string(10 + i));
    const int pid = agent_->Pid(name, "etcd");
    EXPECT_TRUE(Alive(pid)) << name;
    EXPECT_NE(Text(pod, {"status", "containerStatuses"}).find("ruleplane://" + std::to_string(pid)),
              std::string::npos);
    EXPECT_EQ(agent_->VolumeDir(name, "data"), dir_->path() + "/node/pvc/data-etcd-" + std::to_string(i));
    EXPECT_TRUE(fs::is_directory(agent_->VolumeDir(name, "data") + "/new.etcd/member")) << name;
    endpoints.push_back("http://" + prefix_ + std::to_string(10 + i) + ":2379");
    pids.push_back(pid);
  }

  // One cluster of three: a key put through etcd-0 is read from etcd-2.
  EtcdClient member0 = MemberClient(endpoints[0]);
  EtcdClient member2 = MemberClient(endpoints[2]);
  auto members = member2.MemberList(log_);
  ASSERT_TRUE(members.ok()) << members.error().message;
  EXPECT_EQ(members->size(), 3u);
  ASSERT_TRUE(member0.Put("/node-agent/key", "kept", log_).ok());
  auto read = member2.Range("/node-agent/key", "", 0, log_);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->second.size(), 1u);
  EXPECT_EQ(read->second[0].value, "kept");

  // A delete with the default grace period: the agent stops etcd-1 and
  // deletes the Pod for good; the StatefulSet controller recreates it.
  const std::string old_uid = Text(Get(PodNamed("etcd-1")), {"metadata", "uid"});
  ASSERT_TRUE(admin_->Delete(PodNamed("etcd-1"), {}, std::nullopt, log_).ok());
  EXPECT_TRUE(Eventually([&] { return !Alive(pids[1]); }, std::chrono::seconds(15)))
      << "the deleted Pod's etcd (pid " << pids[1] << ") is still running";
  ASSERT_TRUE(Eventually(
      [&] {
        const Value pod = Get(PodNamed("etcd-1"));
        return !pod.is_null() && Text(pod, {"metadata", "uid"}) != old_uid && PodReady(pod);
      },
      std::chrono::seconds(90)))
      << FormatJson(Get(PodNamed("etcd-1")), 2);
  const int new_pid = agent_->Pid("etcd-1", "etcd");
  EXPECT_TRUE(Alive(new_pid));
  EXPECT_NE(new_pid, pids[1]);
  pids.push_back(new_pid);
  EXPECT_EQ(agent_->VolumeDir("etcd-1", "data"), dir_->path() + "/node/pvc/data-etcd-1");
  // Its own data: served by the recreated member alone (a serializable read would not need the others, but
  // the member must have rejoined with the same data dir to hold the key at all).
  EtcdClient member1 = MemberClient(endpoints[1]);
  ASSERT_TRUE(Eventually([&] { return member1.Range("/node-agent/key", "", 0, log_).ok(); },
                         std::chrono::seconds(30)));
  auto again = member1.Range("/node-agent/key", "", 0, log_);
  ASSERT_TRUE(again.ok()) << again.error().message;
  ASSERT_EQ(again->second.size(), 1u);
  EXPECT_EQ(again->second[0].value, "kept");
  auto still_three = member1.MemberList(log_);
  ASSERT_TRUE(still_three.ok());
  EXPECT_EQ(still_three->size(), 3u);  // the same member came back, none was added
  EXPECT_NE(Slurp(dir_->path() + "/node/pods/etcd-1/etcd.log").find("restarting"), std::string::npos)
      << "the recreated member logs to the same file, appended";

  agent_.reset();
  for (int pid : pids) EXPECT_FALSE(Alive(pid)) << "pid " << pid << " outlived the agent";
}

TEST_F(NodeAgentTest, GivesContainersVolumesNamesAndAServiceAccountKubeconfig) {
  // The ServiceAccount may read Pods, so a container can read its own.
  for (
      const char* object :
      {R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"pod-reader"},)"
       R"("rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]})",
       R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"pod-reader"},)"
       R"("roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"pod-reader"},)"
       R"("subjects":[{"kind":"ServiceAccount","name":"default","namespace":"default"}]})"}) {
    const Value parsed = Json(object);
    const std::string plural = Text(parsed, {"kind"}) == "Role" ? "roles" : "rolebindings";
    ASSERT_TRUE(
        admin_->Create({"rbac.authorization.k8s.io/v1", plural, "default", "", ""}, parsed, log_).ok());
  }
  ASSERT_TRUE(admin_
                  ->Create({"v1", "configmaps", "default", "", ""},
                           Json(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"files"},"data":)"
                                R"({"peers":"peer: http://member-2.peer.default.svc.cluster.local:2380\n)"
                                R"(data-dir: /scratch/data\n"}})"),
                           log_)
                  .ok());
  ASSERT_TRUE(admin_
                  ->Create({"v1", "secrets", "default", "", ""},
                           Json(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"creds"},)"
                                R"("data":{"password":"czNjcmV0"}})"),  // "s3cret"
                           log_)
                  .ok());
  // An init container writes into the emptyDir, a second one fails once (and
  // is run again); the main container copies the configMap's file there,
  // ready once it has (an exec probe).
  ASSERT_TRUE(
      admin_
          ->Create(
              {"v1", "pods", "default", "", ""},
              Json(
                  R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"worker"},"spec":{)"
                  R"("volumes":[{"name":"config","configMap":{"name":"files"}},{"name":"scratch","emptyDir":{}},)"
                  R"({"name":"picked","configMap":{"name":"files","items":[{"key":"peers","path":"nested/peers.txt"}]}}],)"
                  R"("initContainers":[{"name":"init","image":"busybox","command":["sh","-c",)"
                  R"("echo $(POD_NAME) $$HOME > /scratch/init && echo \"$TARGET $PASSWORD\" > /scratch/env"],)"
                  R"("env":[{"name":"POD_NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},)"
                  R"j({"name":"TARGET","value":"--out=/scratch/$(POD_NAME)"},)j"
                  R"({"name":"PASSWORD","valueFrom":{"secretKeyRef":{"name":"creds","key":"password"}}}],)"
                  R"("volumeMounts":[{"name":"scratch","mountPath":"/scratch"}]},)"
                  R"({"name":"fails-once","image":"busybox","command":["sh","-c",)"
                  R"("test -f /scratch/once || { touch /scratch/once; exit 1; }"],)"
                  R"("volumeMounts":[{"name":"scratch","mountPath":"/scratch"}]}],)"
                  R"("containers":[{"name":"main","image":"busybox","command":["sh","-c","cp /config/peers /scratch/peers && exec sleep 600"],)"
                  R"("readinessProbe":{"exec":{"command":["test","-f","/scratch/peers"]},"periodSeconds":1},)"
                  R"("volumeMounts":[{"name":"config","mountPath":"/config"},{"name":"scratch","mountPath":"/scratch"},)"
                  R"({"name":"picked","mountPath":"/picked"}]}]}})"),
              log_)
          .ok());
  ASSERT_TRUE(Eventually([&] { return PodReady(Get(PodNamed("worker"))); }, std::chrono::seconds(60)))
      << FormatJson(Get(PodNamed("worker")), 2);
  const Value worker = Get(PodNamed("worker"));
  EXPECT_EQ(Text(worker, {"status", "podIP"}), prefix_ + "200");
  const Value* init_statuses = ValueAt(worker, {"status", "initContainerStatuses"});
  ASSERT_TRUE(init_statuses != nullptr && init_statuses->is_list() && init_statuses->list_value().size() == 2)
      << FormatJson(worker, 2);
  for (int i = 0; i < 2; ++i) {
    const Value& init = init_statuses->list_value()[i];
    EXPECT_EQ(Text(init, {"state", "terminated", "reason"}), "Completed") << FormatJson(init, 2);
    EXPECT_EQ(Text(init, {"restartCount"}), i == 0 ? "0" : "1") << FormatJson(init, 2);
  }

  const std::string scratch = agent_->VolumeDir("worker", "scratch");
  ASSERT_FALSE(scratch.empty());
  EXPECT_EQ(Slurp(scratch + "/init").substr(0, 7), "worker ");  // $(POD_NAME) expanded, $$ escaped
  // The DNS stand-in (member-2 is ordinal 2) and the path rewritten to the emptyDir's host directory.
  EXPECT_EQ(Slurp(scratch + "/peers"),
            "peer: http://" + prefix_ + "12:2380\ndata-dir: " + scratch + "/data\n");
  // A --flag=/path env value (expanded from an earlier variable) rewritten; a secretKeyRef decoded.
  EXPECT_EQ(Slurp(scratch + "/env"), "--out=" + scratch + "/worker s3cret\n");
  // configMap items: only the listed key, at its path.
  EXPECT_EQ(Slurp(agent_->VolumeDir("worker", "picked") + "/nested/peers.txt"), Slurp(scratch + "/peers"));
  EXPECT_FALSE(fs::exists(agent_->VolumeDir("worker", "picked") + "/peers"));

  // The container's KUBECONFIG: the API server, the ServiceAccount's token, the Pod's namespace.
  const int pid = agent_->Pid("worker", "main");
  ASSERT_TRUE(Alive(pid));
  std::string kubeconfig_path, home;
  {
    std::string environ_text = Slurp("/proc/" + std::to_string(pid) + "/environ");
    std::stringstream entries(environ_text);
    for (std::string entry; std::getline(entries, entry, '\0');) {
      if (entry.starts_with("KUBECONFIG=")) kubeconfig_path = entry.substr(11);
      if (entry.starts_with("HOME=")) home = entry.substr(5);
    }
  }
  ASSERT_FALSE(kubeconfig_path.empty());
  EXPECT_TRUE(fs::is_directory(home)) << home;
  EXPECT_NE(Slurp(scratch + "/init").find(home), std::string::npos);
  auto config = LoadKubeconfig(kubeconfig_path, "");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->server, kube_->server());
  EXPECT_EQ(config->namespace_name, "default");
  const Value account = Get({"v1", "serviceaccounts", "default", "default", ""});
  const Value* secrets = ValueAt(account, {"secrets"});
  ASSERT_TRUE(secrets != nullptr && secrets->is_list() && !secrets->list_value().empty());
  const Value secret = Get({"v1", "secrets", "default", Text(secrets->list_value()[0], {"name"}), ""});
  EXPECT_EQ(Text(secret, {"type"}), "kubernetes.io/service-account-token");
  EXPECT_EQ(Base64Encode(config->token), Text(secret, {"data", "token"}));
  KubeClient as_pod(*config);
  auto own = as_pod.Get(PodNamed("worker"), log_);
  ASSERT_TRUE(own.ok()) << own.error().message;
  EXPECT_EQ(Text(*own, {"metadata", "uid"}), Text(worker, {"metadata", "uid"}));
  auto listed = as_pod.List({"v1", "pods", "default", "", ""}, "", log_);
  ASSERT_FALSE(listed.ok()) << "the token is the ServiceAccount's, not the admin's";
  EXPECT_EQ(listed.error().code, ErrorCode::kPermissionDenied);

  // A process in a Pod uses it too: kubectl reads $KUBECONFIG; OnFailure until RBAC allows, then Succeeded.
  if (fs::exists("/usr/bin/kubectl")) {
    ASSERT_TRUE(
        admin_
            ->Create(
                {"v1", "pods", "default", "", ""},
                Json(
                    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"reader"},"spec":{)"
                    R"("restartPolicy":"OnFailure","containers":[{"name":"kubectl","image":"bitnami/kubectl","command":)"
                    R"(["kubectl","get","pod","worker","-o","jsonpath={.metadata.uid}"]}]}})"),
                log_)
            .ok());
    EXPECT_TRUE(Eventually(
        [&] {
          return Text(Get(PodNamed("reader")), {"status", "phase"}) == "Succeeded";
        },
        std::chrono::seconds(60)))
        << FormatJson(Get(PodNamed("reader")), 2);
    EXPECT_NE(Slurp(dir_->path() + "/node/pods/reader/kubectl.log").find(Text(worker, {"metadata", "uid"})),
              std::string::npos);
  }

  // restartPolicy Always: a container that exits is restarted with backoff (1 s, 2 s, ...), its log appended.
  ASSERT_TRUE(admin_
                  ->Create({"v1", "pods", "default", "", ""},
                           Json(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"crasher"},"spec":{)"
                                R"("automountServiceAccountToken":false,"containers":[{"name":"exits",)"
                                R"("image":"busybox","command":["sh","-c","echo started; exit 3"]}]}})"),
                           log_)
                  .ok());
  EXPECT_TRUE(Eventually(
      [&] {
        return Text(Get(PodNamed("crasher")), {"status", "containerStatuses"}).find("\"restartCount\":2") !=
               std::string::npos;
      },
      std::chrono::seconds(20)))
      << FormatJson(Get(PodNamed("crasher")), 2);
  const Value crasher = Get(PodNamed("crasher"));
  EXPECT_EQ(Text(crasher, {"status", "phase"}), "Running");
  EXPECT_FALSE(PodReady(crasher));
  EXPECT_TRUE(
      Text(crasher, {"status", "podIP"}).starts_with(prefix_ + "20"));  // the next free one (after reader's)
  EXPECT_NE(Text(crasher, {"status", "podIP"}), Text(worker, {"status", "podIP"}));
  EXPECT_GE(Slurp(dir_->path() + "/node/pods/crasher/exits.log").size(), 3 * std::string("started\n").size());

  // Deleted: stopped, removed from the API, its emptyDir moved aside (not deleted).
  ASSERT_TRUE(admin_->Delete(PodNamed("worker"), {}, std::nullopt, log_).ok());
  EXPECT_TRUE(Eventually([&] { return Get(PodNamed("worker")).is_null(); }, std::chrono::seconds(15)));
  EXPECT_FALSE(Alive(pid));
  EXPECT_FALSE(fs::exists(scratch));
  const std::string moved =
      dir_->path() + "/node/pods/" + Text(worker, {"metadata", "uid"}) + ".gone/scratch/peers";
  EXPECT_TRUE(fs::exists(moved)) << moved;
}

TEST_F(NodeAgentTest, OrderedReadyStatefulSetWaitsForTheReadinessProbe) {
  // Ready once a file exists in the Pod's claim: the StatefulSet controller
  // must not create web-1 until web-0's probe passes.
  ASSERT_TRUE(
      admin_
          ->Create(
              {"apps/v1", "statefulsets", "default", "", ""},
              Json(
                  R"j({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"web"},"spec":{)j"
                  R"j("serviceName":"web","replicas":2,"selector":{"matchLabels":{"app":"web"}},)j"
                  R"j("template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web",)j"
                  R"j("image":"busybox","command":["sleep","600"],"volumeMounts":[{"name":"data",)j"
                  R"j("mountPath":"/data"}],"readinessProbe":{"exec":{"command":["test","-f","/data/ready"]},)j"
                  R"j("periodSeconds":1}}]}},"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{)j"
                  R"j("accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}]}})j"),
              log_)
          .ok());
  ASSERT_TRUE(Eventually([&] { return Alive(agent_->Pid("web-0", "web")); }, std::chrono::seconds(30)));
  std::this_thread::sleep_for(std::chrono::seconds(3));  // several probe periods
  const Value waiting = Get(PodNamed("web-0"));
  EXPECT_EQ(Text(waiting, {"status", "phase"}), "Running");
  EXPECT_FALSE(PodReady(waiting)) << FormatJson(waiting, 2);
  EXPECT_TRUE(Get(PodNamed("web-1")).is_null()) << "created before web-0 was Ready";

  std::ofstream(agent_->VolumeDir("web-0", "data") + "/ready") << "yes\n";
  EXPECT_TRUE(Eventually([&] { return PodReady(Get(PodNamed("web-0"))); }, std::chrono::seconds(15)));
  EXPECT_TRUE(Eventually([&] { return Alive(agent_->Pid("web-1", "web")); }, std::chrono::seconds(30)));
  EXPECT_FALSE(PodReady(Get(PodNamed("web-1"))));
}

}  // namespace
}  // namespace ruleplane::testing
