// The whole loop, for real: a kube-apiserver with etcd as its storage and
// kube-controller-manager, `ruleplane controller` from deploy/ (its RBAC
// only), and the test kubelet (tests/support/node_agent.h) running each
// member Pod as `ruleplane member-init`, a real etcd member and `ruleplane
// member-agent`. An Etcd created from nothing becomes a cluster; failures
// are then inflicted on it while a writer puts numbered keys through the
// members' client URLs, and each scenario ends with every acknowledged key
// present and HashKV equal on every member. The scenarios a real node runs
// too (created from nothing and then a Pod deleted, a data directory wiped
// and a database corrupted; a scale from 3 to 5 and back; a quorum lost and
// recovered from Local backups after an approval) are in tests/node/ only.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "adapters/etcd/etcd_client.h"
#include "adapters/kubernetes/manifests.h"
#include "adapters/kubernetes/object_fields.h"
#include "adapters/local/backup_store.h"
#include "adapters/object_store/store_config.h"
#include "engine/common/json_value.h"
#include "platform/failure_point.h"
#include "platform/http_client.h"
#include "platform/process.h"
#include "tests/run_ruleplane.h"
#include "tests/support/e2e_world.h"
#include "tests/support/etcd_cluster.h"
#include "tests/support/s3_server.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kEtcd = E2eWorld::kEtcd;
const KubeResource& kEtcdResource = E2eWorld::kEtcdResource;

class EtcdLifecycle : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("e2e");
    // The controller runs as the user "operator" with deploy/'s Role and nothing else.
    auto world = E2eWorld::Start(dir_->path(), {.controller_users = {"operator"}});
    ASSERT_TRUE(world.ok()) << world.error().message;
    world_ = std::move(*world);
    admin_ = &world_->admin();
    agent_ = &world_->agent();
  }

  void TearDown() override {
    for (ChildProcess& controller : controllers_) controller.Stop();
    world_.reset();
  }

  // Controller `i` (a second one only waits for the Lease), as deploy/controller.yaml runs it;
  // `failpoint`: RULEPLANE_FAILPOINT (platform/failure_point.h), where it dies.
  void StartController(int i, const std::string& failpoint = "", const std::vector<std::string>& more = {}) {
    if (controllers_.size() <= static_cast<size_t>(i)) controllers_.resize(i + 1);
    auto started = world_->StartController(std::to_string(i), "operator", more, failpoint);
    ASSERT_TRUE(started.ok()) << started.error().message;
    controllers_[i] = std::move(*started);
  }

  std::string ControllerLog(int i) const { return world_->ControllerLog(std::to_string(i)); }

  // Controller 0 under today's etcd-druid and etcd-backup-restore (with the
  // components table, which has no version 2) and `more` flags, and a
  // 3-member Etcd it created, healthy.
  void CreateHealthyEtcdUnderTodaysRules(std::vector<std::string> more = {}) {
    std::vector<std::string> flags = {"--rules", "etcd-druid@2",         "--rules", "etcd-druid-components@1",
                                      "--rules", "etcd-backup-restore@2"};
    flags.insert(flags.end(), more.begin(), more.end());
    ASSERT_NO_FATAL_FAILURE(StartController(0, "", flags));
    CreateEtcd(3);
    ASSERT_TRUE(
        Eventually([&] { return HealthyWith(3); }, std::chrono::seconds(180), std::chrono::seconds(1)))
        << Describe() << Slurp(ControllerLog(0));
  }

  // The steps controller `i` performed, from its journal, oldest first, as
  // "<action> <target>"; those of `actions` only.
  std::vector<std::string> SucceededSteps(int i, const std::set<std::string>& actions) {
    const auto history = testing_support::Ruleplane("history -o json --journal " +
                                                    world_->ControllerJournal(std::to_string(i)));
    EXPECT_EQ(history.exit_code, 0) << history.out << history.err;
    auto plans = ParseJson(history.out);
    EXPECT_TRUE(plans.ok() && plans->is_list()) << history.out;
    std::vector<std::string> performed;
    if (!plans.ok() || !plans->is_list()) return performed;
    for (auto plan = plans->list_value().rbegin(); plan != plans->list_value().rend(); ++plan) {
      for (const Value& step : ValueAt(*plan, {"steps"})->list_value()) {
        if (actions.contains(TextAt(step, {"action"})) && TextAt(step, {"state"}) == "succeeded")
          performed.push_back(TextAt(step, {"action"}) + " " + TextAt(step, {"target"}));
      }
    }
    return performed;
  }

  void CreateEtcd(int replicas, const std::string& store = E2eWorld::kLocalStore) {
    ASSERT_TRUE(world_->CreateEtcd(replicas, store).ok());
  }
  // Quorum lost (two of three data directories wiped) on an Etcd created
  // with `store`, then approved and recovered from its backups; first, with
  // `wipe_one_first`, one member's data directory wiped alone (it rejoins,
  // restored from the store).
  void LoseQuorumAndRecoverAfterAnApproval(const std::string& store, bool wipe_one_first = false);
  Value Etcd() { return world_->Etcd(); }
  bool HealthyWith(int replicas) { return world_->HealthyWith(replicas); }
  std::vector<std::string> ClientUrls(int replicas) const { return world_->ClientUrls(replicas); }

  std::string Describe() {
    std::vector<std::string> names;
    for (size_t i = 0; i < controllers_.size(); ++i) names.push_back(std::to_string(i));
    return world_->Describe(names);
  }

  // The member's Pod deleted, and while it is away its data directory moved
  // off the volume (kept in the test's directory).
  void WipeDataDirectoryWhileItsPodIsAway(const std::string& pod) {
    RequestLog log;
    const std::string data = agent_->VolumeDir(pod, kEtcd);
    ASSERT_NE(data, "");
    ASSERT_TRUE(admin_->Delete({"v1", "pods", "default", pod, ""}, {}, std::nullopt, log).ok());
    ASSERT_TRUE(Eventually([&] { return agent_->Pid(pod, "etcd") == 0; }, std::chrono::seconds(30)));
    std::error_code moved;
    fs::rename(data + "/new.etcd", dir_->path() + "/wiped-" + std::to_string(++wiped_) + "-" + pod, moved);
    ASSERT_FALSE(moved) << moved.message();
  }

  // The started voting members in etcd's member list, asked of the first
  // `replicas` members; -1 when none answers.
  int VotingMembers(int replicas) const {
    EtcdClient cluster(EtcdClientConfig{ClientUrls(replicas), world_->ClientTls(), std::chrono::seconds(5)});
    RequestLog log;
    auto members = cluster.MemberList(log);
    if (!members.ok()) return -1;
    return static_cast<int>(std::count_if(members->begin(), members->end(), [](const EtcdMember& member) {
      return !member.is_learner && !member.name.empty();
    }));
  }

  // Every acknowledged key (up to a restore's data-loss bound) is present,
  // and every member's HashKV agrees at the lowest revision they have all applied.
  void ExpectNoKeyLostAndMembersAgree(const NumberedWriter& writer, int replicas,
                                      int64_t up_to_revision = INT64_MAX) {
    EtcdClient client(EtcdClientConfig{ClientUrls(replicas), world_->ClientTls(), std::chrono::seconds(5)});
    EXPECT_EQ(MissingKeys(client, writer, up_to_revision), std::vector<std::string>{});
    Status agree = MembersAgree(ClientUrls(replicas), std::chrono::seconds(30), world_->ClientTls());
    EXPECT_TRUE(agree.ok()) << agree.error().message << "\n" << Describe();
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<E2eWorld> world_;
  int wiped_ = 0;  // data directories moved away so far
  KubeClient* admin_ = nullptr;
  NodeAgent* agent_ = nullptr;
  std::vector<ChildProcess> controllers_;
};

