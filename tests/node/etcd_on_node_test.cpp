// The end-to-end scenarios on a real node (label `node`): scripts/node.sh's
// kubelet, containerd and runc run the ruleplane image; deploy/ is applied as
// README tells a user (`kubectl apply -f deploy/`: the CRD, the RBAC and the
// controller Deployment), and every other action is a user's kubectl command.
// Each member Pod has its own volume (a PersistentVolumeClaim of the
// StatefulSet), its probes are kubelet's, names resolve through the cluster
// DNS once the Pods exist. The writer puts numbered keys through the client
// Service's cluster IP, as a client in the cluster does, and the checks ask
// each member at its Pod IP: the test's threads run inside the node's network
// namespace. Each scenario ends with every acknowledged key present, every
// member in one cluster, and HashKV equal.
//
// Each test prints "[node] <what>: <seconds>" lines: node up, the scenario
// itself, node down, and the memory of the node (its components and Pods).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "adapters/etcd/etcd_client.h"
#include "adapters/kubernetes/kube_client.h"
#include "engine/common/json_value.h"
#include "tests/support/e2e_world.h"
#include "tests/support/etcd_cluster.h"
#include "tests/support/real_node.h"
#include "tests/support/source_paths.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kEtcd = "etcd-main";
const KubeResource kEtcdResource{"druid.gardener.cloud/v1alpha1", "etcds", "default", kEtcd, ""};
const std::string kSource = SourceDir();

void Report(const std::string& what, Clock::time_point since) {
  std::cout << "[node] " << what << ": "
            << std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count() / 1000.0
            << " s" << std::endl;
}

class EtcdOnNode : public ::testing::Test {
 protected:
  // `node_name`: the node's (and its cgroup's) name, one per test so that two may run at once.
  void Up(const std::string& node_name) {
    dir_ = std::make_unique<TempDir>("etcd-on-node");
    const auto up_started = Clock::now();
    auto node = RealNode::Up(dir_->path() + "/node", node_name);
    ASSERT_TRUE(node.ok()) << node.error().message;
    node_ = std::move(*node);
    Report("node up", up_started);
    const ShellRun deployed = node_->Kubectl("apply -f " + kSource + "/deploy/");
    ASSERT_EQ(deployed.exit_code, 0) << deployed.output;
    ASSERT_TRUE(node_->EnterNetwork().ok());
    auto config = node_->AdminConfig();
    ASSERT_TRUE(config.ok()) << config.error().message;
    admin_ = std::make_unique<KubeClient>(*config);
    scenario_started_ = Clock::now();
  }

  void TearDown() override {
    if (node_ == nullptr) return;
    Report("scenario", scenario_started_);
    std::cout << "[node] memory of the node: " << node_->MemoryKiB() / 1024 << " MiB RSS (peak seen "
              << peak_memory_kib_ / 1024 << " MiB)" << std::endl;
    const auto down_started = Clock::now();
    const ShellRun down = node_->Down();
    EXPECT_EQ(down.exit_code, 0) << down.output;
    Report("node down", down_started);
    node_.reset();
  }

  ShellRun Kubectl(const std::string& arguments) { return node_->Kubectl(arguments); }

