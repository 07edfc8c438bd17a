// `ruleplane controller` against a real kube-apiserver: DEP-01's scale-up
// example created as real objects is reconciled from the watch cache (the
// StatefulSet scaled, leases and budget created) without anyone running
// `apply`; afterwards, in steady state, no object is written again; /metrics,
// /healthz and /readyz answer; SIGTERM stops it.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "adapters/kubernetes/manifests.h"
#include "adapters/kubernetes/object_fields.h"
#include "engine/common/json_value.h"
#include "platform/http_client.h"
#include "platform/process.h"
#include "tests/support/audit_log.h"
#include "tests/support/kube_objects.h"
#include "tests/support/kube_test_bed.h"
#include "tests/support/source_paths.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

// The controller's reconciles so far (every result), from its /metrics; -1
// when it does not answer. A claim that a reconcile did nothing waits for
// reconciles to have run, not for time to pass.
double ReconcilesOf(int metrics_port) {
  HttpClient http;
  auto page = http.Send("GET", "http://127.0.0.1:" + std::to_string(metrics_port) + "/metrics", "",
                        std::chrono::seconds(5));
  if (!page.ok() || page->status != 200) return -1;
  double total = 0;
  const std::string name = "\nruleplane_reconciles_total{";
  for (size_t at = page->body.find(name); at != std::string::npos; at = page->body.find(name, at + 1)) {
    const size_t value = page->body.find("} ", at);
    if (value != std::string::npos) total += std::atof(page->body.c_str() + value + 2);
  }
  return total;
}

// Successful writes (not Events) by `user` that the API server received after `since`.
std::vector<testing::AuditEvent> WritesAfter(const std::string& audit_log, const std::string& user,
                                             const std::string& since) {
  std::vector<testing::AuditEvent> writes;
  for (const testing::AuditEvent& event : testing::ReadAuditLog(audit_log)) {
    const bool write =
        event.verb == "create" || event.verb == "update" || event.verb == "patch" || event.verb == "delete";
    if (write && event.Succeeded() && event.user == user && event.resource != "events" &&
        event.received > since)
      writes.push_back(event);
  }
  return writes;
}

