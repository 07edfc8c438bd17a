// `ruleplane controller` acting safely against a real kube-apiserver, with
// what was written read from the API server's audit log:
//   - a replica paused past its lease, whose Lease another holder took
//     meanwhile, exits at once when it runs again and writes nothing more;
//   - a quorum-loss plan waiting for its pods to go does not hold the only
//     worker: another Etcd is reconciled meanwhile, and the plan goes on once
//     the pods are gone;
//   - killed right after a disruptive step (a failure point), the controller
//     has already put the step's time on the Etcd's status, and a successor
//     keeps it there;
//   - a disruptive step's time written by a replica whose clock is behind
//     holds the next disruptive step for a full interval all the same;
//   - a --dry-run replica beside an acting one takes no part in leader
//     election: it writes nothing but Events, and the acting one acts.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "engine/common/json_value.h"
#include "engine/common/time_util.h"
#include "platform/http_client.h"
#include "platform/process.h"
#include "tests/support/audit_log.h"
#include "tests/support/kube_objects.h"
#include "tests/support/kube_test_bed.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

const KubeResource kEtcd{"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""};
const KubeResource kStatefulSet{"apps/v1", "statefulsets", "default", "etcd-main", ""};

// The user `user` bound to cluster-admin, as a replica's ServiceAccount
// is bound to its Role; once the authorizer sees the binding.
Status BindController(KubeClient& admin, const KubeCluster& kube, RequestLog& log,
                      const std::string& user = "controller") {
  auto binding = ParseJson(R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding",)"
                           R"("metadata":{"name":")" +
                           user +
                           R"(-admin"},"roleRef":{"apiGroup":)"
                           R"("rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},)"
                           R"("subjects":[{"kind":"User","name":")" +
                           user + R"("}]})");
  auto created =
      admin.Create({"rbac.authorization.k8s.io/v1", "clusterrolebindings", "", "", ""}, *binding, log);
  if (!created.ok()) return created.error();
  KubeClient controller(kube.ConfigFor(user));
  if (!Eventually([&] { return controller.Get(kEtcd, log).ok(); }, std::chrono::seconds(10)))
    return Error{ErrorCode::kPermissionDenied, "the controller user cannot read the Etcd", {}};
  return {};
}

std::string Text(KubeClient& client, const KubeResource& resource,
                 std::initializer_list<std::string_view> path) {
  RequestLog log;
  auto object = client.Get(resource, log);
  const Value* value = object.ok() ? ValueAt(*object, path) : nullptr;
  return value != nullptr && value->is_string() ? value->string_value() : "";
}

int64_t Replicas(KubeClient& client, const KubeResource& statefulset) {
  RequestLog log;
  auto object = client.Get(statefulset, log);
  const Value* count = object.ok() ? ValueAt(*object, {"spec", "replicas"}) : nullptr;
  return count != nullptr && count->is_int() ? count->int_value() : -1;
}

// A replica as `user` (its journal <dir>/journal-<user>.db, its log
// <dir>/<user>.log), electing through default/ruleplane-controller with a
// short Lease (3 s / 2 s / 1 s), resync every second; `more` flags after those.
Result<ChildProcess> StartReplica(const KubeTestBed& bed, const std::string& user,
                                  const std::vector<std::string>& more) {
  ControllerOptions options{.name = user,
                            .user = user,
                            .flags = {"--resync-period", "1", "--leader-elect-resource-namespace", "default",
                                      "--leader-elect-lease-duration", "3", "--leader-elect-renew-deadline",
                                      "2", "--leader-elect-retry-period", "1"}};
  options.flags.insert(options.flags.end(), more.begin(), more.end());
  auto started = bed.StartController(options);
  if (!started.ok()) return started.error();
  return std::move(started->process);
}

// The controller's writes that the API server carried out, as the audit log has them.
std::vector<AuditEvent> WritesBy(const std::string& audit_log, const std::string& user) {
  std::vector<AuditEvent> writes;
  for (const AuditEvent& event : ReadAuditLog(audit_log)) {
    if (event.user == user && event.Succeeded()) writes.push_back(event);
  }
  return writes;
}