  // The controller Deployment's arguments with `more` after deploy/'s, rolled out.
  void AddControllerArguments(const std::vector<std::string>& more) {
    const auto started = Clock::now();
    std::string patch = "[";
    for (const std::string& argument : more)
      patch += std::string(patch.size() > 1 ? "," : "") +
               R"({"op":"add","path":"/spec/template/spec/containers/0/args/-","value":")" + argument + "\"}";
    const ShellRun patched = Kubectl("patch deployment ruleplane-controller --type=json -p '" + patch +
                                     "]' && "
                                     "kubectl rollout status deployment ruleplane-controller --timeout=120s");
    ASSERT_EQ(patched.exit_code, 0) << patched.output;
    Report("the controller's new arguments rolled out", started);
  }

  // The controller replica that holds the Lease now (its identity is <pod>_<pid>); "" when none does.
  std::string ControllerLeader() {
    const std::string holder =
        TextAt(Get({"coordination.k8s.io/v1", "leases", "default", "ruleplane-controller", ""}),
               {"spec", "holderIdentity"});
    return holder.substr(0, holder.find('_'));
  }
  // The steps both controller replicas logged, as "<action> <target> <state>".
  std::vector<std::string> ControllerSteps() {
    return StepLines(
        Kubectl("logs -l app.kubernetes.io/name=ruleplane-controller --tail=-1 --max-log-requests=4").output);
  }

  // README's Etcd, as a user applies it.
  void CreateExampleEtcd() {
    const ShellRun applied = Kubectl("apply -f " + kSource + "/examples/etcd.yaml");
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
  }

  // An Etcd as a user writes it: `replicas` members from the ruleplane
  // image, Local backups (the node's /etc/gardener/local-backupbuckets) with
  // a delta snapshot every 5 s.
  void CreateEtcd(int replicas) {
    const std::string manifest = dir_->path() + "/etcd.yaml";
    Put(manifest,
        "apiVersion: druid.gardener.cloud/v1alpha1\nkind: Etcd\nmetadata: {name: etcd-main}\nspec:\n"
        "  replicas: " +
            std::to_string(replicas) +
            "\n  labels: {app.kubernetes.io/part-of: etcd-main}\n"
            "  etcd: {clientPort: 2379, serverPort: 2380, quota: 1Gi}\n"
            "  backup:\n    deltaSnapshotPeriod: 5s\n"
            "    store: {provider: Local, container: node-backups, prefix: etcd-main}\n"
            "  storageCapacity: 1Gi\n");
    const ShellRun applied = Kubectl("apply -f " + manifest);
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
  }

  Value Get(const KubeResource& resource) {
    RequestLog log;
    auto object = admin_->Get(resource, log);
    return object.ok() ? *object : Value::Null();
  }
  Value Etcd() { return Get(kEtcdResource); }
  Value Pod(const std::string& name) { return Get({"v1", "pods", "default", name, ""}); }

  bool HealthyWith(int replicas) {
    if (!EtcdHealthyWith(Etcd(), replicas)) return false;
    peak_memory_kib_ = std::max(peak_memory_kib_, node_->MemoryKiB());
    return true;
  }
  // Until the status is healthy with `replicas` members and, when named, the
  // Pod made again after a fault is Ready (until then the status may still be
  // the one written before the fault).
  void AwaitHealthyWith(int replicas, std::chrono::seconds timeout, const std::string& what,
                        const std::string& pod_back = "") {
    const auto started = Clock::now();
    ASSERT_TRUE(Eventually([&] { return (pod_back.empty() || PodReady(pod_back)) && HealthyWith(replicas); },
                           timeout, std::chrono::seconds(1)))
        << what << "\n"
        << Describe();
    Report(what, started);
  }
  bool PodReady(const std::string& name) {
    const Value pod = Pod(name);
    const Value* conditions = ValueAt(pod, {"status", "conditions"});
    if (conditions == nullptr || !conditions->is_list()) return false;
    return std::any_of(conditions->list_value().begin(), conditions->list_value().end(), [](const Value& c) {
      return TextAt(c, {"type"}) == "Ready" && TextAt(c, {"status"}) == "True";
    });
  }

  // Each member at its Pod's IP, as the API server has it now.
  std::vector<std::string> MemberUrls(int replicas) {
    std::vector<std::string> urls;
    for (int i = 0; i < replicas; ++i)
      urls.push_back("http://" +
                     TextAt(Pod(std::string(kEtcd) + "-" + std::to_string(i)), {"status", "podIP"}) +
                     ":2379");
    return urls;
  }
  // The client Service, through kube-proxy's rules.
  std::string ServiceUrl() {
    return "http://" +
           TextAt(Get({"v1", "services", "default", "etcd-main-client", ""}), {"spec", "clusterIP"}) +
           ":2379";
  }

  // A member's Pod away, its etcd stopped for good: the node cordoned (the
  // StatefulSet's new Pod stays Pending), the Pod deleted as a user deletes
  // one (kubectl waits until it is gone). Back() lets it come back.
  void TakeAway(const std::string& pod) {
    const ShellRun away =
        Kubectl("cordon " + node_->name() + " && kubectl delete pod " + pod + " --wait=true");
    ASSERT_EQ(away.exit_code, 0) << away.output;
    ASSERT_TRUE(Eventually(
        [&] {
          return TextAt(Pod(pod), {"status", "phase"}) == "Pending";
        },
        std::chrono::seconds(30)));
  }
  void Back() { ASSERT_EQ(Kubectl("uncordon " + node_->name()).exit_code, 0); }

  std::string MemberVolume(const std::string& pod) {
    return node_->VolumeDir(std::string(kEtcd) + "-" + pod);
  }

  void ExpectNoKeyLostAndOneClusterThatAgrees(const NumberedWriter& writer, int replicas,
                                              int64_t up_to_revision = INT64_MAX) {
    EtcdClient client(EtcdClientConfig{MemberUrls(replicas), {}, std::chrono::seconds(5)});
    EXPECT_EQ(MissingKeys(client, writer, up_to_revision), std::vector<std::string>{});
    Status agree = MembersAgree(MemberUrls(replicas));
    EXPECT_TRUE(agree.ok()) << agree.error().message << "\n" << Describe();
  }

  // For a failure message: the Etcd's status, the Pods, and the tails of the
  // member and controller containers' logs.
  std::string Describe() {
    return node_
        ->Exec(
            "kubectl get etcd etcd-main -o jsonpath='{.status}'; echo; kubectl get pods -o wide; "
            "for pod in $(kubectl get pods -o name); do echo \"== $pod\"; "
            "kubectl logs $pod --all-containers --tail=15 2>&1; done")
        .output;
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<RealNode> node_;
  std::unique_ptr<KubeClient> admin_;
  Clock::time_point scenario_started_;
  int64_t peak_memory_kib_ = 0;
};