// The controller dies (exits at once, as under SIGKILL) in the middle of the
// plan that creates the cluster, at two failure points in turn; each time the
// standby replica takes the Lease, observes again and goes on. No step that
// had taken effect runs again: the successor finds it done (skipped) or does
// not plan it at all.
TEST_F(EtcdLifecycle, ControllersKilledInTheMiddleOfAPlanLeaveTheRestToTheirSuccessor) {
  RequestLog log;
  auto leads = [&](int i) {
    auto lease =
        admin_->Get({"coordination.k8s.io/v1", "leases", "default", "ruleplane-controller", ""}, log);
    const std::string holder = lease.ok() ? TextAt(*lease, {"spec", "holderIdentity"}) : "";
    const std::string suffix = "_" + std::to_string(controllers_[i].pid());  // identity: <host>_<pid>
    return holder.size() > suffix.size() &&
           holder.compare(holder.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  StartController(0, "after:CreateMemberLease");
  ASSERT_TRUE(Eventually([&] { return leads(0); }, std::chrono::seconds(30))) << Slurp(ControllerLog(0));
  StartController(1, "after:CreateStatefulSet");
  CreateEtcd(3);
  ASSERT_TRUE(Eventually([&] { return !controllers_[0].running(); }, std::chrono::seconds(60)))
      << Slurp(ControllerLog(0));
  EXPECT_EQ(controllers_[0].Stop(), kFailPointExitCode);
  EXPECT_EQ(StepLines(Slurp(ControllerLog(0))),
            (std::vector<std::string>{
                "AddEtcdFinalizer etcd-main succeeded", "ApplyEtcdConfigMap etcd-main succeeded",
                "ApplyEtcdServices etcd-main succeeded", "ApplyEtcdMemberAccess etcd-main succeeded"}));

  ASSERT_TRUE(Eventually([&] { return leads(1) || !controllers_[1].running(); }, std::chrono::seconds(30)))
      << Slurp(ControllerLog(1));
  StartController(2);
  ASSERT_TRUE(Eventually([&] { return !controllers_[1].running(); }, std::chrono::seconds(60)))
      << Slurp(ControllerLog(1));
  EXPECT_EQ(controllers_[1].Stop(), kFailPointExitCode);
  // The first lease was created before the crash: not planned again; the others are.
  EXPECT_EQ(StepLines(Slurp(ControllerLog(1))),
            (std::vector<std::string>{
                "AddEtcdFinalizer etcd-main skipped", "ApplyEtcdConfigMap etcd-main skipped",
                "ApplyEtcdServices etcd-main skipped", "ApplyEtcdMemberAccess etcd-main skipped",
                "CreateMemberLease etcd-main-1 succeeded", "CreateMemberLease etcd-main-2 succeeded",
                "CreateSnapshotLease etcd-main-full-snap succeeded",
                "CreateSnapshotLease etcd-main-delta-snap succeeded", "SetClusterSize etcd-main succeeded"}))
      << Slurp(ControllerLog(1));

  ASSERT_TRUE(Eventually([&] { return leads(2); }, std::chrono::seconds(30))) << Slurp(ControllerLog(2));
  ASSERT_TRUE(Eventually([&] { return HealthyWith(3); }, std::chrono::seconds(180), std::chrono::seconds(1)))
      << Describe();
  for (const std::string& line : StepLines(Slurp(ControllerLog(2)))) {
    EXPECT_EQ(line.find("ApplyEtcdConfigMap"), std::string::npos) << line;
    EXPECT_EQ(line.find("CreateStatefulSet"), std::string::npos) << line;
    EXPECT_EQ(line.find("CreateMemberLease"), std::string::npos) << line;
  }
  NumberedWriter writer(ClientUrls(3), "/crash/");
  ASSERT_TRUE(writer.WriteSome(50).ok());
  ExpectNoKeyLostAndMembersAgree(writer, 3);
}

// Hibernation under today's etcd-druid rules (etcd-druid@2): spec.replicas 0
// with a backup store takes a full snapshot through the leading member's
// sidecar first (TriggerFullSnapshot), then scales the StatefulSet to 0; the
// store's newest full snapshot holds every acknowledged write. As today's
// etcd-druid, it scales only when asked (druid.gardener.cloud/operation:
// reconcile), and removes the annotation once the StatefulSet is at 0.
// Woken up, every write is there; a scale-down to 1 is refused.
TEST_F(EtcdLifecycle, HibernatedUnderTodaysRulesOnlyAfterAFullSnapshotOfEveryWriteWokenUpAndNotScaledDown) {
  StartController(0);
  CreateEtcd(3);
  ASSERT_TRUE(Eventually([&] { return HealthyWith(3); }, std::chrono::seconds(180), std::chrono::seconds(1)))
      << Describe();
  StoreConfig config;
  config.provider = "Local";
  config.container = dir_->path() + "/node/hostpath/etc/gardener/local-backupbuckets/e2e-backups";
  config.prefix = "etcd-main";
  auto newest_full = [&]() -> Result<int64_t> {
    auto objects = OpenObjectStore(config);
    if (!objects.ok()) return objects.error();
    auto listing = BackupStore(std::move(*objects)).List();
    if (!listing.ok()) return listing.error();
    int64_t newest = 0;
    for (const StoredSnapshot& snapshot : listing->snapshots)
      if (snapshot.kind == "Full") newest = std::max(newest, snapshot.last_revision);
    return newest;
  };
  // The leader's agent takes its first full snapshot when it finds none; the
  // writes come after it, so only the hibernation's own snapshot can hold them.
  ASSERT_TRUE(Eventually(
      [&] {
        auto newest = newest_full();
        return newest.ok() && *newest > 0;
      },
      std::chrono::seconds(60)));
  NumberedWriter writer(ClientUrls(3), "/hibernate/");
  ASSERT_TRUE(writer.WriteSome(50).ok());
  const int64_t written = writer.acknowledged().back().revision;
  // The members' agents record their revision on their Leases at each heartbeat.
  RequestLog log;
  auto recorded = [&] {
    auto lease = admin_->Get({"coordination.k8s.io/v1", "leases", "default", "etcd-main-0", ""}, log);
    const std::string text =
        lease.ok() ? TextAt(*lease, {"metadata", "annotations", "ruleplane.dev/revision"}) : "";
    return text.empty() ? int64_t{0} : std::stoll(text);
  };
  ASSERT_TRUE(Eventually([&] { return recorded() >= written; }, std::chrono::seconds(30)));
  controllers_[0].Stop();
  StartController(1, "", {"--rules", "etcd-druid@2"});
  // As Gardener hibernates: spec.replicas 0 and the request to reconcile the spec.
  auto hibernate = ParseJson(
      R"({"metadata":{"annotations":{"druid.gardener.cloud/operation":"reconcile"}},"spec":{"replicas":0}})");
  ASSERT_TRUE(admin_->MergePatch(kEtcdResource, *hibernate, log).ok());
  auto sts_replicas = [&] {
    auto statefulset = admin_->Get({"apps/v1", "statefulsets", "default", kEtcd, ""}, log);
    return statefulset.ok() ? ValueAt(*statefulset, {"spec", "replicas"})->int_value() : -1;
  };
  ASSERT_TRUE(
      Eventually([&] { return sts_replicas() == 0; }, std::chrono::seconds(120), std::chrono::seconds(1)))
      << Describe() << Slurp(ControllerLog(1));
  const std::vector<std::string> steps = StepLines(Slurp(ControllerLog(1)));
  const auto snapshot_at = std::find(steps.begin(), steps.end(), "TriggerFullSnapshot etcd-main succeeded");
  const auto scale_at = std::find(steps.begin(), steps.end(), "ScaleStatefulSet etcd-main succeeded");
  ASSERT_NE(snapshot_at, steps.end()) << Slurp(ControllerLog(1));
  ASSERT_NE(scale_at, steps.end()) << Slurp(ControllerLog(1));
  EXPECT_LT(snapshot_at, scale_at) << "the StatefulSet went to 0 before the final snapshot";
  EXPECT_TRUE(Eventually(
      [&] {
        return TextAt(Etcd(), {"metadata", "annotations", "druid.gardener.cloud/operation"}).empty();
      },
      std::chrono::seconds(30)))
      << "the reconcile is done: the annotation is removed\n"
      << Slurp(ControllerLog(1));

  auto newest = newest_full();
  ASSERT_TRUE(newest.ok()) << newest.error().message;
  EXPECT_GE(*newest, written);

  // Woken up as Gardener wakes a shoot: spec.replicas 3 and the request. The
  // members start again from their volumes, every write of before there.
  auto wake = ParseJson(
      R"({"metadata":{"annotations":{"druid.gardener.cloud/operation":"reconcile"}},"spec":{"replicas":3}})");
  ASSERT_TRUE(admin_->MergePatch(kEtcdResource, *wake, log).ok());
  // The status alone is not enough: the member Leases renewed just before the
  // hibernation still read as Ready for their duration. The members answer.
  ASSERT_TRUE(Eventually(
      [&] {
        return HealthyWith(3) &&
               MembersAgree(ClientUrls(3), std::chrono::seconds(5), world_->ClientTls()).ok();
      },
      std::chrono::seconds(180), std::chrono::seconds(1)))
      << Describe() << Slurp(ControllerLog(1));
  ExpectNoKeyLostAndMembersAgree(writer, 3);

  // A scale-down other than to 0 is refused, as today's etcd-druid refuses
  // it: a Warning Event says so, and the StatefulSet keeps its 3 replicas
  // (the controller's steps after the request show no ScaleStatefulSet).
  const size_t steps_before = StepLines(Slurp(ControllerLog(1))).size();
  auto shrink = ParseJson(
      R"({"metadata":{"annotations":{"druid.gardener.cloud/operation":"reconcile"}},"spec":{"replicas":1}})");
  ASSERT_TRUE(admin_->MergePatch(kEtcdResource, *shrink, log).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        RequestLog reads;
        auto events = admin_->List({"v1", "events", "default", "", ""}, "", reads,
                                   "involvedObject.name=" + std::string(kEtcd) + ",type=Warning");
        if (!events.ok()) return false;
        for (const Value& event : FieldList(*events, {"items"})) {
          if (TextAt(event, {"message"}).find("scale-down from 3 to 1 members is not supported") !=
              std::string::npos)
            return true;
        }
        return false;
      },
      std::chrono::seconds(60)))
      << Slurp(ControllerLog(1));
  EXPECT_EQ(sts_replicas(), 3);
  const std::vector<std::string> after = StepLines(Slurp(ControllerLog(1)));
  ASSERT_GE(after.size(), steps_before);
  for (size_t i = steps_before; i < after.size(); ++i)
    EXPECT_EQ(after[i].find("ScaleStatefulSet"), std::string::npos) << after[i];
  // (The status now follows spec.replicas 1; etcd's own member list says what runs.)
  EXPECT_EQ(VotingMembers(3), 3) << Describe();
}