TEST(ControllerSafety, AReplicaPausedPastItsLeaseThatWasTakenOverExitsAndWritesNothingMore) {
  TempDir dir("controller-deposed");
  auto bed = KubeTestBed::Start(
      dir.path(), {.cluster = {.users = {"controller"}, .audit_log = true}, .example = "quorum-lost.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeCluster& kube = (*bed)->kube();
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();
  ASSERT_TRUE(BindController(admin, kube, log).ok());

  // A quorum-loss recovery (no approval needed), which scales to 0 and then
  // waits for the pods: no kubelet here removes them.
  const std::string controller_log = dir.path() + "/controller.log";
  auto controller = StartReplica(**bed, "controller", {"--auto-recover-quorum-loss"});
  ASSERT_TRUE(controller.ok()) << controller.error().message;
  ASSERT_TRUE(Eventually([&] { return Replicas(admin, kStatefulSet) == 0; }, std::chrono::seconds(60)))
      << Slurp(controller_log);
  EXPECT_TRUE(Eventually(
      [&] {
        return Text(admin, kEtcd, {"status", "lastOperation", "description"}).find("WaitForPodsDeleted") !=
               std::string::npos;
      },
      std::chrono::seconds(30)))
      << "the status says the plan waits for the pods\n"
      << Slurp(controller_log);

  // Paused (a long GC pause, a partition) past its lease; meanwhile another
  // holder takes the Lease, and the pods the plan waited for are gone.
  controller->Kill(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::seconds(4));
  const KubeResource lease{"coordination.k8s.io/v1", "leases", "default", "ruleplane-controller", ""};
  auto current = admin.Get(lease, log);
  ASSERT_TRUE(current.ok()) << current.error().message;
  const std::string now = FormatMicroTime(std::chrono::system_clock::now());
  auto taken = admin.MergePatch(
      lease,
      FencedMergePatch(ResourceVersionOf(*current), "spec",
                       Value::MakeMap({{Value::String("holderIdentity"), Value::String("usurper")},
                                       {Value::String("leaseDurationSeconds"), Value::Int(60)},
                                       {Value::String("acquireTime"), Value::String(now)},
                                       {Value::String("renewTime"), Value::String(now)}})),
      log);
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  for (const char* pod : {"etcd-main-0", "etcd-main-1", "etcd-main-2"})
    ASSERT_TRUE(admin.Delete({"v1", "pods", "default", pod, ""}, {}, 0, log).ok());

  controller->Kill(SIGCONT);
  const auto continued = std::chrono::steady_clock::now();
  ASSERT_TRUE(Eventually([&] { return !controller->running(); }, std::chrono::seconds(20)))
      << Slurp(controller_log);
  EXPECT_LT(std::chrono::steady_clock::now() - continued, std::chrono::seconds(5)) << "it exits promptly";
  EXPECT_EQ(controller->Stop(), 1) << Slurp(controller_log);

  // From the audit log: the controller's writes before the takeover (the
  // scale, its Lease renewals), and none carried out after it.
  std::string takeover;
  for (const AuditEvent& event : ReadAuditLog(kube.audit_log_path())) {
    if (event.user == "admin" && event.resource == "leases" && event.name == "ruleplane-controller" &&
        event.verb == "patch" && event.Succeeded())
      takeover = event.received;
  }
  ASSERT_FALSE(takeover.empty()) << "the takeover is in the audit log";
  bool scaled = false;
  std::string after;
  for (const AuditEvent& event : WritesBy(kube.audit_log_path(), "controller")) {
    scaled |= event.resource == "statefulsets" && event.subresource == "scale" && event.received < takeover;
    if (event.received >= takeover) after += event.Describe() + "\n";
  }
  EXPECT_TRUE(scaled) << "the audit log has the controller's writes";
  EXPECT_EQ(after, "") << "written by the deposed controller after the takeover at " << takeover << "\n"
                       << Slurp(controller_log);
}

TEST(ControllerSafety, AQuorumLossPlanWaitingForItsPodsDoesNotHoldTheOnlyWorker) {
  TempDir dir("controller-waiting");
  auto bed = KubeTestBed::Start(dir.path(), {.example = "quorum-lost.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();
  // The controller takes an Etcd once it is labelled complete: an Etcd whose
  // objects are still being created one by one here is not reconciled half made.
  auto complete = [&](const std::string& namespace_name) {
    return admin.MergePatch({"druid.gardener.cloud/v1alpha1", "etcds", namespace_name, "etcd-main", ""},
                            *ParseJson(R"({"metadata":{"labels":{"complete":"true"}}})"), log);
  };
  ASSERT_TRUE(complete("default").ok());
  auto controller = (*bed)->StartController(
      {.namespace_name = "",
       .flags = {"--all-namespaces", "--selector", "complete=true", "--workers", "1", "--allow-disruptive",
                 "--auto-recover-quorum-loss", "--leader-elect", "false", "--resync-period", "1"}});
  ASSERT_TRUE(controller.ok()) << controller.error().message;
  const std::string& controller_log = controller->log;
  ASSERT_TRUE(Eventually([&] { return Replicas(admin, kStatefulSet) == 0; }, std::chrono::seconds(60)))
      << Slurp(controller_log);

  // Another Etcd, elsewhere, needs a scale-up while the first waits for its pods.
  auto other_namespace = ParseJson(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"other"}})");
  ASSERT_TRUE(admin.Create({"v1", "namespaces", "", "", ""}, *other_namespace, log).ok());
  ASSERT_TRUE(InstallEtcdCrd(admin, log, "other").ok());
  auto created = CreateExampleObjects(admin, ExamplePath("scale-up.json"), log, "other");
  ASSERT_TRUE(created.ok()) << created.error().message;
  ASSERT_TRUE(complete("other").ok());
  const KubeResource other{"apps/v1", "statefulsets", "other", "etcd-main", ""};
  EXPECT_TRUE(Eventually([&] { return Replicas(admin, other) == 5; }, std::chrono::seconds(60)))
      << "the other Etcd is reconciled while the first waits\n"
      << Slurp(controller_log);
  EXPECT_NE(Text(admin, kEtcd, {"status", "lastOperation", "description"}).find("WaitForPodsDeleted"),
            std::string::npos)
      << "the first still waits, and says so";

  // The pods go (no kubelet here to do it): the plan goes on from a fresh observation.
  for (const char* pod : {"etcd-main-0", "etcd-main-1", "etcd-main-2"})
    ASSERT_TRUE(admin.Delete({"v1", "pods", "default", pod, ""}, {}, 0, log).ok());
  EXPECT_TRUE(Eventually(
      [&] {
        return !Text(admin, kEtcd, {"metadata", "annotations", "ruleplane.dev/rebootstrap"}).empty();
      },
      std::chrono::seconds(30)))
      << Slurp(controller_log);
}

TEST(ControllerSafety, KilledRightAfterADisruptiveStepTheStepsTimeIsAlreadyOnTheStatus) {
  TempDir dir("controller-killed");
  auto bed = KubeTestBed::Start(dir.path(), {.example = "scale-up.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  auto run = [&](const std::string& name,
                 const std::vector<std::string>& environment) -> Result<ChildProcess> {
    auto started =
        (*bed)->StartController({.name = name,
                                 .journal = dir.path() + "/journal.db",
                                 .flags = {"--allow-disruptive", "--leader-elect", "false",
                                           "--min-disruptive-interval", "3600", "--resync-period", "1"},
                                 .environment = environment});
    if (!started.ok()) return started.error();
    return std::move(started->process);
  };
  auto killed = run("killed", {"RULEPLANE_FAILPOINT=after:ScaleStatefulSet"});
  ASSERT_TRUE(killed.ok()) << killed.error().message;
  ASSERT_TRUE(Eventually([&] { return !killed->running(); }, std::chrono::seconds(60)))
      << Slurp(dir.path() + "/killed.log");
  ASSERT_EQ(killed->Stop(), 75) << "the failure point: " << Slurp(dir.path() + "/killed.log");
  EXPECT_EQ(Replicas(admin, kStatefulSet), 5) << "the step took effect";
  EXPECT_FALSE(Text(admin, kEtcd, {"status", "lastOperation", "lastDisruptiveStepTime"}).empty())
      << "its time was recorded before it acted";
  EXPECT_EQ(Text(admin, kEtcd, {"status", "lastOperation", "lastDisruptiveStep", "action"}),
            "ScaleStatefulSet");

  // A successor writes its own status after its plan and keeps the time where the gate reads it.
  const std::string recorded = Text(admin, kEtcd, {"status", "lastOperation", "lastDisruptiveStepTime"});
  ASSERT_EQ(Text(admin, kEtcd, {"status", "lastOperation", "planDigest"}), "")
      << "no status after the plan yet";
  auto successor = run("successor", {});
  ASSERT_TRUE(successor.ok()) << successor.error().message;
  ASSERT_TRUE(Eventually(
      [&] {
        return !Text(admin, kEtcd, {"status", "lastOperation", "planDigest"}).empty();
      },
      std::chrono::seconds(30)))
      << Slurp(dir.path() + "/successor.log");
  EXPECT_EQ(Text(admin, kEtcd, {"status", "lastOperation", "lastDisruptiveStepTime"}), recorded)
      << Slurp(dir.path() + "/successor.log");
}

// --min-disruptive-interval across replicas whose clocks differ: the status
// says the last disruptive step was 25 s ago by this machine's clock, as a
// replica whose clock is 15 s behind writes it 10 s after its step. A
// controller that starts now holds the next one (the scale-up) for a full
// interval (20 s) from when it first saw that time, not for 20 - 25 s: from
// the audit log, the StatefulSet is written no sooner than 20 s after the
// controller started, and it is written.
TEST(ControllerSafety, ADisruptiveStepTimeWrittenByAReplicaWhoseClockIsBehindHoldsTheNextForAFullInterval) {
  TempDir dir("controller-interval-skew");
  auto bed = KubeTestBed::Start(
      dir.path(), {.cluster = {.users = {"controller"}, .audit_log = true}, .example = "scale-up.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeCluster& kube = (*bed)->kube();
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();
  ASSERT_TRUE(BindController(admin, kube, log).ok());
  auto written = TimestampFromUnixSeconds(std::time(nullptr) - 25);
  ASSERT_TRUE(written.ok());
  auto status = admin.MergePatch(
      {"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", "status"},
      Value::MakeMap({{Value::String("status"),
                       Value::MakeMap({{Value::String("lastOperation"),
                                        Value::MakeMap({{Value::String("lastDisruptiveStepTime"),
                                                         Value::String(FormatRfc3339(*written))}})}})}}),
      log);
  ASSERT_TRUE(status.ok()) << status.error().message;

  auto started = TimestampFromUnixSeconds(std::time(nullptr));
  ASSERT_TRUE(started.ok());
  auto controller =
      StartReplica(**bed, "controller",
                   {"--allow-disruptive", "--leader-elect", "false", "--min-disruptive-interval", "20"});
  ASSERT_TRUE(controller.ok()) << controller.error().message;
  const std::string controller_log = dir.path() + "/controller.log";
  EXPECT_TRUE(Eventually(
      [&] {
        return Text(admin, kEtcd, {"status", "lastOperation", "description"}).find("the next not before") !=
               std::string::npos;
      },
      std::chrono::seconds(15)))
      << "the scale-up waits, and says so\n"
      << Slurp(controller_log);
  ASSERT_TRUE(Eventually([&] { return Replicas(admin, kStatefulSet) == 5; }, std::chrono::seconds(60)))
      << Slurp(controller_log);

  std::string scaled_at;
  for (const AuditEvent& event : WritesBy(kube.audit_log_path(), "controller")) {
    if (event.resource == "statefulsets" && event.subresource == "scale" && scaled_at.empty())
      scaled_at = event.received;
  }
  ASSERT_FALSE(scaled_at.empty()) << "the audit log has the controller's scale";
  auto scaled = ParseRfc3339(scaled_at);
  ASSERT_TRUE(scaled.ok()) << scaled_at;
  EXPECT_GE(scaled->seconds - started->seconds, 20)
      << "scaled at " << scaled_at << ", the controller started at " << FormatRfc3339(*started) << "\n"
      << Slurp(controller_log);
}

// A --dry-run replica started first, with leader election left on (its
// default), beside a replica that acts: the dry run never takes the Lease
// (it would keep the acting replica from acting for as long as it runs),
// so the acting one scales the StatefulSet; from the audit log, the dry run
// wrote nothing but Events.
TEST(ControllerSafety, ADryRunReplicaTakesNoPartInLeaderElectionAndWritesOnlyEvents) {
  TempDir dir("controller-dry-run-elect");
  auto bed = KubeTestBed::Start(
      dir.path(),
      {.cluster = {.users = {"controller", "dry-run"}, .audit_log = true}, .example = "scale-up.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeCluster& kube = (*bed)->kube();
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();
  ASSERT_TRUE(BindController(admin, kube, log).ok());
  ASSERT_TRUE(BindController(admin, kube, log, "dry-run").ok());
  auto dry_run = StartReplica(**bed, "dry-run", {"--dry-run", "--allow-disruptive"});
  ASSERT_TRUE(dry_run.ok()) << dry_run.error().message;
  auto dry_run_events = [&] {
    auto events = admin.List({"v1", "events", "default", "", ""}, "", log, "reason=DryRun");
    return events.ok() ? ValueAt(*events, {"items"})->list_value().size() : size_t{0};
  };
  ASSERT_TRUE(Eventually([&] { return dry_run_events() > 0; }, std::chrono::seconds(30)))
      << Slurp(dir.path() + "/dry-run.log");
  auto acting = StartReplica(**bed, "controller", {"--allow-disruptive"});
  ASSERT_TRUE(acting.ok()) << acting.error().message;
  EXPECT_TRUE(Eventually([&] { return Replicas(admin, kStatefulSet) == 5; }, std::chrono::seconds(30)))
      << "the acting replica scales\n"
      << Slurp(dir.path() + "/controller.log");
  EXPECT_TRUE(dry_run->running()) << Slurp(dir.path() + "/dry-run.log");

  std::string not_events;
  for (const AuditEvent& event : WritesBy(kube.audit_log_path(), "dry-run"))
    if (event.resource != "events") not_events += event.Describe() + "\n";
  EXPECT_EQ(not_events, "") << "written by the dry-run replica";
}

// The per-request guard alone: the elector hangs before its first renewal
// (a failure point), so it neither renews nor exits the process, and the
// workers go on reconciling. Once the renew deadline (2 s) has passed since
// the last renewal, their plans are cancelled before a step and any request
// is refused before it is sent (both ask whether the Lease was renewed within
// the deadline): the controller's log has the refusals, the process still runs, and the
// API server's audit log has no write of the controller after that deadline.
TEST(ControllerSafety, WithItsElectorHungTheWorkersSendNothingPastTheRenewDeadline) {
  TempDir dir("controller-guard");
  auto bed = KubeTestBed::Start(
      dir.path(), {.cluster = {.users = {"controller"}, .audit_log = true}, .example = "quorum-lost.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeCluster& kube = (*bed)->kube();
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();
  ASSERT_TRUE(BindController(admin, kube, log).ok());
  ControllerOptions options{.name = "controller",
                            .user = "controller",
                            .flags = {"--resync-period", "1", "--leader-elect-resource-namespace", "default",
                                      "--leader-elect-lease-duration", "3", "--leader-elect-renew-deadline",
                                      "2", "--leader-elect-retry-period", "1", "--auto-recover-quorum-loss"},
                            .environment = {"RULEPLANE_FAILPOINT=leader-election:renew=hang"}};
  auto controller = (*bed)->StartController(options);
  ASSERT_TRUE(controller.ok()) << controller.error().message;
  // A plan is cancelled between steps, and each request asks the guard: both read the renew deadline.
  auto refusals = [&] {
    const std::string text = Slurp(controller->log);
    size_t count = 0;
    for (const std::string refused : {"does not hold the lease", "cancelled before step"}) {
      for (size_t at = text.find(refused); at != std::string::npos; at = text.find(refused, at + 1)) ++count;
    }
    return count;
  };
  ASSERT_TRUE(Eventually([&] { return refusals() > 0; }, std::chrono::seconds(60))) << Slurp(controller->log);
  // More work, which would write (the pods the recovery waits for are gone): refused as well.
  const size_t before = refusals();
  for (const char* pod : {"etcd-main-0", "etcd-main-1", "etcd-main-2"})
    ASSERT_TRUE(admin.Delete({"v1", "pods", "default", pod, ""}, {}, 0, log).ok());
  ASSERT_TRUE(Eventually([&] { return refusals() > before + 2; }, std::chrono::seconds(30)))
      << Slurp(controller->log);
  EXPECT_TRUE(controller->process.running()) << "the elector exited: the guard was not alone";
  controller->process.Stop();

  // The controller's last Lease write is its last renewal; nothing of its
  // reached the API server later than the renew deadline after it (plus a
  // second for a request let through just before the deadline).
  std::string renewed;
  const std::vector<AuditEvent> writes = WritesBy(kube.audit_log_path(), "controller");
  for (const AuditEvent& event : writes) {
    if (event.resource == "leases" && event.name == "ruleplane-controller") renewed = event.received;
  }
  ASSERT_FALSE(renewed.empty()) << "the controller never held the Lease";
  auto renewed_at = ParseRfc3339(renewed);
  ASSERT_TRUE(renewed_at.ok()) << renewed;
  std::string late;
  for (const AuditEvent& event : writes) {
    auto at = ParseRfc3339(event.received);
    ASSERT_TRUE(at.ok()) << event.received;
    if (at->seconds - renewed_at->seconds > 3) late += event.Describe() + "\n";
  }
  EXPECT_EQ(late, "") << "written after the renew deadline, at the last renewal " << renewed;
}

}  // namespace
}  // namespace ruleplane::testing