// examples/etcd.yaml created from nothing becomes three Ready members, each
// with its own volume and Lease. Then, while a client writes through the Service: a
// Pod deleted (the StatefulSet makes it again, its member rejoins with its
// data); a data directory wiped while its Pod is away (member-init removes
// the member and adds it again, empty); a database corrupted while its Pod
// is away (member-init moves it aside and the member rejoins).
TEST_F(EtcdOnNode, CreatedFromNothingThenAPodDeletedADataDirectoryWipedAndADatabaseCorrupted) {
  Up("etcd-lifecycle");
  CreateExampleEtcd();
  AwaitHealthyWith(3, std::chrono::seconds(240), "created from nothing");
  for (int i = 0; i < 3; ++i) {
    const std::string member = std::string(kEtcd) + "-" + std::to_string(i);
    EXPECT_NE(
        TextAt(Get({"coordination.k8s.io/v1", "leases", "default", member, ""}), {"spec", "holderIdentity"}),
        "");
    EXPECT_TRUE(fs::exists(MemberVolume(member) + "/new.etcd/member/snap/db"))
        << member << ": its own volume";
  }
  for (const char* service : {"etcd-main-client", "etcd-main-peer"})
    EXPECT_TRUE(Get({"v1", "services", "default", service, ""}).is_map()) << service;
  // 2 once BackupReady is True (until then 3, DEP-01 "Backup Failure"): after
  // the leader's first full snapshot, which a busy node can delay.
  EXPECT_TRUE(Eventually(
      [&] {
        const Value budget = Get({"policy/v1beta1", "poddisruptionbudgets", "default", kEtcd, ""});
        const Value* min_available = ValueAt(budget, {"spec", "minAvailable"});
        return min_available != nullptr && min_available->int_value() == 2;
      },
      std::chrono::seconds(120)))
      << Describe();
  // Of deploy/'s two controller replicas only the Lease holder wrote: the other's log has no step.
  const std::string leader = ControllerLeader();
  std::istringstream controllers(
      Kubectl(
          "get pods -l app.kubernetes.io/name=ruleplane-controller -o jsonpath='{.items[*].metadata.name}'")
          .output);
  int standbys = 0;
  for (std::string pod; controllers >> pod;) {
    if (pod == leader) continue;
    ++standbys;
    EXPECT_EQ(StepLines(Kubectl("logs " + pod).output), std::vector<std::string>{})
        << pod << ", leader " << leader;
  }
  EXPECT_EQ(standbys, 1) << "leader " << leader;

  NumberedWriter writer({ServiceUrl()}, "/node/");
  writer.Start(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::seconds(3));

  const std::string first_uid = TextAt(Pod("etcd-main-1"), {"metadata", "uid"});
  ShellRun deleted = Kubectl("delete pod etcd-main-1");
  ASSERT_EQ(deleted.exit_code, 0) << deleted.output;
  ASSERT_NE(TextAt(Pod("etcd-main-1"), {"metadata", "uid"}), first_uid);
  AwaitHealthyWith(3, std::chrono::seconds(180), "a Pod deleted", "etcd-main-1");

  TakeAway("etcd-main-2");
  std::error_code moved;
  fs::rename(MemberVolume("etcd-main-2") + "/new.etcd", dir_->path() + "/wiped.etcd", moved);
  ASSERT_FALSE(moved) << moved.message();
  Back();
  AwaitHealthyWith(3, std::chrono::seconds(180), "a data directory wiped", "etcd-main-2");
  const std::string init_log = Kubectl("logs etcd-main-2 -c member-init").output;
  EXPECT_TRUE(Contains(init_log, "RemoveMember etcd-main-2  done")) << init_log;
  EXPECT_TRUE(Contains(init_log, "AddMember etcd-main-2  done")) << init_log;

  const std::string db = MemberVolume("etcd-main-0") + "/new.etcd/member/snap/db";
  TakeAway("etcd-main-0");
  CorruptDatabaseHead(db);
  Back();
  AwaitHealthyWith(3, std::chrono::seconds(180), "a database corrupted", "etcd-main-0");
  EXPECT_TRUE(CorruptedDatabaseKeptAside(MemberVolume("etcd-main-0")))
      << "the corrupted database is not kept beside the data directory";

  std::this_thread::sleep_for(std::chrono::seconds(2));
  writer.Stop();
  EXPECT_GT(writer.acknowledged().size(), 100u);
  std::cout << "[node] writes: " << writer.acknowledged().size() << " acknowledged, " << writer.failures()
            << " failed, longest outage " << writer.longest_outage().count() << " ms" << std::endl;
  // One member of three away: the Service's other endpoints take the writes
  // within an election timeout and kube-proxy's next sync (135 ms measured).
  EXPECT_LE(writer.longest_outage().count(), 5000) << writer.failures() << " failed puts";
  ExpectNoKeyLostAndOneClusterThatAgrees(writer, 3);
}