// Today's rules end to end (`--rules etcd-druid@2 --rules etcd-backup-restore@2`,
// with the components table, which has no version 2): the controller gives
// member-init its selection through the StatefulSet. A member whose data
// directory is wiped never restores under them: member-init removes it, adds
// it back as a learner and starts it empty; the controller sees the learner
// in the members' status answers and promotes it once it has caught up
// (etcd-backup-restore's sidecar does so as released). No write is lost.
TEST_F(EtcdLifecycle, UnderTodaysRulesAWipedMemberRejoinsAsALearnerAndIsPromoted) {
  ASSERT_NO_FATAL_FAILURE(CreateHealthyEtcdUnderTodaysRules());
  RequestLog log;
  auto statefulset = admin_->Get({"apps/v1", "statefulsets", "default", kEtcd, ""}, log);
  ASSERT_TRUE(statefulset.ok());
  EXPECT_NE(FormatJson(*ValueAt(*statefulset, {"spec", "template", "spec", "initContainers"}))
                .find("--rules=etcd-backup-restore-initialization@2."),
            std::string::npos)
      << "member-init runs today's rules";

  NumberedWriter writer(ClientUrls(3), "/learner/");
  writer.Start(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_NO_FATAL_FAILURE(WipeDataDirectoryWhileItsPodIsAway("etcd-main-2"));

  ASSERT_TRUE(Eventually(
      [&] { return agent_->Pid("etcd-main-2", "etcd") != 0 && HealthyWith(3) && VotingMembers(3) == 3; },
      std::chrono::seconds(180), std::chrono::seconds(1)))
      << Describe() << Slurp(ControllerLog(0));
  const std::string init_log = Slurp(dir_->path() + "/node/pods/etcd-main-2/member-init.log");
  EXPECT_NE(init_log.find("AddMember etcd-main-2  done"), std::string::npos) << init_log;
  EXPECT_EQ(init_log.find("RestoreFullSnapshot"), std::string::npos) << init_log;
  const std::vector<std::string> steps = StepLines(Slurp(ControllerLog(0)));
  EXPECT_NE(std::find(steps.begin(), steps.end(), "PromoteMember etcd-main-2 succeeded"), steps.end())
      << Slurp(ControllerLog(0));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  writer.Stop();
  EXPECT_GT(writer.acknowledged().size(), 50u);
  ExpectNoKeyLostAndMembersAgree(writer, 3);
}

// Today's scale-up (`--rules etcd-druid@2 ... etcd-backup-restore@2`), asked
// for with the operation annotation as Gardener asks: the two new members
// join as learners (etcd 3.4 admits one learner at a time, so the second
// joins once the first is promoted), the controller promotes each once it has
// caught up, one per plan; the rest of the spec reconcile follows at five
// members and the annotation goes. A writer writes throughout: nothing is lost.
TEST_F(EtcdLifecycle, UnderTodaysRulesAScaleUpAddsLearnersPromotedOneAtATime) {
  ASSERT_NO_FATAL_FAILURE(CreateHealthyEtcdUnderTodaysRules());
  NumberedWriter writer(ClientUrls(3), "/learners/");
  writer.Start(std::chrono::milliseconds(20));
  RequestLog log;
  auto grow = ParseJson(
      R"({"metadata":{"annotations":{"druid.gardener.cloud/operation":"reconcile"}},"spec":{"replicas":5}})");
  ASSERT_TRUE(admin_->MergePatch(kEtcdResource, *grow, log).ok());
  ASSERT_TRUE(Eventually([&] { return HealthyWith(5) && VotingMembers(3) == 5; }, std::chrono::seconds(240),
                         std::chrono::seconds(1)))
      << Describe() << Slurp(ControllerLog(0));
  for (const char* pod : {"etcd-main-3", "etcd-main-4"}) {
    const std::string init_log = Slurp(dir_->path() + "/node/pods/" + pod + "/member-init.log");
    EXPECT_NE(init_log.find("scale-up-join-as-learner"), std::string::npos) << init_log;
    EXPECT_NE(init_log.find(std::string("AddMember ") + pod + "  done"), std::string::npos) << init_log;
  }
  // From the journal: each new member promoted, never two in one plan.
  const auto history =
      testing_support::Ruleplane("history -o json --journal " + world_->ControllerJournal("0"));
  auto plans = ParseJson(history.out);
  ASSERT_TRUE(plans.ok() && plans->is_list()) << history.out << history.err;
  std::vector<std::string> promoted;
  for (const Value& plan : plans->list_value()) {
    int in_plan = 0;
    for (const Value& step : ValueAt(plan, {"steps"})->list_value()) {
      if (TextAt(step, {"action"}) != "PromoteMember" || TextAt(step, {"state"}) != "succeeded") continue;
      ++in_plan;
      promoted.push_back(TextAt(step, {"target"}));
    }
    EXPECT_LE(in_plan, 1) << FormatJson(plan);
  }
  // (A member of the new cluster that started after the others formed it joined as a learner too.)
  for (const char* pod : {"etcd-main-3", "etcd-main-4"})
    EXPECT_EQ(std::count(promoted.begin(), promoted.end(), pod), 1) << ::testing::PrintToString(promoted);
  // The spec reconcile finished: the generation applied, the annotation gone.
  EXPECT_TRUE(Eventually(
      [&] {
        const Value etcd = Etcd();
        return TextAt(etcd, {"metadata", "annotations", "druid.gardener.cloud/operation"}).empty() &&
               ValueAt(etcd, {"status", "observedGeneration"}) != nullptr &&
               ValueAt(etcd, {"status", "observedGeneration"})->int_value() ==
                   ValueAt(etcd, {"metadata", "generation"})->int_value();
      },
      std::chrono::seconds(60)))
      << FormatJson(Etcd()) << Slurp(ControllerLog(0));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  writer.Stop();
  EXPECT_GT(writer.acknowledged().size(), 50u);
  ExpectNoKeyLostAndMembersAgree(writer, 5);
}

// With TLS and an S3 store (s3rver, which verifies Signature V4):
// client and peer TLS with client-cert-auth from etcd-druid's Secrets (a CA
// and certificates openssl made for the member Pods' IPs), the credentials in
// a Secret as etcd-druid's spec.backup.store.secretRef names it, the store
// reached through an endpoint override. Created from nothing, one member
// wiped (restored from the bucket, it rejoins), then the quorum lost: without
// an approval nothing disruptive happens, and the status says what waits for
// it and the data-loss bound; after the approval the first member restores
// from the bucket, the others join, and every key up to the bound is present.
TEST_F(EtcdLifecycle, WithTlsAndAnS3StoreAWipedMemberAndALostQuorumAreRestoredFromTheBucket) {
  Status tls = world_->EnableTls();
  ASSERT_TRUE(tls.ok()) << tls.error().message;
  auto server = S3Server::Start(dir_->path() + "/s3", {"backups"});
  ASSERT_TRUE(server.ok()) << server.error().message;
  auto secret = ParseJson(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"etcd-backup"},)"
                          R"("stringData":{"accessKeyID":"S3RVER","secretAccessKey":"S3RVER",)"
                          R"("region":"us-east-1","s3ForcePathStyle":"true"}})");
  ASSERT_TRUE(secret.ok());
  RequestLog log;
  ASSERT_TRUE(ApplyManifests(*admin_, {*secret}, "default", log).ok());
  LoseQuorumAndRecoverAfterAnApproval(
      R"({"provider":"S3","container":"backups","prefix":"etcd-main","secretRef":{"name":"etcd-backup"},)"
      R"("endpointOverride":")" +
          (*server)->endpoint() + R"("})",
      true);
  if (HasFatalFailure()) return;
  // TLS is on where it matters: the rebuilt members list https peer URLs
  // (their agents say so on the Leases) and answer no client without a certificate.
  RequestLog reads;
  for (int i = 0; i < 3; ++i) {
    auto lease = admin_->Get(
        {"coordination.k8s.io/v1", "leases", "default", "etcd-main-" + std::to_string(i), ""}, reads);
    ASSERT_TRUE(lease.ok());
    EXPECT_EQ(TextAt(*lease, {"metadata", "annotations", "member.etcd.gardener.cloud/tls-enabled"}), "true")
        << FormatJson(*lease);
  }
  EtcdClient anonymous(EtcdClientConfig{ClientUrls(3), TestPki::Files(world_->ClientTls().ca_file)});
  EXPECT_FALSE(anonymous.MemberList(reads).ok()) << "a client without a certificate was answered";
  // The agents serve their API over HTTPS only (spec.backup.tls), with the certificate of the Pod's DNS name.
  for (int i = 0; i < 3; ++i) {
    const std::string pod = "etcd-main-" + std::to_string(i);
    const std::string host = pod + ".etcd-main-peer.default.svc";
    const std::string ip = world_->agent().PodIP(pod);
    HttpClient https(TestPki::Files(world_->ClientTls().ca_file));
    https.set_connect_to({host + ":8080:" + ip + ":8080"});
    auto healthz = https.Send("GET", "https://" + host + ":8080/healthz", "", std::chrono::seconds(10));
    ASSERT_TRUE(healthz.ok()) << healthz.error().message;
    EXPECT_EQ(healthz->body, R"({"health":true})");
    HttpClient plain;
    auto refused = plain.Send("GET", "http://" + ip + ":8080/healthz", "", std::chrono::seconds(10));
    EXPECT_TRUE(!refused.ok() || refused->status != 200) << "the agent answered plain HTTP";
  }
  StoreConfig config;
  config.provider = "S3";
  config.container = "backups";
  config.prefix = "etcd-main";
  config.endpoint_override = (*server)->endpoint();
  config.credentials = dir_->path() + "/credentials";
  fs::create_directories(config.credentials);
  std::ofstream(config.credentials + "/accessKeyID") << "S3RVER";
  std::ofstream(config.credentials + "/secretAccessKey") << "S3RVER";
  std::ofstream(config.credentials + "/region") << "us-east-1";
  auto objects = OpenObjectStore(config);
  ASSERT_TRUE(objects.ok()) << objects.error().message;
  auto listing = BackupStore(std::move(*objects)).List();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  // Full snapshots, the one taken after the restore among them; the deltas
  // the restore replayed (every key up to the bound is there, and no other
  // store existed) were garbage-collected once a newer full snapshot stood
  // (LimitBased, etcd-druid's default policy). LimitBased counts periods of
  // the hourly schedule: the full the backups started with is replaced by
  // the newer one when both fall in one hour, so at least one is left.
  int fulls = 0;
  for (const StoredSnapshot& snapshot : listing->snapshots) fulls += snapshot.kind == "Full";
  EXPECT_GE(fulls, 1) << FormatJson(listing->ToValue());
  EXPECT_FALSE(fs::exists(dir_->path() + "/node/hostpath/etc/gardener")) << "nothing went to a local store";
}