TEST(Controller, ReconcilesAScaleUpFromTheWatchCacheAndThenWritesNothing) {
  TempDir dir("controller");
  auto bed = KubeTestBed::Start(dir.path(), {.example = "scale-up.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();

  auto controller = (*bed)->StartController(
      {.flags = {"--allow-disruptive", "--leader-elect", "false", "--resync-period", "1"}});
  ASSERT_TRUE(controller.ok()) << controller.error().message;
  const std::string& controller_log = controller->log;
  const int port = controller->metrics_port;

  auto get = [&](const KubeResource& resource) {
    auto object = admin.Get(resource, log);
    return object.ok() ? *object : Value::Null();
  };
  const KubeResource statefulset{"apps/v1", "statefulsets", "default", "etcd-main", ""};
  const KubeResource budget{"policy/v1beta1", "poddisruptionbudgets", "default", "etcd-main", ""};
  const bool scaled = Eventually(
      [&] {
        const Value sts = get(statefulset), pdb = get(budget);
        return ValueAt(sts, {"spec", "replicas"}) != nullptr &&
               ValueAt(sts, {"spec", "replicas"})->int_value() == 5 &&
               ValueAt(pdb, {"spec", "minAvailable"}) != nullptr &&
               ValueAt(pdb, {"spec", "minAvailable"})->int_value() == 3 &&
               !get({"coordination.k8s.io/v1", "leases", "default", "etcd-main-4", ""}).is_null();
      },
      std::chrono::seconds(60));
  ASSERT_TRUE(scaled) << Slurp(controller_log);

  // The status reports the StatefulSet as etcd-druid's does (replicas: its
  // currentReplicas, which no kube-controller-manager changes here), and the
  // scale subresource reads it: what `kubectl scale` and autoscalers see.
  const KubeResource etcd{"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""};
  const std::string selector = "app.kubernetes.io/managed-by=etcd-druid,app.kubernetes.io/part-of=etcd-main";
  ASSERT_TRUE(Eventually(
      [&] {
        return TextAt(get(etcd), {"status", "selector"}) == selector;
      },
      std::chrono::seconds(30)))
      << FormatJson(get(etcd)) << Slurp(controller_log);
  const Value reported = get(etcd);
  EXPECT_EQ(ValueAt(reported, {"status", "replicas"})->int_value(), 3);
  EXPECT_EQ(ValueAt(reported, {"status", "currentReplicas"})->int_value(), 3);
  EXPECT_EQ(ValueAt(reported, {"status", "readyReplicas"})->int_value(), 3);
  EXPECT_EQ(TextAt(reported, {"status", "etcd", "name"}), "etcd-main");
  EXPECT_EQ(TextAt(reported, {"status", "lastOperation", "type"}), "Reconcile");
  EXPECT_EQ(TextAt(reported, {"status", "lastOperation", "runID"}).size(), 36u) << FormatJson(reported);
  KubeResource scale = etcd;
  scale.subresource = "scale";
  const Value scaled_view = get(scale);
  EXPECT_EQ(ValueAt(scaled_view, {"spec", "replicas"})->int_value(), 5) << FormatJson(scaled_view);
  EXPECT_EQ(ValueAt(scaled_view, {"status", "replicas"})->int_value(), 3) << FormatJson(scaled_view);
  EXPECT_EQ(TextAt(scaled_view, {"status", "selector"}), selector) << FormatJson(scaled_view);

  // Steady state: several resyncs later, nothing was written again. (The
  // example's leases were renewed 10 s before it was created and last 40 s;
  // no member agent renews them here, so this holds for about 30 s.)
  auto versions = [&] {
    std::vector<std::string> seen;
    for (const KubeResource& resource :
         {KubeResource{"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, statefulset,
          budget}) {
      const Value object = get(resource);
      const Value* version = ValueAt(object, {"metadata", "resourceVersion"});
      seen.push_back(version != nullptr ? version->string_value() : "absent");
    }
    auto leases = admin.List({"coordination.k8s.io/v1", "leases", "default", "", ""}, "", log);
    for (const Value& lease : ValueAt(*leases, {"items"})->list_value()) {
      seen.push_back(ValueAt(lease, {"metadata", "resourceVersion"})->string_value());
    }
    return seen;
  };
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the last steps' own watch events settle
  const std::vector<std::string> settled = versions();
  std::this_thread::sleep_for(std::chrono::seconds(4));
  EXPECT_EQ(versions(), settled) << Slurp(controller_log);

  HttpClient http;
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  auto metrics = http.Send("GET", base + "/metrics", "", std::chrono::seconds(5));
  ASSERT_TRUE(metrics.ok()) << metrics.error().message;
  EXPECT_EQ(metrics->status, 200);
  for (const std::string expected :
       {"ruleplane_steps_total{action=\"ScaleStatefulSet\",result=\"succeeded\"} 1",
        "ruleplane_disruptive_steps_total 1",
        "ruleplane_cluster_desired_members{etcd=\"default/etcd-main\"} 5",
        "ruleplane_reconciles_total{result=\"success\"}",
        // One list per kind the cache follows (Etcds, StatefulSets, Leases, Pods,
        // PersistentVolumeClaims, budgets, Jobs), none again.
        "ruleplane_api_requests_total{request=\"list\"} 7"}) {
    EXPECT_NE(metrics->body.find(expected), std::string::npos) << expected << "\n" << metrics->body;
  }
  for (const char* path : {"/healthz", "/readyz"}) {
    auto answer = http.Send("GET", base + path, "", std::chrono::seconds(5));
    ASSERT_TRUE(answer.ok());
    EXPECT_EQ(answer->status, 200) << path;
  }
  const std::string logged = Slurp(controller_log);
  EXPECT_NE(logged.find("\"action\":\"ScaleStatefulSet\""), std::string::npos) << logged;

  const auto stopping = std::chrono::steady_clock::now();
  EXPECT_EQ(controller->process.Stop(std::chrono::seconds(10)), 0) << Slurp(controller_log);
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::seconds(5))
      << "SIGTERM ends watches promptly";
}

// A member whose node's clock is 5 minutes behind renews its Lease every
// second: the renewTime it writes is always 5 minutes old, and the status
// rules (renewTime + leaseDurationSeconds against the controller's clock)
// would mark it LeaseExpired. The controller judges the Lease by the
// renewals it saw (ObservedTimes): the member stays Ready while renewals
// come, and is LeaseExpired once they stop.
TEST(Controller, AMemberLeaseRenewedFromANodeWhoseClockIsBehindStaysFreshUntilRenewalsStop) {
  TempDir dir("controller-skew");
  auto bed = KubeTestBed::Start(dir.path(), {.example = "pink-of-health.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();
  auto controller = (*bed)->StartController({.flags = {"--leader-elect", "false", "--resync-period", "1"}});
  ASSERT_TRUE(controller.ok()) << controller.error().message;
  const std::string& controller_log = controller->log;
  const int port = controller->metrics_port;

  const std::chrono::minutes behind(5);
  // One renewal of every member Lease, etcd-main-1's from the skewed node.
  auto renew = [&](bool skewed_one_too) {
    for (const char* member : {"etcd-main-0", "etcd-main-1", "etcd-main-2"}) {
      const bool skewed = std::string(member) == "etcd-main-1";
      if (skewed && !skewed_one_too) continue;
      const auto written = std::chrono::system_clock::now() - (skewed ? behind : std::chrono::minutes(0));
      auto patched = admin.MergePatch(
          {"coordination.k8s.io/v1", "leases", "default", member, ""},
          Value::MakeMap(
              {{Value::String("spec"),
                Value::MakeMap({{Value::String("renewTime"), Value::String(FormatMicroTime(written))}})}}),
          log);
      EXPECT_TRUE(patched.ok()) << member << ": " << patched.error().message;
    }
  };
  const KubeResource etcd{"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""};
  auto member_status = [&](const std::string& name) {
    auto object = admin.Get(etcd, log);
    if (!object.ok()) return std::string("(no Etcd)");
    for (const Value& member : FieldList(*object, {"status", "members"})) {
      if (TextAt(member, {"name"}) == name)
        return TextAt(member, {"status"}) + " " + TextAt(member, {"reason"});
    }
    return std::string("(not listed)");
  };

  ASSERT_TRUE(Eventually([&] { return ReconcilesOf(port) >= 1; }, std::chrono::seconds(30)))
      << Slurp(controller_log);
  // Renewals, with reconciles in between: each renewTime written is 5 minutes past its lease duration (40 s).
  const double reconciles_before = ReconcilesOf(port);
  for (int second = 0; second < 15; ++second) {
    renew(true);
    std::this_thread::sleep_for(std::chrono::seconds(1));  // the renewal period
    ASSERT_EQ(member_status("etcd-main-1"), "Ready LeaseSucceeded") << "after " << second << " s\n"
                                                                    << Slurp(controller_log);
  }
  EXPECT_GE(ReconcilesOf(port), reconciles_before + 10) << "the controller judged the Lease several times";

  // Its renewals stop (the others go on): it expires one lease duration later.
  EXPECT_TRUE(Eventually(
      [&] {
        renew(false);
        return member_status("etcd-main-1") == "Unknown LeaseExpired";
      },
      std::chrono::seconds(120), std::chrono::seconds(1)))
      << member_status("etcd-main-1") << "\n"
      << Slurp(controller_log);
  EXPECT_EQ(member_status("etcd-main-0"), "Ready LeaseSucceeded");
  EXPECT_EQ(controller->process.Stop(std::chrono::seconds(10)), 0) << Slurp(controller_log);
}

// Two replicas: only the one holding the Lease writes; killed, the other
// takes the Lease over and acts.
TEST(Controller, OfTwoReplicasOnlyTheLeaderActsAndTheOtherTakesOverWhenItDies) {
  TempDir dir("controllers");
  auto bed = KubeTestBed::Start(dir.path(), {.example = "scale-up.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();
  std::vector<ChildProcess> replicas;
  std::vector<int> ports;
  for (int i = 0; i < 2; ++i) {
    auto started = (*bed)->StartController(
        {.name = "controller-" + std::to_string(i),
         .flags = {"--allow-disruptive", "--resync-period", "1", "--leader-elect-lease-duration", "3",
                   "--leader-elect-renew-deadline", "2", "--leader-elect-retry-period", "1"}});
    ASSERT_TRUE(started.ok()) << started.error().message;
    ports.push_back(started->metrics_port);
    replicas.push_back(std::move(started->process));
  }
  HttpClient http;
  auto leads = [&](int i) {
    auto metrics = http.Send("GET", "http://127.0.0.1:" + std::to_string(ports[i]) + "/metrics", "",
                             std::chrono::seconds(5));
    return metrics.ok() && metrics->body.find("\nruleplane_leader 1\n") != std::string::npos;
  };
  ASSERT_TRUE(Eventually([&] { return leads(0) || leads(1); }, std::chrono::seconds(30)));
  const int leader = leads(0) ? 0 : 1, standby = 1 - leader;
  EXPECT_FALSE(leads(standby));

  const KubeResource statefulset{"apps/v1", "statefulsets", "default", "etcd-main", ""};
  auto replicas_of = [&] {
    auto sts = admin.Get(statefulset, log);
    const Value* count = sts.ok() ? ValueAt(*sts, {"spec", "replicas"}) : nullptr;
    return count != nullptr ? count->int_value() : -1;
  };
  ASSERT_TRUE(Eventually([&] { return replicas_of() == 5; }, std::chrono::seconds(30)));
  const std::string standby_log = dir.path() + "/controller-" + std::to_string(standby) + ".log";
  EXPECT_EQ(Slurp(standby_log).find("\"action\""), std::string::npos)
      << "the standby wrote: " << Slurp(standby_log);

  replicas[static_cast<size_t>(leader)].Kill(SIGKILL);
  ASSERT_TRUE(Eventually([&] { return leads(standby); }, std::chrono::seconds(30))) << Slurp(standby_log);
  // The new leader acts: a change of the desired size is carried out.
  auto patched = admin.MergePatch({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""},
                                  *ParseJson(R"({"spec":{"replicas":3}})"), log);
  ASSERT_TRUE(patched.ok()) << patched.error().message;
  EXPECT_TRUE(Eventually([&] { return Slurp(standby_log).find("\"action\"") != std::string::npos; },
                         std::chrono::seconds(30)))
      << Slurp(standby_log);
}

// deploy/ as shipped applies to the API server, and the controller acts with
// nothing but the Role it ships: the user "operator" is bound to it alone.
TEST(Controller, DeployAppliesAndTheControllerActsWithOnlyItsRole) {
  TempDir dir("controller-deploy");
  auto bed = KubeTestBed::Start(dir.path(), {.cluster = {.users = {"operator"}}});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();
  for (const char* file : {"rbac.yaml", "controller.yaml"}) {
    auto manifests = LoadManifests(std::string(SourceDir()) + "/deploy/" + file);
    ASSERT_TRUE(manifests.ok()) << manifests.error().message;
    Status applied = ApplyManifests(admin, *manifests, "default", log);
    ASSERT_TRUE(applied.ok()) << file << ": " << applied.error().message;
  }
  auto deployment = admin.Get({"apps/v1", "deployments", "default", "ruleplane-controller", ""}, log);
  ASSERT_TRUE(deployment.ok()) << deployment.error().message;
  EXPECT_EQ(ValueAt(*deployment, {"spec", "replicas"})->int_value(), 2);
  EXPECT_EQ(ValueAt(*deployment, {"spec", "template", "spec", "serviceAccountName"})->string_value(),
            "ruleplane");
  ASSERT_TRUE(ApplyManifests(admin, {RoleBinding("operator", "ruleplane")}, "default", log).ok());
  auto created = CreateExampleObjects(admin, ExamplePath("scale-up.json"), log);
  ASSERT_TRUE(created.ok()) << created.error().message;

  auto controller = (*bed)->StartController({.user = "operator", .flags = {"--allow-disruptive"}});
  ASSERT_TRUE(controller.ok()) << controller.error().message;
  const std::string& controller_log = controller->log;
  const bool scaled = Eventually(
      [&] {
        auto sts = admin.Get({"apps/v1", "statefulsets", "default", "etcd-main", ""}, log);
        return sts.ok() && ValueAt(*sts, {"spec", "replicas"})->int_value() == 5;
      },
      std::chrono::seconds(60));
  EXPECT_TRUE(scaled) << Slurp(controller_log);

  // examples/etcd.yaml applies too, and from nothing the controller creates what its members need.
  auto example = LoadManifests(std::string(SourceDir()) + "/examples/etcd.yaml");
  ASSERT_TRUE(example.ok()) << example.error().message;
  ASSERT_EQ(example->size(), 1u);
  ASSERT_TRUE(ApplyManifests(
                  admin,
                  {Value::MakeMap({{Value::String("apiVersion"), *ValueAt(example->front(), {"apiVersion"})},
                                   {Value::String("kind"), Value::String("Etcd")},
                                   {Value::String("metadata"),
                                    Value::MakeMap({{Value::String("name"), Value::String("etcd-new")}})},
                                   {Value::String("spec"), *ValueAt(example->front(), {"spec"})}})},
                  "default", log)
                  .ok());
  const bool created_components = Eventually(
      [&] {
        auto sts = admin.Get({"apps/v1", "statefulsets", "default", "etcd-new", ""}, log);
        return sts.ok() && ValueAt(*sts, {"spec", "replicas"})->int_value() == 3;
      },
      std::chrono::seconds(60));
  EXPECT_TRUE(created_components) << Slurp(controller_log);
  for (const char* name : {"etcd-new-client", "etcd-new-peer"})
    EXPECT_TRUE(admin.Get({"v1", "services", "default", name, ""}, log).ok()) << name;
  for (const char* name :
       {"etcd-new-0", "etcd-new-1", "etcd-new-2", "etcd-new-full-snap", "etcd-new-delta-snap"})
    EXPECT_TRUE(admin.Get({"coordination.k8s.io/v1", "leases", "default", name, ""}, log).ok()) << name;
  EXPECT_EQ(Slurp(controller_log).find("HTTP 403"), std::string::npos) << Slurp(controller_log);
}

// DEP-01's quorum-lost example: without an approval nothing disruptive
// happens, and the status says what waits and the data-loss bound; the
// annotation naming the plan's digest lets the re-bootstrap begin.
TEST(Controller, QuorumLossRecoveryWaitsForAnApprovalNamingThePlanDigest) {
  TempDir dir("controller-approval");
  auto bed = KubeTestBed::Start(dir.path(), {.cluster = {.audit_log = true}, .example = "quorum-lost.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();
  // The bed wrote its objects as admin before: the controller's writes are those received after this.
  const std::string started_at = FormatMicroTime(std::chrono::system_clock::now());
  auto controller = (*bed)->StartController({.flags = {"--leader-elect", "false", "--resync-period", "1"}});
  ASSERT_TRUE(controller.ok()) << controller.error().message;
  const std::string& controller_log = controller->log;

  const KubeResource etcd{"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""};
  auto text = [&](const KubeResource& resource, std::initializer_list<std::string_view> path) {
    auto object = admin.Get(resource, log);
    const Value* value = object.ok() ? ValueAt(*object, path) : nullptr;
    return value != nullptr && value->is_string() ? value->string_value() : "";
  };
  auto events_with = [&](const std::string& reason) {
    auto events = admin.List({"v1", "events", "default", "", ""}, "", log, "reason=" + reason);
    return events.ok() ? ValueAt(*events, {"items"})->list_value() : Value::List{};
  };
  ASSERT_TRUE(Eventually(
      [&] {
        return text(etcd, {"status", "lastOperation", "state"}) == "AwaitingApproval";
      },
      std::chrono::seconds(30)))
      << Slurp(controller_log);
  auto waiting = admin.Get(etcd, log);
  ASSERT_TRUE(waiting.ok());
  const std::string digest = ValueAt(*waiting, {"status", "lastOperation", "planDigest"})->string_value();
  EXPECT_EQ(digest.rfind("sha256:", 0), 0u) << digest;
  EXPECT_EQ(ValueAt(*waiting, {"status", "lastOperation", "dataLossBound", "backupRevision"})->int_value(),
            1051874)
      << "the example's delta-snap Lease";
  // The example's Pods are not reachable: no member list, and the bound says so.
  EXPECT_FALSE(
      ValueAt(*waiting, {"status", "lastOperation", "dataLossBound", "membershipChecked"})->bool_value());
  EXPECT_NE(ValueAt(*waiting, {"status", "lastOperation", "dataLossBound", "description"})
                ->string_value()
                .find("the member Leases were not checked against etcd's member list: "),
            std::string::npos)
      << FormatJson(*waiting);
  EXPECT_NE(ValueAt(*waiting, {"status", "lastOperation", "description"})->string_value().find(digest),
            std::string::npos)
      << "the status says how to approve";
  const KubeResource statefulset{"apps/v1", "statefulsets", "default", "etcd-main", ""};
  // Several reconciles run, and none wrote to the StatefulSet or deleted a Pod.
  auto reconciles_after = [&](int more) {
    const double from = ReconcilesOf(controller->metrics_port);
    return from >= 0 && Eventually([&] { return ReconcilesOf(controller->metrics_port) >= from + more; },
                                   std::chrono::seconds(30));
  };
  auto disruptive_writes = [&] {
    std::vector<std::string> found;
    for (const testing::AuditEvent& event : WritesAfter((*bed)->kube().audit_log_path(), "admin", started_at))
      if (event.resource == "statefulsets" || event.resource == "pods") found.push_back(event.Describe());
    return found;
  };
  ASSERT_TRUE(reconciles_after(3)) << Slurp(controller_log);
  EXPECT_EQ(disruptive_writes(), std::vector<std::string>{}) << "nothing disruptive without approval";
  auto sts = admin.Get(statefulset, log);
  ASSERT_TRUE(sts.ok());
  EXPECT_EQ(ValueAt(*sts, {"spec", "replicas"})->int_value(), 3);
  ASSERT_EQ(events_with("ApprovalRequired").size(), 1u) << "one Event per plan digest, not per reconcile";

  // A wrong digest approves nothing; the plan's own does.
  auto approve = [&](const std::string& value) {
    return admin.MergePatch(
        etcd,
        Value::MakeMap({{Value::String("metadata"),
                         Value::MakeMap({{Value::String("annotations"),
                                          Value::MakeMap({{Value::String("ruleplane.dev/approve-plan"),
                                                           Value::String(value)}})}})}}),
        log);
  };
  ASSERT_TRUE(approve("sha256:0000").ok());
  ASSERT_TRUE(reconciles_after(3)) << Slurp(controller_log);
  EXPECT_EQ(disruptive_writes(), std::vector<std::string>{}) << "approval of another plan";
  ASSERT_TRUE(approve(digest).ok());
  auto replicas_of = [&] {
    auto current = admin.Get(statefulset, log);
    const Value* count = current.ok() ? ValueAt(*current, {"spec", "replicas"}) : nullptr;
    return count != nullptr ? count->int_value() : -1;
  };
  ASSERT_TRUE(Eventually([&] { return replicas_of() == 0; }, std::chrono::seconds(30)))
      << Slurp(controller_log);
  EXPECT_TRUE(Eventually([&] { return !events_with("ScaleStatefulSet").empty(); }, std::chrono::seconds(10)))
      << "an Event for the step performed";
  // No kubelet deletes the Pods here: do it, so that the plan goes on.
  for (const char* pod : {"etcd-main-0", "etcd-main-1", "etcd-main-2"})
    ASSERT_TRUE(admin.Delete({"v1", "pods", "default", pod, ""}, {}, 0, log).ok());
  EXPECT_TRUE(Eventually(
      [&] {
        return !text(etcd, {"status", "lastOperation", "lastDisruptiveStepTime"}).empty();
      },
      std::chrono::seconds(30)))
      << Slurp(controller_log);
}

// --dry-run performs nothing and records each would-be request as an Event
// of reason DryRun, once per request however often it is planned again.
TEST(Controller, DryRunRecordsEachWouldBeRequestAsAnEventAndWritesNothingElse) {
  TempDir dir("controller-dry-run");
  auto bed = KubeTestBed::Start(dir.path(), {.cluster = {.audit_log = true}, .example = "scale-up.json"});
  ASSERT_TRUE(bed.ok()) << bed.error().message;
  KubeClient& admin = (*bed)->admin();
  RequestLog& log = (*bed)->log();
  const KubeResource etcd{"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""};
  auto before = admin.Get(etcd, log);
  ASSERT_TRUE(before.ok());
  const std::string started_at = FormatMicroTime(std::chrono::system_clock::now());
  auto controller = (*bed)->StartController(
      {.flags = {"--dry-run", "--allow-disruptive", "--leader-elect", "false", "--resync-period", "1"}});
  ASSERT_TRUE(controller.ok()) << controller.error().message;
  const std::string& controller_log = controller->log;
  auto dry_runs = [&] {
    auto events = admin.List({"v1", "events", "default", "", ""}, "", log, "reason=DryRun");
    return events.ok() ? ValueAt(*events, {"items"})->list_value() : Value::List{};
  };
  ASSERT_TRUE(Eventually([&] { return !dry_runs().empty(); }, std::chrono::seconds(30)))
      << Slurp(controller_log);
  // Several resyncs plan the same again.
  double reconciled = ReconcilesOf(controller->metrics_port);
  ASSERT_TRUE(Eventually([&] { return ReconcilesOf(controller->metrics_port) >= reconciled + 3; },
                         std::chrono::seconds(30)))
      << Slurp(controller_log);
  const Value::List events = dry_runs();
  bool scale = false;
  for (const Value& event : events) {
    const std::string message = ValueAt(event, {"message"})->string_value();
    scale |= message.find("PATCH") != std::string::npos && message.find("/scale") != std::string::npos;
  }
  EXPECT_TRUE(scale) << "the would-be scale is recorded";
  reconciled = ReconcilesOf(controller->metrics_port);
  ASSERT_TRUE(Eventually([&] { return ReconcilesOf(controller->metrics_port) >= reconciled + 2; },
                         std::chrono::seconds(30)))
      << Slurp(controller_log);
  EXPECT_EQ(dry_runs().size(), events.size()) << "the same requests are not recorded again";
  // Nothing but Events written, as the API server recorded it.
  std::vector<std::string> writes;
  for (const testing::AuditEvent& event : WritesAfter((*bed)->kube().audit_log_path(), "admin", started_at))
    writes.push_back(event.Describe());
  EXPECT_EQ(writes, std::vector<std::string>{}) << "a dry run writes only Events";
  auto sts = admin.Get({"apps/v1", "statefulsets", "default", "etcd-main", ""}, log);
  ASSERT_TRUE(sts.ok());
  EXPECT_EQ(ValueAt(*sts, {"spec", "replicas"})->int_value(), 3);
  auto after = admin.Get(etcd, log);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(ValueAt(*after, {"metadata", "resourceVersion"})->string_value(),
            ValueAt(*before, {"metadata", "resourceVersion"})->string_value())
      << "no status written in a dry run";
}

}  // namespace
}  // namespace ruleplane::testing