// Scaled from 3 to 5 and back to 3 while a client writes: the new members
// join with volumes of their own, the status follows; on the way down the
// StatefulSet shrinks and the removed members leave the etcd cluster.
TEST_F(EtcdOnNode, ScaledFromThreeToFiveAndBackToThree) {
  Up("etcd-scale");
  // As the e2e world runs it: the scale-down's spec rollout waits 5 s after the scale-up's, not 60.
  AddControllerArguments({"--min-disruptive-interval", "5"});
  CreateEtcd(3);
  AwaitHealthyWith(3, std::chrono::seconds(240), "created from nothing");
  NumberedWriter writer({ServiceUrl()}, "/scale/");
  writer.Start(std::chrono::milliseconds(20));
  auto voting_members = [&] {
    EtcdClient cluster(EtcdClientConfig{MemberUrls(3), {}, std::chrono::seconds(5)});
    RequestLog log;
    auto members = cluster.MemberList(log);
    if (!members.ok()) return -1;
    return static_cast<int>(std::count_if(members->begin(), members->end(), [](const EtcdMember& member) {
      return !member.is_learner && !member.name.empty();
    }));
  };

  // `kubectl patch` to `replicas`, then until as many Ready members vote.
  auto scale_to = [&](int replicas, const std::string& what) {
    ASSERT_EQ(Kubectl("patch etcd etcd-main --type=merge -p '{\"spec\":{\"replicas\":" +
                      std::to_string(replicas) + "}}'")
                  .exit_code,
              0);
    const auto started = Clock::now();
    ASSERT_TRUE(Eventually([&] { return HealthyWith(replicas) && voting_members() == replicas; },
                           std::chrono::seconds(300), std::chrono::seconds(1)))
        << Describe();
    Report(what, started);
  };

  auto cluster_size = [&] {
    const Value* size = ValueAt(Etcd(), {"status", "clusterSize"});
    return size == nullptr ? -1 : size->int_value();
  };
  auto member_lease = [&](int i) {
    RequestLog log;
    return admin_->Get({"coordination.k8s.io/v1", "leases", "default", "etcd-main-" + std::to_string(i), ""},
                       log);
  };

  ASSERT_NO_FATAL_FAILURE(scale_to(5, "scaled to 5"));
  EXPECT_TRUE(Eventually([&] { return cluster_size() == 5; }, std::chrono::seconds(30))) << cluster_size();
  for (int i = 3; i < 5; ++i) {
    const std::string member = "etcd-main-" + std::to_string(i);
    auto lease = member_lease(i);
    ASSERT_TRUE(lease.ok()) << member << ": " << lease.error().message;
    EXPECT_NE(TextAt(*lease, {"spec", "holderIdentity"}), "") << member;
    EXPECT_TRUE(fs::exists(MemberVolume(member) + "/new.etcd/member/snap/db"));
    // Each new member's etcd started once: none was added with an initial cluster that missed the other.
    EXPECT_EQ(Kubectl("get pod " + member +
                      " -o jsonpath='{.status.containerStatuses[?(@.name==\"etcd\")].restartCount}'")
                  .output,
              "0")
        << Kubectl("logs " + member + " -c etcd --previous --tail=5").output;
  }

  ASSERT_NO_FATAL_FAILURE(scale_to(3, "scaled back to 3"));
  EXPECT_EQ(Kubectl("get statefulset etcd-main -o jsonpath={.spec.replicas}").output, "3");
  EXPECT_EQ(cluster_size(), 3);
  for (int i = 3; i < 5; ++i) {
    EXPECT_TRUE(Eventually(
        [&] {
          auto lease = member_lease(i);
          return !lease.ok() && lease.error().code == ErrorCode::kNotFound;
        },
        std::chrono::seconds(30)))
        << "etcd-main-" << i << ": its Lease is still there";
  }
  // By name, from the controllers' logs: the new members' status entries and
  // the budget followed the way up, the entries and Leases went on the way down.
  const std::vector<std::string> steps = ControllerSteps();
  for (const char* step :
       {"SetMemberStatus etcd-main-3 succeeded", "SetMemberStatus etcd-main-4 succeeded",
        "SetPdbMinAvailable etcd-main succeeded", "RemoveStatusMember etcd-main-3 succeeded",
        "RemoveStatusMember etcd-main-4 succeeded", "DeleteMemberLease etcd-main-3 succeeded",
        "DeleteMemberLease etcd-main-4 succeeded"})
    EXPECT_NE(std::find(steps.begin(), steps.end(), step), steps.end()) << step << "\n"
                                                                        << ::testing::PrintToString(steps);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  writer.Stop();
  EXPECT_GT(writer.acknowledged().size(), 100u);
  ExpectNoKeyLostAndOneClusterThatAgrees(writer, 3);
}