// Defragmentation on its own (etcd-druid-status-defragmentation, DEP-01's
// rolling order): overwritten and compacted keys leave each member's database
// with more free space than the threshold; the controller, seeing it in the
// members' maintenance status, defragments the followers one at a time and
// the leader last, after moving the leadership off it (etcd-backup-restore
// issue 1052), as its journal records; at the end etcd itself says no
// member has that much to free, and no acknowledged write is lost.
TEST_F(EtcdLifecycle, ABloatedDatabaseIsDefragmentedFollowersFirstAndTheLeaderLast) {
  constexpr int64_t kThreshold = 2 << 20;
  StartController(0);
  CreateEtcd(3);
  ASSERT_TRUE(Eventually([&] { return HealthyWith(3); }, std::chrono::seconds(180), std::chrono::seconds(1)))
      << Describe();
  const std::vector<std::string> urls = ClientUrls(3);
  EtcdClient client(EtcdClientConfig{urls, world_->ClientTls(), std::chrono::seconds(10)});
  RequestLog log;
  const std::string value(16 * 1024, 'x');
  int64_t revision = 0;
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 250; ++i) {
      auto put = client.Put("/bloat/" + std::to_string(i), value, log);
      ASSERT_TRUE(put.ok()) << put.error().message;
      revision = *put;
    }
  }
  ASSERT_TRUE(client.Compact(revision, log).ok());
  // dbSize - dbSizeInUse of each member, from its own status; -1 when it does not answer.
  auto freeable = [&](const std::string& url) -> int64_t {
    auto status = client.MemberStatus(url, log);
    if (!status.ok()) return -1;
    return std::stoll(TextAt(status->answer, {"dbSize"})) -
           std::stoll(TextAt(status->answer, {"dbSizeInUse"}));
  };
  // Each member frees the compacted revisions' pages in its own time, and
  // counts them free from its next commit on (a write after the compaction).
  for (const std::string& url : urls) {
    EXPECT_TRUE(
        Eventually([&] { return client.Put("/bloat/tick", "t", log).ok() && freeable(url) >= kThreshold; },
                   std::chrono::seconds(30)))
        << url << ": " << freeable(url);
  }
  std::string leader;
  for (int i = 0; i < 3; ++i) {
    auto status = client.MemberStatus(urls[static_cast<size_t>(i)], log);
    ASSERT_TRUE(status.ok());
    if (status->leader == status->member_id) leader = std::string(kEtcd) + "-" + std::to_string(i);
  }
  // The default threshold (100 MiB) is far above this: nothing was defragmented
  // yet. A controller with a threshold below it takes over.
  controllers_[0].Stop();
  StartController(1, "", {"--param", "defragmentationThreshold=" + std::to_string(kThreshold)});
  NumberedWriter writer(urls, "/defrag/", world_->ClientTls());
  writer.Start(std::chrono::milliseconds(20));
  ASSERT_TRUE(Eventually(
      [&] {
        return std::all_of(urls.begin(), urls.end(), [&](const std::string& url) {
          const int64_t free = freeable(url);
          return free >= 0 && free < kThreshold;
        });
      },
      std::chrono::seconds(180), std::chrono::seconds(1)))
      << Describe() << Slurp(ControllerLog(1));
  writer.Stop();
  ExpectNoKeyLostAndMembersAgree(writer, 3);

  // The journal: one DefragmentMember per member, the leader's last, and
  // right before it the leadership moved off it (MoveLeader), so that it
  // defragmented as a follower.
  const std::vector<std::string> performed = SucceededSteps(1, {"DefragmentMember", "MoveLeader"});
  std::set<std::string> defragmented;
  for (const std::string& step : performed) {
    if (step.starts_with("DefragmentMember ")) defragmented.insert(step.substr(step.find(' ') + 1));
  }
  ASSERT_EQ(std::count_if(performed.begin(), performed.end(),
                          [](const std::string& step) { return step.starts_with("DefragmentMember "); }),
            3)
      << ::testing::PrintToString(performed);
  EXPECT_EQ(defragmented.size(), 3u) << ::testing::PrintToString(performed);
  ASSERT_GE(performed.size(), 4u) << ::testing::PrintToString(performed);
  EXPECT_EQ(performed.back(), "DefragmentMember " + leader) << ::testing::PrintToString(performed);
  EXPECT_EQ(performed[performed.size() - 2], "MoveLeader " + leader) << ::testing::PrintToString(performed);
}

// Deleted: the Etcd carries etcd-druid's finalizer, so it stays until the
// controller tore it down, in order (from its journal): the StatefulSet,
// then, once kube-controller-manager's garbage collector removed the member
// Pods, the rest of what was created for it, and last the finalizer. The
// PersistentVolumeClaims stay, with the members' data.
TEST_F(EtcdLifecycle, ADeletedEtcdIsTornDownInOrderAndItsVolumesAreKept) {
  StartController(0);
  CreateEtcd(3);
  ASSERT_TRUE(Eventually([&] { return HealthyWith(3); }, std::chrono::seconds(180), std::chrono::seconds(1)))
      << Describe();
  EXPECT_EQ(FormatJson(*ValueAt(Etcd(), {"metadata", "finalizers"})), R"(["druid.gardener.cloud/etcd"])");
  const std::string volume = agent_->VolumeDir("etcd-main-0", kEtcd);
  ASSERT_NE(volume, "");
  RequestLog log;
  ASSERT_TRUE(admin_->Delete(kEtcdResource, {}, std::nullopt, log).ok());
  ASSERT_TRUE(Eventually(
      [&] {
        auto etcd = admin_->Get(kEtcdResource, log);
        return !etcd.ok() && etcd.error().code == ErrorCode::kNotFound;
      },
      std::chrono::seconds(120), std::chrono::seconds(1)))
      << Describe() << Slurp(ControllerLog(0));
  EXPECT_EQ(SucceededSteps(0, {"DeleteStatefulSet", "DeleteEtcdComponents", "RemoveEtcdFinalizer"}),
            (std::vector<std::string>{"DeleteStatefulSet etcd-main", "DeleteEtcdComponents etcd-main",
                                      "RemoveEtcdFinalizer etcd-main"}));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(agent_->Pid("etcd-main-" + std::to_string(i), "etcd"), 0) << "a member still runs";
  for (const KubeResource& component : std::vector<KubeResource>{
           {"apps/v1", "statefulsets", "default", kEtcd, ""},
           {"v1", "services", "default", "etcd-main-client", ""},
           {"coordination.k8s.io/v1", "leases", "default", "etcd-main-0", ""},
           {"coordination.k8s.io/v1", "leases", "default", "etcd-main-delta-snap", ""}}) {
    auto object = admin_->Get(component, log);
    EXPECT_TRUE(!object.ok() && object.error().code == ErrorCode::kNotFound) << component.Path();
  }
  auto claims = admin_->List({"v1", "persistentvolumeclaims", "default", "", ""}, "", log);
  ASSERT_TRUE(claims.ok()) << claims.error().message;
  EXPECT_EQ(FieldList(*claims, {"items"}).size(), 3u) << "the members' volumes were not kept";
  EXPECT_TRUE(fs::exists(volume + "/new.etcd/member/snap/db"));
}