// Quorum lost: two of three members' data directories wiped while their Pods
// are away. Nothing disruptive happens without an approval, and the status
// names the plan and the data-loss bound; after `kubectl annotate` approves
// it, the cluster is re-bootstrapped from the backup and every key up to the
// bound is present.
TEST_F(EtcdOnNode, QuorumLostAndRecoveredFromTheBackupOnlyAfterAnApproval) {
  Up("etcd-quorum");
  // As the e2e world runs it: the re-bootstrap waits 5 s after the last disruptive step, not 60.
  AddControllerArguments({"--param", "notReadyGracePeriod=10s", "--param", "unknownGracePeriod=5s",
                          "--min-disruptive-interval", "5"});
  CreateEtcd(3);
  AwaitHealthyWith(3, std::chrono::seconds(240), "created from nothing");
  NumberedWriter writer({ServiceUrl()}, "/quorum/");
  writer.Start(std::chrono::milliseconds(20));
  auto delta_revision = [&] {
    const std::string holder =
        TextAt(Get({"coordination.k8s.io/v1", "leases", "default", "etcd-main-delta-snap", ""}),
               {"spec", "holderIdentity"});
    return holder.empty() ? int64_t{0} : std::stoll(holder);
  };
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const int64_t written = writer.acknowledged().empty() ? 0 : writer.acknowledged().back().revision;
  const auto writing = Clock::now();
  ASSERT_TRUE(Eventually([&] { return delta_revision() >= written; }, std::chrono::seconds(60)))
      << delta_revision() << " < " << written;
  EXPECT_FALSE(fs::is_empty(node_->BackupBucketsDir() + "/node-backups"));
  Report("the writes in a delta snapshot", writing);

  TakeAway("etcd-main-1");
  TakeAway("etcd-main-2");
  for (const char* pod : {"etcd-main-1", "etcd-main-2"}) {
    std::error_code moved;
    fs::rename(MemberVolume(pod) + "/new.etcd", dir_->path() + "/wiped-" + pod, moved);
    ASSERT_FALSE(moved) << moved.message();
  }
  Back();
  const auto lost = Clock::now();
  Report("two members taken away and wiped", writing);

  auto operation = [&](const char* field) { return TextAt(Etcd(), {"status", "lastOperation", field}); };
  ASSERT_TRUE(Eventually([&] { return operation("state") == "AwaitingApproval"; }, std::chrono::seconds(180),
                         std::chrono::seconds(1)))
      << Describe();
  Report("quorum lost until the plan awaits approval", lost);
  const Value bound = *ValueAt(Etcd(), {"status", "lastOperation", "dataLossBound"});
  const int64_t backup_revision = ValueAt(bound, {"backupRevision"})->int_value();
  EXPECT_GE(backup_revision, written) << FormatJson(bound);
  writer.Stop();
  // The status shows the lost quorum before the approval, so that the
  // healthy status awaited after it is the recovered cluster's.
  ASSERT_TRUE(Eventually([&] { return !HealthyWith(3); }, std::chrono::seconds(60), std::chrono::seconds(1)))
      << Describe();
  Report("quorum lost until the status shows it", lost);
  // Nothing disruptive while it waited: the StatefulSet keeps its replicas.
  EXPECT_EQ(Kubectl("get statefulset etcd-main -o jsonpath={.spec.replicas}").output, "3");

  const ShellRun approved =
      Kubectl("annotate etcd etcd-main ruleplane.dev/approve-plan=" + operation("planDigest"));
  ASSERT_EQ(approved.exit_code, 0) << approved.output;
  // The re-created Leases can make the status healthy for a moment before
  // the first member restored: the restore is awaited first.
  const auto approved_at = Clock::now();
  ASSERT_TRUE(Eventually(
      [&] {
        return Contains(Kubectl("logs etcd-main-0 -c member-init").output,
                        "RestoreFullSnapshot etcd-main-0  done");
      },
      std::chrono::seconds(360), std::chrono::seconds(1)))
      << Describe();
  Report("the first member restored after the approval", approved_at);
  AwaitHealthyWith(3, std::chrono::seconds(240), "recovered after the approval", "etcd-main-2");
  ExpectNoKeyLostAndOneClusterThatAgrees(writer, 3, backup_revision);
}