// Today's compaction (etcd-druid-compaction@2), run by the node: once the
// deltas since the newest full snapshot hold more revisions than the
// threshold, the controller creates the compaction Job, the node runs
// `ruleplane compact` in its Pod (the store's full snapshot and deltas
// restored on loopback, compacted, stored as one new full snapshot, the
// full-snapshot Lease set to its revision), the job controller marks it
// complete, and the controller records LastSnapshotCompactionSucceeded True
// and deletes the Job. From the journal and the API server, not the logs. A
// writer writes throughout: nothing is lost.
TEST_F(EtcdLifecycle, UnderTodaysRulesDeltasPastTheThresholdAreCompactedByAJobTheNodeRuns) {
  ASSERT_NO_FATAL_FAILURE(CreateHealthyEtcdUnderTodaysRules({"--param", "eventsThreshold=200"}));
  // The revision of the leader agent's first full snapshot, from the Lease it renews.
  RequestLog log;
  auto full_snapshot_revision = [&]() -> int64_t {
    auto lease = admin_->Get({"coordination.k8s.io/v1", "leases", "default", "etcd-main-full-snap", ""}, log);
    const std::string holder = lease.ok() ? TextAt(*lease, {"spec", "holderIdentity"}) : "";
    return holder.empty() ? -1 : std::stoll(holder);
  };
  ASSERT_TRUE(Eventually([&] { return full_snapshot_revision() > 0; }, std::chrono::seconds(60)));
  const int64_t first_full = full_snapshot_revision();
  NumberedWriter writer(ClientUrls(3), "/compaction/");
  ASSERT_TRUE(writer.WriteSome(300).ok());
  writer.Start(std::chrono::milliseconds(50));

  // The Job's arguments, read while it exists (the controller deletes it once it has completed).
  std::vector<std::string> job_args;
  auto compaction_condition = [&]() -> std::string {
    if (auto job = admin_->Get({"batch/v1", "jobs", "default", "etcd-main-compactor", ""}, log);
        job.ok() && job_args.empty()) {
      for (const Value& container : FieldList(*job, {"spec", "template", "spec", "containers"})) {
        for (const Value& arg : FieldList(container, {"args"})) job_args.push_back(arg.string_value());
      }
    }
    for (const Value& condition : FieldList(Etcd(), {"status", "conditions"})) {
      if (TextAt(condition, {"type"}) == "LastSnapshotCompactionSucceeded")
        return TextAt(condition, {"status"}) + "/" + TextAt(condition, {"reason"});
    }
    return "";
  };
  ASSERT_TRUE(Eventually([&] { return compaction_condition() == "True/None"; }, std::chrono::seconds(180),
                         std::chrono::seconds(1)))
      << compaction_condition() << "\n"
      << Describe() << Slurp(ControllerLog(0));
  // Deleted in the foreground: kube-controller-manager's garbage collector removes its Pod, then the Job.
  EXPECT_TRUE(Eventually(
      [&] {
        auto job = admin_->Get({"batch/v1", "jobs", "default", "etcd-main-compactor", ""}, log);
        return !job.ok() && job.error().code == ErrorCode::kNotFound;
      },
      std::chrono::seconds(60)));
  const std::vector<std::string> performed =
      SucceededSteps(0, {"CreateCompactionJob", "DeleteCompactionJob"});
  ASSERT_GE(performed.size(), 2u) << ::testing::PrintToString(performed);
  EXPECT_EQ(performed[0], "CreateCompactionJob etcd-main-compactor") << ::testing::PrintToString(performed);
  EXPECT_EQ(performed[1], "DeleteCompactionJob etcd-main-compactor") << ::testing::PrintToString(performed);

  // The Job's own answer, and what it left: a full snapshot at the revision
  // the Lease holds now, past the writes the deltas held when it ran.
  std::string compacted;
  for (const auto& pod : fs::directory_iterator(dir_->path() + "/node/pods")) {
    if (pod.path().filename().string().starts_with("etcd-main-compactor-"))
      compacted += Slurp(pod.path().string() + "/compact-backup.log");
  }
  auto outcome = ParseJson(compacted.substr(0, compacted.find('\n')));
  ASSERT_TRUE(outcome.ok()) << compacted;
  EXPECT_GT(ValueAt(*outcome, {"deltas"})->int_value(), 0) << compacted;
  const int64_t revision = ValueAt(*outcome, {"revision"})->int_value();
  StoreConfig config;
  config.provider = "Local";
  config.container = dir_->path() + "/node/hostpath/etc/gardener/local-backupbuckets/e2e-backups";
  config.prefix = "etcd-main";
  auto objects = OpenObjectStore(config);
  ASSERT_TRUE(objects.ok()) << objects.error().message;
  auto listing = BackupStore(std::move(*objects)).List();
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  bool stored = false;
  uint64_t cluster_id = 0;
  for (const StoredSnapshot& snapshot : listing->snapshots) {
    stored = stored || snapshot.name == TextAt(*outcome, {"snapshot"});
    cluster_id = std::max(cluster_id, snapshot.cluster_id);
  }
  EXPECT_TRUE(stored) << compacted;
  // The Job compacts the history of the cluster a member answered for: no other cluster's on the prefix.
  ASSERT_NE(cluster_id, 0u) << "the members' snapshots are marked with their cluster";
  EXPECT_NE(std::find(job_args.begin(), job_args.end(), "--cluster-id=" + MemberIdHex(cluster_id)),
            job_args.end())
      << ::testing::PrintToString(job_args);
  EXPECT_NE(std::find_if(job_args.begin(), job_args.end(),
                         [](const std::string& arg) { return arg.starts_with("--max-revision="); }),
            job_args.end())
      << ::testing::PrintToString(job_args);
  // The full-snapshot Lease names a snapshot a compaction Job stored: the
  // members' collection keeps what it replaced while it is the newest full.
  std::set<std::string> stored_by_jobs;
  std::istringstream lines(compacted);
  for (std::string line; std::getline(lines, line);) {
    auto answer = ParseJson(line);
    if (answer.ok()) stored_by_jobs.insert(TextAt(*answer, {"snapshot"}));
  }
  auto full_lease =
      admin_->Get({"coordination.k8s.io/v1", "leases", "default", "etcd-main-full-snap", ""}, log);
  ASSERT_TRUE(full_lease.ok()) << full_lease.error().message;
  const std::string named = TextAt(*full_lease, {"metadata", "annotations", "ruleplane.dev/compacted-full"});
  EXPECT_TRUE(!named.empty() && stored_by_jobs.contains(named)) << named << "\n" << compacted;
  EXPECT_GE(revision, first_full + 200) << compacted;
  EXPECT_GE(full_snapshot_revision(), revision);
  writer.Stop();
  ExpectNoKeyLostAndMembersAgree(writer, 3);
}

// etcd-druid issues 420 and 886: spec.etcd.peerUrlTls set on a running
// plaintext Etcd. The controller applies it in full health, the
// configuration before the StatefulSet; the StatefulSet controller's rolling
// update restarts one member at a time, and member-init moves each to its
// https peer URL in the live cluster before its etcd starts. A writer writes
// throughout: no acknowledged key is lost, the members agree, every member is
// listed at https and its agent says tls-enabled.
TEST_F(EtcdLifecycle, PeerTlsSetOnARunningEtcdMovesEachMemberToHttpsWithoutLosingAWrite) {
  StartController(0);
  CreateEtcd(3);
  ASSERT_TRUE(Eventually([&] { return HealthyWith(3); }, std::chrono::seconds(180), std::chrono::seconds(1)))
      << Describe();
  Status secrets = world_->CreateTlsSecrets();
  ASSERT_TRUE(secrets.ok()) << secrets.error().message;
  NumberedWriter writer(ClientUrls(3), "/peer-tls/");
  writer.Start(std::chrono::milliseconds(20));
  auto peer_tls = ParseJson(R"({"spec":{"etcd":{"peerUrlTls":{"tlsCASecretRef":{"name":"etcd-peer-ca"},)"
                            R"("serverTLSSecretRef":{"name":"etcd-peer-server-tls"}}}}})");
  ASSERT_TRUE(peer_tls.ok());
  RequestLog log;
  ASSERT_TRUE(admin_->MergePatch(kEtcdResource, *peer_tls, log).ok());

  EtcdClient client(EtcdClientConfig{ClientUrls(3), {}, std::chrono::seconds(5)});
  auto all_at_https = [&] {
    RequestLog reads;
    auto members = client.MemberList(reads);
    if (!members.ok() || members->size() != 3) return false;
    for (const EtcdMember& member : *members)
      if (member.peer_urls.size() != 1 || member.peer_urls[0].rfind("https://", 0) != 0) return false;
    for (int i = 0; i < 3; ++i) {
      auto lease = admin_->Get(
          {"coordination.k8s.io/v1", "leases", "default", "etcd-main-" + std::to_string(i), ""}, reads);
      if (!lease.ok() ||
          TextAt(*lease, {"metadata", "annotations", "member.etcd.gardener.cloud/tls-enabled"}) != "true")
        return false;
    }
    return true;
  };
  ASSERT_TRUE(Eventually([&] { return all_at_https() && HealthyWith(3); }, std::chrono::seconds(420),
                         std::chrono::seconds(1)))
      << Describe() << Slurp(ControllerLog(0));
  writer.Stop();
  ExpectNoKeyLostAndMembersAgree(writer, 3);
  // The controller's journal, as it logs each step: the configuration first, then the StatefulSet.
  const std::vector<std::string> steps = StepLines(Slurp(ControllerLog(0)));
  const auto config_at = std::find(steps.begin(), steps.end(), "ApplyEtcdConfigMap etcd-main succeeded");
  const auto spec_at = std::find(steps.begin(), steps.end(), "ApplyStatefulSetSpec etcd-main succeeded");
  ASSERT_NE(spec_at, steps.end()) << Slurp(ControllerLog(0));
  EXPECT_LT(config_at, spec_at) << "the StatefulSet rolled before the configuration changed";
}