// The leading controller's Pod deleted in the middle of the plan that
// creates the cluster: it hangs after its second step (a failure point,
// RULEPLANE_FAILPOINT=after:ApplyEtcdServices=hang) and is deleted as a user
// deletes a Pod. The other replica takes the Lease, observes again and goes
// on: the steps that took effect are found done (skipped), nothing made twice.
TEST_F(EtcdOnNode, TheLeadingControllersPodDeletedInTheMiddleOfAPlan) {
  Up("etcd-controller");
  const ShellRun hung = Kubectl(
      "set env deployment/ruleplane-controller RULEPLANE_FAILPOINT=after:ApplyEtcdServices=hang && "
      "kubectl rollout status deployment ruleplane-controller --timeout=120s");
  ASSERT_EQ(hung.exit_code, 0) << hung.output;
  // The leader that hangs is a replica of the new ReplicaSet: until the Lease of a replica the rollout
  // replaced expires, the Lease may name that replica, whose Pod is still there, terminating.
  auto runs_the_failure_point = [&](const std::string& pod) {
    const Value object = Pod(pod);
    const Value* containers = ValueAt(object, {"spec", "containers"});
    return object.is_map() && ValueAt(object, {"metadata", "deletionTimestamp"}) == nullptr &&
           containers != nullptr && Contains(FormatJson(*containers), "RULEPLANE_FAILPOINT");
  };
  std::string first;
  ASSERT_TRUE(
      Eventually([&] { return !(first = ControllerLeader()).empty() && runs_the_failure_point(first); },
                 std::chrono::seconds(90)))
      << "leader " << first << "\n"
      << Describe();
  CreateEtcd(3);
  ASSERT_TRUE(Eventually([&] { return Contains(Kubectl("logs " + first).output, "reached, hanging"); },
                         std::chrono::seconds(60)))
      << Kubectl("logs " + first).output;
  const std::string services_uid =
      TextAt(Get({"v1", "services", "default", "etcd-main-client", ""}), {"metadata", "uid"});
  // The Services were made, but their step's outcome was never reported: it hung first.
  EXPECT_EQ(StepLines(Kubectl("logs " + first).output),
            (std::vector<std::string>{"AddEtcdFinalizer etcd-main succeeded",
                                      "ApplyEtcdConfigMap etcd-main succeeded"}));
  EXPECT_NE(services_uid, "");
  const ShellRun deleted = Kubectl("delete pod " + first);
  ASSERT_EQ(deleted.exit_code, 0) << deleted.output;

  std::string second;
  ASSERT_TRUE(Eventually([&] { return !(second = ControllerLeader()).empty() && second != first; },
                         std::chrono::seconds(90)))
      << Describe();
  AwaitHealthyWith(3, std::chrono::seconds(240), "created by the successor");
  const std::vector<std::string> steps = StepLines(Kubectl("logs " + second).output);
  ASSERT_GE(steps.size(), 4u) << Kubectl("logs " + second).output;
  EXPECT_EQ(steps[0], "AddEtcdFinalizer etcd-main skipped");
  EXPECT_EQ(steps[1], "ApplyEtcdConfigMap etcd-main skipped");
  EXPECT_EQ(steps[2], "ApplyEtcdServices etcd-main skipped");
  EXPECT_EQ(TextAt(Get({"v1", "services", "default", "etcd-main-client", ""}), {"metadata", "uid"}),
            services_uid);
  NumberedWriter writer({ServiceUrl()}, "/controller/");
  ASSERT_TRUE(writer.WriteSome(50).ok());
  ExpectNoKeyLostAndOneClusterThatAgrees(writer, 3);
}

}  // namespace
}  // namespace ruleplane::testing