void EtcdLifecycle::LoseQuorumAndRecoverAfterAnApproval(const std::string& store, bool wipe_one_first) {
  StartController(0, "", {"--param", "notReadyGracePeriod=10s", "--param", "unknownGracePeriod=5s"});
  CreateEtcd(3, store);
  ASSERT_TRUE(Eventually([&] { return HealthyWith(3); }, std::chrono::seconds(180), std::chrono::seconds(1)))
      << Describe();
  NumberedWriter writer(ClientUrls(3), "/quorum/", world_->ClientTls());
  writer.Start(std::chrono::milliseconds(20));
  RequestLog log;
  // Backups with the writer's keys: a delta after some writes (deltaSnapshotPeriod 5s).
  auto delta_revision = [&] {
    auto lease =
        admin_->Get({"coordination.k8s.io/v1", "leases", "default", "etcd-main-delta-snap", ""}, log);
    const std::string holder = lease.ok() ? TextAt(*lease, {"spec", "holderIdentity"}) : "";
    return holder.empty() ? int64_t{0} : std::stoll(holder);
  };
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const int64_t written = writer.acknowledged().empty() ? 0 : writer.acknowledged().back().revision;
  ASSERT_TRUE(Eventually([&] { return delta_revision() >= written; }, std::chrono::seconds(30)))
      << delta_revision() << " < " << written;
  if (wipe_one_first) {
    // One data directory wiped while its Pod is away: member-init removes
    // the member, adds it again and restores it from the store's full
    // snapshot; it catches up from the leader.
    ASSERT_NO_FATAL_FAILURE(WipeDataDirectoryWhileItsPodIsAway("etcd-main-2"));
    ASSERT_TRUE(Eventually([&] { return agent_->Pid("etcd-main-2", "etcd") != 0 && HealthyWith(3); },
                           std::chrono::seconds(120), std::chrono::seconds(1)))
        << Describe();
    const std::string init_log = Slurp(dir_->path() + "/node/pods/etcd-main-2/member-init.log");
    EXPECT_NE(init_log.find("RestoreFullSnapshot etcd-main-2  done"), std::string::npos) << init_log;
  }

  for (const char* pod : {"etcd-main-1", "etcd-main-2"})
    ASSERT_NO_FATAL_FAILURE(WipeDataDirectoryWhileItsPodIsAway(pod));

  auto operation = [&](const char* field) { return TextAt(Etcd(), {"status", "lastOperation", field}); };
  ASSERT_TRUE(Eventually([&] { return operation("state") == "AwaitingApproval"; }, std::chrono::seconds(120),
                         std::chrono::seconds(1)))
      << Describe();
  const Value bound = *ValueAt(Etcd(), {"status", "lastOperation", "dataLossBound"});
  const int64_t backup_revision = ValueAt(bound, {"backupRevision"})->int_value();
  EXPECT_GE(backup_revision, written) << FormatJson(bound);
  // The survivor, etcd-main-0, answered the member list without a leader: its
  // reading counts, checked against the cluster it answers for.
  EXPECT_TRUE(ValueAt(bound, {"membershipChecked"})->bool_value()) << FormatJson(bound);
  EXPECT_GE(ValueAt(bound, {"observedRevision"})->int_value(), written) << FormatJson(bound);
  // Nothing disruptive while it waits, from evidence: three more runs of the
  // controller held the scale to 0 back (their runIDs on its log lines of
  // that step), and its journal, which records a step before it acts, has
  // no disruptive step since; the StatefulSet keeps its replicas.
  const std::set<std::string> disruptive = {
      "ScaleStatefulSet", "DeletePod",    "ApplyStatefulSetSpec", "DefragmentMember",
      "MoveLeader",       "ResetDataDir", "RestoreFullSnapshot",  "ApplyIncrementalSnapshots",
      "RemoveMember"};
  const std::vector<std::string> performed_before = SucceededSteps(0, disruptive);
  auto runs_holding_the_scale = [&] {
    std::set<std::string> runs;
    std::istringstream lines(Slurp(ControllerLog(0)));
    for (std::string line; std::getline(lines, line);) {
      auto entry = ParseJson(line);
      if (entry.ok() && TextAt(*entry, {"action"}) == "ScaleStatefulSet" &&
          TextAt(*entry, {"state"}) == "pending")
        runs.insert(TextAt(*entry, {"runID"}));
    }
    return runs.size();
  };
  const size_t held = runs_holding_the_scale();
  ASSERT_TRUE(Eventually([&] { return runs_holding_the_scale() >= held + 3; }, std::chrono::seconds(60)))
      << Slurp(ControllerLog(0));
  EXPECT_EQ(SucceededSteps(0, disruptive), performed_before) << "a disruptive step while it waited";
  auto statefulset = admin_->Get({"apps/v1", "statefulsets", "default", kEtcd, ""}, log);
  ASSERT_TRUE(statefulset.ok());
  EXPECT_EQ(ValueAt(*statefulset, {"spec", "replicas"})->int_value(), 3);
  writer.Stop();
  // The members' Leases count as Ready for notReadyGracePeriod after their
  // last renewal: the status shows the lost quorum before the approval, so
  // that the healthy status awaited after it is the recovered cluster's
  // (otherwise the wait could end at once, before any restore).
  ASSERT_TRUE(Eventually([&] { return !HealthyWith(3); }, std::chrono::seconds(60), std::chrono::seconds(1)))
      << Describe();

  ASSERT_TRUE(admin_
                  ->MergePatch(
                      kEtcdResource,
                      Value::MakeMap(
                          {{Value::String("metadata"),
                            Value::MakeMap({{Value::String("annotations"),
                                             Value::MakeMap({{Value::String("ruleplane.dev/approve-plan"),
                                                              Value::String(operation("planDigest"))}})}})}}),
                      log)
                  .ok());
  // Healthy from the restored cluster: the status can show three Ready
  // members for a moment from the Leases the plan re-created, before the
  // first member restored, so the restore is awaited too.
  const std::string first_init = dir_->path() + "/node/pods/etcd-main-0/member-init.log";
  ASSERT_TRUE(Eventually(
      [&] { return Contains(Slurp(first_init), "RestoreFullSnapshot etcd-main-0  done") && HealthyWith(3); },
      std::chrono::seconds(300), std::chrono::seconds(1)))
      << Slurp(first_init) << Describe();
  ExpectNoKeyLostAndMembersAgree(writer, 3, backup_revision);
  // The recovery is over: its approval and marker are retired, so that
  // neither approves nor re-creates a later incident.
  EXPECT_TRUE(Eventually(
      [&] {
        const Value etcd = Etcd();
        return ValueAt(etcd, {"metadata", "annotations", "ruleplane.dev/approve-plan"}) == nullptr &&
               ValueAt(etcd, {"metadata", "annotations", "ruleplane.dev/rebootstrap"}) == nullptr;
      },
      std::chrono::seconds(60), std::chrono::seconds(1)))
      << Describe();
}

}  // namespace
}  // namespace ruleplane::testing
