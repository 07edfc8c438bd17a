// `ruleplane member-agent` beside a real 3-member etcd cluster (members named
// as etcd-druid names them), against a real kube-apiserver holding DEP-01's
// pink-of-health objects: each healthy member's Lease renewed with its member
// ID and role; the leader taking a full snapshot and then a delta into the
// backup store, renewing the snapshot Leases with their revisions and keeping
// the Etcd's BackupReady condition (a failed upload turns it False, and the
// next plan raises the alert); a stopped member's Lease left to expire, and
// the next plan marking that member, and only it, LeaseExpired; the Lease
// renewed all along while a snapshot takes long, and SIGTERM ending the agent
// in the middle of one.
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "actions/backup_sidecar/backup_sidecar_adapter.h"
#include "adapters/kubernetes/agent_lease.h"
#include "adapters/kubernetes/kube_client.h"
#include "adapters/kubernetes/manifests.h"
#include "adapters/local/backup_store.h"
#include "adapters/object_store/store_config.h"
#include "engine/common/json_value.h"
#include "engine/common/time_util.h"
#include "engine/verify/conformance.h"
#include "observers/observed_shapes.h"
#include "platform/http_client.h"
#include "platform/process.h"
#include "tests/run_ruleplane.h"
#include "tests/support/etcd_cluster.h"
#include "tests/support/kube_objects.h"
#include "tests/support/kube_test_bed.h"
#include "tests/support/s3_server.h"
#include "tests/support/slow_snapshot_proxy.h"
#include "tests/support/source_paths.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

using testing_support::CommandResult;
using testing_support::Contains;

// The last revision in a snapshot's name: "Full-00000000-00000042-1700000000" -> 42.
int64_t LastRevision(const std::string& name) { return std::stoll(name.substr(14, 8)); }

// "v2/<Full|Incr>-<start %08d>-<last %08d>-<unix><suffix>", etcd-backup-restore's name.
std::string SnapshotPath(const char* kind, int64_t start, int64_t last, int64_t unix_seconds,
                         const std::string& suffix = ".gz") {
  char name[64];
  std::snprintf(name, sizeof name, "v2/%s-%08lld-%08lld-%lld", kind, static_cast<long long>(start),
                static_cast<long long>(last), static_cast<long long>(unix_seconds));
  return name + suffix;
}

// A round's "collected" paths.
std::set<std::string> Collected(const Value& round) {
  std::set<std::string> paths;
  const Value* collected = ValueAt(round, {"collected"});
  if (collected == nullptr || !collected->is_list()) return {"(no \"collected\" list)"};
  for (const Value& path : collected->list_value()) paths.insert(path.string_value());
  return paths;
}

// The first JSON line an agent printed.
Value Round(const CommandResult& run) {
  auto round = ParseJson(run.out.substr(0, run.out.find('\n')));
  EXPECT_TRUE(round.ok()) << run.out << run.err;
  return round.ok() ? *round : Value::Null();
}

class MemberAgentTest : public ::testing::Test {
 protected:
  // Members of the etcd cluster; the Etcd (pink-of-health) says 3.
  virtual int Members() const { return 3; }
  virtual std::vector<std::string> EtcdFlags() const { return {}; }
  // Client and peer TLS with client-cert-auth; the agents present the client certificate.
  virtual bool WithTls() const { return false; }

  void SetUp() override {
    dir_ = std::make_unique<TempDir>("member-agent");
    etcd_ = EtcdCluster::Create(Members(), dir_->path(), "etcd-main-");
    etcd_->set_extra_flags(EtcdFlags());
    if (WithTls()) {
      auto pki = TestPki::Create(dir_->path() + "/pki");
      ASSERT_TRUE(pki.ok()) << pki.error().message;
      etcd_->EnableTls(*pki);
      tls_flags_ = pki->ClientFlags();
    }
    ASSERT_TRUE(etcd_->StartAll().ok());
    // The agents run as the user "member", bound only to the members' Role that the controller creates.
    auto bed = KubeTestBed::Start(dir_->path() + "/bed",
                                  {.cluster = {.users = {"member"}}, .example = "pink-of-health.json"});
    ASSERT_TRUE(bed.ok()) << bed.error().message;
    bed_ = std::move(*bed);
    Status bound = bed_->BindToMemberRole("member");
    ASSERT_TRUE(bound.ok()) << bound.error().message;
    kube_ = &bed_->kube();
    admin_ = &bed_->admin();
    agent_kubeconfig_ = kube_->WriteKubeconfig("member");
    kubeconfig_ = kube_->WriteKubeconfig("admin");
    for (const std::string& url : etcd_->ClientUrls()) endpoints_ += (endpoints_.empty() ? "" : ",") + url;
    store_ = dir_->path() + "/store/etcd-main";
  }

  CommandResult Agent(int i, const std::string& extra = "") {
    return testing_support::Ruleplane("member-agent --once --name " + etcd_->member(i).name +
                                      " --client-url " + etcd_->member(i).client_url + " --endpoints " +
                                      endpoints_ + " --etcd etcd-main --namespace default --kubeconfig " +
                                      agent_kubeconfig_ + " --backup-store " + store_ + " " + tls_flags_ +
                                      " " + extra);
  }

  Value Get(const std::string& resource, const std::string& name) {
    const std::string group = resource == "leases" ? "coordination.k8s.io/v1"
                              : resource == "pods" ? "v1"
                                                   : "druid.gardener.cloud/v1alpha1";
    auto read = admin_->Get({group, resource, "default", name, ""}, log_);
    EXPECT_TRUE(read.ok()) << name;
    return read.ok() ? *read : Value::Null();
  }

  Value BackupReady() {
    const Value etcd = Get("etcds", "etcd-main");
    for (const Value& condition : ValueAt(etcd, {"status", "conditions"})->list_value()) {
      if (TextAt(condition, {"type"}) == "BackupReady") return condition;
    }
    return Value::Null();
  }

  // `plan --cluster` as JSON.
  Value Plan() {
    const CommandResult run = testing_support::Ruleplane("plan --cluster default/etcd-main --kubeconfig " +
                                                         kubeconfig_ + " -o json");
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    auto plan = ParseJson(run.out);
    EXPECT_TRUE(plan.ok()) << run.out;
    return plan.ok() ? *plan : Value::Null();
  }

  // "<action> <target> <status> <reason>" of each step.
  static std::vector<std::string> Steps(const Value& plan) {
    std::vector<std::string> steps;
    for (const Value& step : ValueAt(plan, {"steps"})->list_value()) {
      steps.push_back(TextAt(step, {"action"}) + " " + TextAt(step, {"target"}) + " " +
                      TextAt(step, {"params", "status"}) + " " + TextAt(step, {"params", "reason"}));
    }
    return steps;
  }

  // `ruleplane member-agent` for member i, running until stopped; its
  // output goes to <dir>/<log>; `store` "" = the store flags are in `extra`.
  ChildProcess StartAgent(int i, const std::string& endpoints, const std::string& store,
                          const std::string& log, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {RuleplaneBinary(),     "member-agent",   "--name",
                                     etcd_->member(i).name, "--client-url",   etcd_->member(i).client_url,
                                     "--endpoints",         endpoints,        "--etcd",
                                     "etcd-main",           "--namespace",    "default",
                                     "--kubeconfig",        agent_kubeconfig_};
    if (!store.empty()) argv.insert(argv.end(), {"--backup-store", store});
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto agent = ChildProcess::Start(argv, dir_->path() + "/" + log);
    EXPECT_TRUE(agent.ok()) << agent.error().message;
    return agent.ok() ? std::move(*agent) : ChildProcess();
  }

  // Every file in a store directory ("v2/Full-...", a download in progress) but the snapshots' cluster
  // markers (clusters/<id>/...), relative to it.
  static std::vector<std::string> StoreFiles(const std::string& store) {
    std::vector<std::string> names;
    std::error_code ignored;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(store, ignored)) {
      const std::string name = std::filesystem::relative(entry.path(), store).string();
      if (!entry.is_directory() && !name.starts_with("clusters/")) names.push_back(name);
    }
    return names;
  }

  // `client_certificates`: the agents ask for a client certificate of the
  // backup CA (spec.backup.tls.clientTLSSecretRef), and present one when they forward.
  void TriggerFullSnapshotThroughTheLeadersSidecar(bool https, bool client_certificates = false);

  // The member that leads now.
  int Leader() {
    EtcdClient client = etcd_->Client();
    for (int i = 0; i < etcd_->size(); ++i) {
      auto status = client.MemberStatus(etcd_->member(i).client_url, log_);
      if (status.ok() && status->leader == status->member_id) return i;
    }
    return -1;
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<EtcdCluster> etcd_;
  std::unique_ptr<KubeTestBed> bed_;
  KubeCluster* kube_ = nullptr;
  KubeClient* admin_ = nullptr;
  RequestLog log_;
  std::string kubeconfig_, agent_kubeconfig_, endpoints_, store_, tls_flags_;
};

TEST_F(MemberAgentTest, RenewsLeasesAndTheLeaderTakesBackupsAndKeepsBackupReady) {
  // The members' Role names this Etcd's objects (issue 41, hazard 4): the
  // controller's leader-election Lease and another Etcd's snapshot Lease,
  // from which an approver reads a data-loss bound, are refused.
  KubeClient member(kube_->ConfigFor("member"));
  for (const std::string& other :
       {std::string("ruleplane-controller"), std::string("etcd-other-full-snap")}) {
    auto created =
        admin_->Create({"coordination.k8s.io/v1", "leases", "default", "", ""},
                       Json(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":")" +
                            other + R"("},"spec":{"holderIdentity":"its-holder"}})"),
                       log_);
    ASSERT_TRUE(created.ok()) << created.error().message;
    auto patched = member.MergePatch({"coordination.k8s.io/v1", "leases", "default", other, ""},
                                     Json(R"({"spec":{"holderIdentity":"999999"}})"), log_);
    ASSERT_FALSE(patched.ok()) << other << " patched by a member";
    EXPECT_EQ(patched.error().code, ErrorCode::kPermissionDenied) << patched.error().message;
    EXPECT_EQ(TextAt(Get("leases", other), {"spec", "holderIdentity"}), "its-holder");
  }
  EtcdClient client = etcd_->Client();
  int leader = -1;
  std::string full;
  for (int i = 0; i < 3; ++i) {
    const CommandResult run = Agent(i);
    ASSERT_EQ(run.exit_code, 0) << run.out;
    auto status = client.MemberStatus(etcd_->member(i).client_url, log_);
    ASSERT_TRUE(status.ok());
    const bool leads = status->leader == status->member_id;
    const Value renewed = Get("leases", etcd_->member(i).name);
    EXPECT_EQ(TextAt(renewed, {"spec", "holderIdentity"}), MemberIdHex(status->member_id) + ":" +
                                                               MemberIdHex(status->cluster_id) +
                                                               (leads ? ":Leader" : ":Member"));
    EXPECT_EQ(TextAt(renewed, {"metadata", "annotations", "member.etcd.gardener.cloud/tls-enabled"}), "false")
        << "plaintext peer URLs";
    const std::string renew_time = TextAt(renewed, {"spec", "renewTime"});
    EXPECT_EQ(renew_time.size(), 27u) << "a MicroTime with six digits: " << renew_time;
    if (leads) {
      leader = i;
      full = TextAt(Round(run), {"backup"});
    } else {
      EXPECT_EQ(TextAt(Round(run), {"backup"}), "") << "only the leader backs up";
    }
  }
  ASSERT_GE(leader, 0);
  ASSERT_EQ(full.rfind("Full-", 0), 0u) << full;
  EXPECT_EQ(TextAt(Get("leases", "etcd-main-full-snap"), {"spec", "holderIdentity"}),
            std::to_string(LastRevision(full)));
  Value ready = BackupReady();
  EXPECT_EQ(TextAt(ready, {"status"}), "True");
  EXPECT_EQ(TextAt(ready, {"reason"}), "BackupSucceeded");
  EXPECT_EQ(TextAt(ready, {"message"}), "the last snapshot upload succeeded");

  NumberedWriter writer(etcd_->ClientUrls(), "agent/");
  ASSERT_TRUE(writer.WriteSome(25).ok());
  const CommandResult delta = Agent(leader, "--delta-snapshot-period 1s");
  ASSERT_EQ(delta.exit_code, 0) << delta.out;
  const std::string incr = TextAt(Round(delta), {"backup"});
  ASSERT_EQ(incr.rfind("Incr-", 0), 0u) << delta.out;
  EXPECT_EQ(LastRevision(incr), writer.acknowledged().back().revision);
  EXPECT_EQ(TextAt(Get("leases", "etcd-main-delta-snap"), {"spec", "holderIdentity"}),
            std::to_string(LastRevision(incr)));

  // A failed upload (the store's parent is a file): BackupReady False, and the
  // next plan raises etcd-druid's alert and closes the budget to n.
  std::ofstream(dir_->path() + "/not-a-directory") << "x";
  const std::string unwritable = "--backup-store " + dir_->path() + "/not-a-directory/store";
  const CommandResult failed = Agent(leader, unwritable);
  EXPECT_EQ(failed.exit_code, 1) << failed.out;
  EXPECT_TRUE(Contains(TextAt(Round(failed), {"error"}), "backup:")) << failed.out;
  ready = BackupReady();
  EXPECT_EQ(TextAt(ready, {"status"}), "False");
  EXPECT_EQ(TextAt(ready, {"reason"}), "BackupFailed");
  EXPECT_NE(TextAt(ready, {"message"}), "");
  const std::vector<std::string> steps = Steps(Plan());
  EXPECT_TRUE(std::any_of(steps.begin(), steps.end(), [](const std::string& step) {
    return step.rfind("RaiseAlert", 0) == 0;
  })) << ::testing::PrintToString(steps);
  EXPECT_TRUE(std::find(steps.begin(), steps.end(), "SetPdbMinAvailable etcd-main  ") != steps.end())
      << ::testing::PrintToString(steps);

  // The next successful upload turns it True again, with a new transition time.
  const std::string failed_at = TextAt(ready, {"lastTransitionTime"});
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ASSERT_TRUE(writer.WriteSome(5).ok());
  const CommandResult recovered = Agent(leader, "--delta-snapshot-period 1s");
  EXPECT_EQ(recovered.exit_code, 0) << recovered.out;
  ready = BackupReady();
  EXPECT_EQ(TextAt(ready, {"status"}), "True");
  EXPECT_NE(TextAt(ready, {"lastTransitionTime"}), failed_at);
}

// Garbage collection, LimitBased with --max-backups 2, over a store that
// holds weeks-old snapshots below the cluster's revision: a member that does
// not lead deletes nothing; the leader, after its own full snapshot (the
// newest), deletes every full but the newest two (a .final one counts and is
// kept) and the deltas of the older streams, and says so in its log line.
class MemberAgentTlsTest : public MemberAgentTest {
 protected:
  bool WithTls() const override { return true; }
};

// etcd-backup-restore's heartbeat over TLS: the holder "<member>:<cluster>:<role>"
// and member.etcd.gardener.cloud/tls-enabled "true" for https peer URLs; the
// leader's backup is taken with the client certificate.
TEST_F(MemberAgentTlsTest, RenewsWithTheClusterIdAndPeerTlsAndTheLeaderBacksUpOverTls) {
  EtcdClient client = etcd_->Client();
  int leaders = 0;
  for (int i = 0; i < 3; ++i) {
    const CommandResult run = Agent(i);
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(TextAt(Round(run), {"error"}), "") << run.out;
    auto status = client.MemberStatus(etcd_->member(i).client_url, log_);
    ASSERT_TRUE(status.ok()) << status.error().message;
    const bool leads = status->leader == status->member_id;
    const Value renewed = Get("leases", etcd_->member(i).name);
    EXPECT_EQ(TextAt(renewed, {"spec", "holderIdentity"}), MemberIdHex(status->member_id) + ":" +
                                                               MemberIdHex(status->cluster_id) +
                                                               (leads ? ":Leader" : ":Member"));
    EXPECT_EQ(TextAt(renewed, {"metadata", "annotations", "member.etcd.gardener.cloud/tls-enabled"}), "true");
    if (leads) {
      ++leaders;
      EXPECT_EQ(TextAt(Round(run), {"backup"}).rfind("Full-", 0), 0u) << run.out;
    }
  }
  EXPECT_EQ(leaders, 1);
  EXPECT_EQ(TextAt(BackupReady(), {"status"}), "True");

  // Without the client certificate the agent is refused, and says why.
  tls_flags_ = "--cacert " + dir_->path() + "/pki/ca.crt";
  const CommandResult refused = Agent(0);
  EXPECT_TRUE(Contains(TextAt(Round(refused), {"error"}), "none was given")) << refused.out << refused.err;
}

// The plan step TriggerFullSnapshot (2.x: before a scale to 0), performed
// by the backup-sidecar adapter against the agents' API: done only once the
// store's latest full snapshot covers the revision the members' Leases
// recorded; asked of the leading member's Pod; when no sidecar answers, the
// step fails for good after maxAttempts, so that the scale to 0 after it never
// runs. `https`: the Etcd has spec.backup.tls, the agents serve HTTPS.
void MemberAgentTest::TriggerFullSnapshotThroughTheLeadersSidecar(bool https, bool client_certificates) {
  const int leader = Leader();
  ASSERT_GE(leader, 0);
  const int other = (leader + 1) % 3;
  const int port = FreeLoopbackPort();
  std::vector<std::string> flags = {"--k8s-heartbeat-duration", "1s", "--schedule",    "0 0 1 1 *",
                                    "--delta-snapshot-period",  "1h", "--server-port", std::to_string(port)};
  std::istringstream client_tls(tls_flags_);
  for (std::string word; client_tls >> word;) flags.push_back(word);
  if (https) {
    const std::string pki = dir_->path() + "/pki";
    flags.insert(flags.end(), {"--server-cert", pki + "/member.crt", "--server-key", pki + "/member.key",
                               "--server-ca", pki + "/ca.crt"});
    if (client_certificates) {
      flags.insert(flags.end(), {"--server-client-ca", pki + "/ca.crt", "--server-client-cert",
                                 pki + "/client.crt", "--server-client-key", pki + "/client.key"});
    }
  }
  std::vector<std::string> leader_flags = flags, other_flags = flags;
  leader_flags.insert(leader_flags.end(), {"--server-host", "127.0.0.1"});
  other_flags.insert(other_flags.end(), {"--server-host", "127.0.0.2"});
  ChildProcess leading = StartAgent(leader, endpoints_, store_, "agent-leader.log", leader_flags);
  ChildProcess following = StartAgent(other, endpoints_, store_, "agent-other.log", other_flags);
  ASSERT_TRUE(Eventually([&] { return !StoreFiles(store_).empty(); }, std::chrono::seconds(20)))
      << Slurp(dir_->path() + "/agent-leader.log");
  NumberedWriter writer(etcd_->ClientUrls(), "trigger/", etcd_->ClientTls());
  ASSERT_TRUE(writer.WriteSome(10).ok());
  EtcdClient client = etcd_->Client();
  auto status = client.MemberStatus(etcd_->member(leader).client_url, log_);
  ASSERT_TRUE(status.ok());
  const int64_t revision = status->revision;

  // What the controller observed: the members' Leases (the leader's says so,
  // with the revision its agent recorded) and their Pods' IPs.
  const std::string leader_name = etcd_->member(leader).name, other_name = etcd_->member(other).name;
  // With spec.backup.tls, the CA Secret it names, as etcd-druid's users create it.
  // With client certificates, the client Secret too, which the controller presents.
  const std::string backup_tls =
      !https ? ""
             : R"(,"tls":{"tlsCASecretRef":{"name":"etcd-backup-ca"},"serverTLSSecretRef":{"name":"s"})" +
                   std::string(client_certificates ? R"(,"clientTLSSecretRef":{"name":"etcd-backup-client"})"
                                                   : "") +
                   "}";
  if (https) {
    ASSERT_TRUE(admin_
                    ->Create({"v1", "secrets", "default", "", ""},
                             SecretOfFiles("etcd-backup-ca", {{"ca.crt", dir_->path() + "/pki/ca.crt"}}),
                             log_)
                    .ok());
  }
  if (client_certificates) {
    ASSERT_TRUE(
        admin_
            ->Create({"v1", "secrets", "default", "", ""},
                     SecretOfFiles("etcd-backup-client", {{"tls.crt", dir_->path() + "/pki/client.crt"},
                                                          {"tls.key", dir_->path() + "/pki/client.key"}}),
                     log_)
            .ok());
  }
  auto document = ParseJson(
      R"({"etcd":{"metadata":{"name":"etcd-main","namespace":"default"},"spec":{"backup":{"port":)" +
      std::to_string(port) + backup_tls + R"(}}},"leases":[{"metadata":{"name":")" + leader_name +
      R"(","annotations":{"ruleplane.dev/revision":")" + std::to_string(revision) +
      R"("}},"spec":{"holderIdentity":"1:2:Leader"}},{"metadata":{"name":")" + other_name +
      R"("},"spec":{"holderIdentity":"3:2:Member"}}],"pods":[{"metadata":{"name":")" + other_name +
      R"("},"status":{"podIP":"127.0.0.2"}},{"metadata":{"name":")" + leader_name +
      R"("},"status":{"podIP":"127.0.0.1"}}]})");
  ASSERT_TRUE(document.ok()) << document.error().message;
  Snapshot snapshot;
  snapshot.document = *document;
  EtcdClient members = etcd_->Client();
  BackupSidecarAdapter sidecar(snapshot, *admin_, &members, std::chrono::seconds(60));
  PlanStep step;
  step.action = "TriggerFullSnapshot";
  step.target = "etcd-main";
  step.adapter = "backup-sidecar";
  step.params = Value::MakeMap({{Value::String("maxAttempts"), Value::Int(2)}});

  RequestLog log;
  auto done = sidecar.IsDone(step, log);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_FALSE(*done) << "the first full snapshot was taken before the writes";
  Status performed = sidecar.Perform(step, log);
  ASSERT_TRUE(performed.ok()) << performed.error().message;
  // The leader's Pod: at its IP, or with TLS at its DNS name, connected to at its IP.
  EXPECT_EQ(log.requests().back().target,
            (https ? "https://" + leader_name + ".etcd-main-peer.default.svc:" : "http://127.0.0.1:") +
                std::to_string(port) + "/snapshot/full");
  if (https) {
    // A follower's agent forwards to the leader's over HTTPS, verified against --server-ca (and, asked for
    // one, with its own client certificate).
    const std::string pki = dir_->path() + "/pki";
    const std::string follower = other_name + ".etcd-main-peer.default.svc:" + std::to_string(port);
    auto ask_follower = [&](const TlsConfig& tls) {
      HttpClient to_follower(tls);
      to_follower.set_connect_to({follower + ":127.0.0.2:" + std::to_string(port)});
      return to_follower.Send("POST", "https://" + follower + "/snapshot/delta", "",
                              std::chrono::seconds(60));
    };
    auto forwarded = ask_follower(
        client_certificates ? TestPki::Files(pki + "/ca.crt", pki + "/client.crt", pki + "/client.key")
                            : TestPki::Files(pki + "/ca.crt"));
    ASSERT_TRUE(forwarded.ok()) << forwarded.error().message;
    EXPECT_EQ(forwarded->status, 200) << forwarded->body;
    if (client_certificates) {
      // A caller without a client certificate (any Pod that reaches the port) is refused, at the follower and
      // at the leader, before anything is taken.
      const size_t stored = StoreFiles(store_).size();
      auto stranger = ask_follower(TestPki::Files(pki + "/ca.crt"));
      ASSERT_TRUE(stranger.ok()) << stranger.error().message;
      EXPECT_EQ(stranger->status, 403) << stranger->body;
      HttpClient to_leader(TestPki::Files(pki + "/ca.crt"));
      const std::string leading_agent = leader_name + ".etcd-main-peer.default.svc:" + std::to_string(port);
      to_leader.set_connect_to({leading_agent + ":127.0.0.1:" + std::to_string(port)});
      auto at_leader = to_leader.Send("POST", "https://" + leading_agent + "/snapshot/full?final=true", "",
                                      std::chrono::seconds(60));
      ASSERT_TRUE(at_leader.ok()) << at_leader.error().message;
      EXPECT_EQ(at_leader->status, 403) << at_leader->body;
      EXPECT_EQ(StoreFiles(store_).size(), stored) << "a refused request took a snapshot";
    }
  }
  done = sidecar.IsDone(step, log);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_TRUE(*done);
  // Writes after the snapshot, which the Leases (the observation) do not
  // know of: the members' revision now says it is not done.
  ASSERT_TRUE(writer.WriteSome(5).ok());
  done = sidecar.IsDone(step, log);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_FALSE(*done) << "the store's full snapshot misses the last 5 writes";
  // Asked again at once: too soon (--snapshot-request-interval, 30s by
  // default), answered 429. The step is retried later, not failed for good:
  // one request sent, no second attempt.
  RequestLog again;
  Status too_soon = sidecar.Perform(step, again);
  ASSERT_FALSE(too_soon.ok());
  EXPECT_EQ(too_soon.error().code, ErrorCode::kUnavailable) << too_soon.error().message;
  EXPECT_TRUE(Contains(too_soon.error().message, "HTTP 429")) << too_soon.error().message;
  EXPECT_TRUE(Contains(too_soon.error().message, "ask again in")) << too_soon.error().message;
  EXPECT_EQ(std::count_if(again.requests().begin(), again.requests().end(),
                          [](const Request& request) { return request.verb == "POST"; }),
            1);
  int64_t newest_full = 0;
  for (const std::string& file : StoreFiles(store_)) {
    if (file.rfind("v2/Full-", 0) == 0) newest_full = std::max(newest_full, LastRevision(file.substr(3)));
  }
  EXPECT_GE(newest_full, revision);

  // No sidecar answers: two attempts, then the step fails and is not retried.
  leading.Stop();
  following.Stop();
  RequestLog failing;
  performed = sidecar.Perform(step, failing);
  ASSERT_FALSE(performed.ok());
  EXPECT_EQ(performed.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(performed.error().message, "no full snapshot after 2 attempt(s)"))
      << performed.error().message;
  // (With TLS, the CA Secret is read first.)
  EXPECT_EQ(std::count_if(failing.requests().begin(), failing.requests().end(),
                          [](const Request& request) { return request.verb == "POST"; }),
            2);
}

TEST_F(MemberAgentTest,
       TriggerFullSnapshotIsTakenThroughTheLeadersSidecarAndDoneWhenTheStoreCoversTheMembers) {
  TriggerFullSnapshotThroughTheLeadersSidecar(false);
}

// spec.backup.tls (etcd-backup-restore's --server-cert/--server-key): the
// agents' certificate is verified for the leader Pod's DNS name against the CA
// Secret the Etcd names, and the followers forward over HTTPS.
TEST_F(MemberAgentTlsTest, TriggerFullSnapshotOverHttpsVerifiesTheLeadersAgentAgainstTheEtcdsBackupCa) {
  TriggerFullSnapshotThroughTheLeadersSidecar(true);
}

// Issue 41, hazard 2: any Pod that reached an agent's port could ask for
// snapshots (and eight full ones pushed every older backup out of a
// LimitBased store). With spec.backup.tls.clientTLSSecretRef the agents ask
// for a client certificate of the backup CA: the controller and a forwarding
// agent present one, a stranger gets 403 and nothing is taken.
TEST_F(MemberAgentTlsTest, WithAClientCaOnlyCallersWithAClientCertificateGetSnapshots) {
  TriggerFullSnapshotThroughTheLeadersSidecar(true, true);
}

// A member that started at an https peer URL while the cluster could not
// commit the change (member-init's I19 without a quorum: the leader was the
// member just restarted) stays at http in the member list, and its peers dial
// it at http, which it refuses. Its agent's heartbeat, once the member is
// healthy, updates the list to the URL the member advertises; the others'
// agents change nothing.
TEST_F(MemberAgentTest, AMemberTheListHasAtAnotherPeerUrlIsUpdatedToTheOneItAdvertises) {
  const std::string plain_peer_url = etcd_->member(0).peer_url;
  auto pki = TestPki::Create(dir_->path() + "/pki");
  ASSERT_TRUE(pki.ok()) << pki.error().message;
  etcd_->EnableTls(*pki, /*peers_only=*/true);
  etcd_->StopMember(2);
  ASSERT_TRUE(etcd_->StartMember(2, "existing").ok());
  ASSERT_TRUE(etcd_->WaitReady(2).ok());
  const std::string https_url = etcd_->member(2).peer_url;
  ASSERT_EQ(https_url.rfind("https://", 0), 0u) << https_url;

  EtcdClient client = etcd_->Client();
  auto peer_urls = [&](const std::string& name) {
    auto members = client.MemberList(log_);
    EXPECT_TRUE(members.ok());
    for (const EtcdMember& member : members.ok() ? *members : std::vector<EtcdMember>{})
      if (member.name == name) return member.peer_urls;
    return std::vector<std::string>{};
  };
  ASSERT_NE(peer_urls(etcd_->member(2).name), std::vector<std::string>{https_url})
      << "restarted without the update";

  const CommandResult unchanged = Agent(0, "--peer-url " + plain_peer_url);
  ASSERT_EQ(unchanged.exit_code, 0) << unchanged.out << unchanged.err;
  EXPECT_EQ(TextAt(Round(unchanged), {"peerURLUpdated"}), "") << unchanged.out;
  EXPECT_EQ(peer_urls(etcd_->member(0).name), std::vector<std::string>{plain_peer_url});

  // Right after its start the member may not know the leader yet: heartbeats until it does.
  CommandResult repaired;
  ASSERT_TRUE(Eventually(
      [&] {
        repaired = Agent(2, "--peer-url " + https_url);
        return repaired.exit_code == 0;
      },
      std::chrono::seconds(30), std::chrono::seconds(1)))
      << repaired.out << repaired.err;
  EXPECT_EQ(TextAt(Round(repaired), {"peerURLUpdated"}), https_url) << repaired.out;
  EXPECT_EQ(peer_urls(etcd_->member(2).name), std::vector<std::string>{https_url});
  EXPECT_EQ(TextAt(Get("leases", etcd_->member(2).name),
                   {"metadata", "annotations", "member.etcd.gardener.cloud/tls-enabled"}),
            "true");

  const CommandResult again = Agent(2, "--peer-url " + https_url);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(TextAt(Round(again), {"peerURLUpdated"}), "") << "nothing left to update: " << again.out;
  NumberedWriter writer(etcd_->ClientUrls(), "repaired/");
  EXPECT_TRUE(writer.WriteSome(10).ok());
}

// A compaction past the store's last revision breaks the delta chain: the
// leader takes a full snapshot at once, and BackupReady stays True, rather
// than failing every delta until the next scheduled full snapshot.
TEST_F(MemberAgentTest, ACompactionPastTheLastBackupBringsAFullSnapshotAtOnce) {
  const int leader = Leader();
  ASSERT_GE(leader, 0);
  const CommandResult first = Agent(leader);
  ASSERT_EQ(first.exit_code, 0) << first.out;
  ASSERT_EQ(TextAt(Round(first), {"backup"}).rfind("Full-", 0), 0u) << first.out;
  NumberedWriter writer(etcd_->ClientUrls(), "compacted/");
  ASSERT_TRUE(writer.WriteSome(20).ok());
  const int64_t written = writer.acknowledged().back().revision;
  EtcdClient client = etcd_->Client();
  ASSERT_TRUE(client.Compact(written, log_).ok());
  const CommandResult after = Agent(leader, "--delta-snapshot-period 1s");
  EXPECT_EQ(after.exit_code, 0) << after.out;
  const std::string taken = TextAt(Round(after), {"backup"});
  ASSERT_EQ(taken.rfind("Full-", 0), 0u) << after.out;
  EXPECT_EQ(LastRevision(taken), written);
  EXPECT_EQ(TextAt(BackupReady(), {"status"}), "True");
}

// The API server refuses the leader's BackupReady (its agent's binding is
// gone while its first full snapshot is taken); once it may write again, the
// next heartbeat writes it, though no write to etcd brings a delta to report.
TEST_F(MemberAgentTest, ABackupReadyTheApiServerRefusedIsWrittenAtALaterHeartbeat) {
  ASSERT_TRUE(admin_
                  ->Delete({"rbac.authorization.k8s.io/v1", "rolebindings", "default", "member-member", ""},
                           {}, std::nullopt, log_)
                  .ok());
  KubeClient member(kube_->ConfigFor("member"));
  ASSERT_TRUE(Eventually(
      [&] {
        RequestLog reads;
        auto etcd = member.Get({"druid.gardener.cloud/v1alpha1", "etcds", "default", "etcd-main", ""}, reads);
        return !etcd.ok() && Contains(etcd.error().message, "HTTP 403");
      },
      std::chrono::seconds(10)))
      << "the authorizer never saw the binding go";
  const int leader = Leader();
  ASSERT_GE(leader, 0);
  const std::string log = dir_->path() + "/agent.log";
  ChildProcess agent = StartAgent(
      leader, endpoints_, store_, "agent.log",
      {"--k8s-heartbeat-duration", "1s", "--delta-snapshot-period", "1s", "--schedule", "0 0 1 1 *"});
  ASSERT_TRUE(Eventually([&] { return Contains(Slurp(log), "BackupReady: "); }, std::chrono::seconds(30)))
      << Slurp(log);
  ASSERT_EQ(StoreFiles(store_).size(), 1u) << Slurp(log);
  ASSERT_TRUE(bed_->BindToMemberRole("member").ok());
  EXPECT_TRUE(
      Eventually([&] { return TextAt(BackupReady(), {"message"}) == "the last snapshot upload succeeded"; },
                 std::chrono::seconds(30)))
      << Slurp(log);
  agent.Stop();
  EXPECT_EQ(TextAt(BackupReady(), {"status"}), "True");
  const std::vector<std::string> files = StoreFiles(store_);
  ASSERT_EQ(files.size(), 1u) << "only the first full snapshot: nothing new was taken to report";
  EXPECT_EQ(files[0].rfind("v2/Full-", 0), 0u) << files[0];
}

TEST_F(MemberAgentTest, TheLeaderCollectsLimitBasedAllButTheNewestFullsKeepingAFinalOne) {
  NumberedWriter writer(etcd_->ClientUrls(), "gc/");
  ASSERT_TRUE(writer.WriteSome(60).ok());
  const int64_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  const int64_t day = 24 * 3600;
  const std::set<std::string> doomed = {
      SnapshotPath("Full", 0, 10, now - 28 * day), SnapshotPath("Incr", 11, 15, now - 28 * day + 60),
      SnapshotPath("Full", 0, 30, now - 14 * day), SnapshotPath("Incr", 31, 35, now - 14 * day + 60),
      SnapshotPath("Incr", 41, 50, now - 7 * day + 60)};
  const std::set<std::string> kept = {SnapshotPath("Full", 0, 20, now - 21 * day, ".final"),
                                      SnapshotPath("Full", 0, 40, now - 7 * day)};
  std::filesystem::create_directories(store_ + "/v2");
  for (const std::set<std::string>& paths : {doomed, kept}) {
    for (const std::string& path : paths) std::ofstream(store_ + "/" + path) << "old";
  }
  const std::string flags = "--garbage-collection-policy LimitBased --max-backups 2";

  const int leader = Leader();
  ASSERT_GE(leader, 0);
  const CommandResult follower = Agent((leader + 1) % 3, flags);
  ASSERT_EQ(follower.exit_code, 0) << follower.out << follower.err;
  EXPECT_EQ(Collected(Round(follower)), std::set<std::string>{}) << follower.out;
  std::vector<std::string> files = StoreFiles(store_);
  EXPECT_EQ(files.size(), doomed.size() + kept.size()) << "only the leader collects";

  const CommandResult run = Agent(leader, flags);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::string full = TextAt(Round(run), {"backup"});
  ASSERT_EQ(full.rfind("Full-", 0), 0u) << run.out;
  ASSERT_GT(LastRevision(full), 50) << "the agent's full snapshot is the newest";
  EXPECT_EQ(Collected(Round(run)), doomed) << run.out;
  std::set<std::string> expected = kept;
  expected.insert("v2/" + full);
  files = StoreFiles(store_);
  EXPECT_EQ(std::set<std::string>(files.begin(), files.end()), expected);

  // The next run, under a yearly schedule (no new full is due) whose day is
  // half a year away, counts periods of it: the week-old full shares one
  // with the agent's own and goes; the .final one stays.
  std::tm utc{};
  const std::time_t now_time = now;
  gmtime_r(&now_time, &utc);
  const std::string yearly = "'0 0 1 " + std::to_string((utc.tm_mon + 6) % 12 + 1) + " *'";
  const CommandResult again = Agent(leader, flags + " --schedule " + yearly);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(Collected(Round(again)), std::set<std::string>{SnapshotPath("Full", 0, 40, now - 7 * day)})
      << again.out;
}

// Exponential (the default) over a store with a full from 60 days ago (older
// than 5 weeks: deleted), two fulls of one day 3 days ago (the older deleted,
// the newest of the day kept) and a delta after them (an older stream's:
// deleted). Then, with the leader's own full and a delta after it in the
// store, neither Exponential nor LimitBased --max-backups 1 touches them.
TEST_F(MemberAgentTest, ExponentialCollectionKeepsTheNewestFullAndTheDeltasAfterIt) {
  NumberedWriter writer(etcd_->ClientUrls(), "gc/");
  ASSERT_TRUE(writer.WriteSome(60).ok());
  const int64_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  const int64_t day = 24 * 3600;
  // From UTC midnight, so that the two fulls of one day are on one day whatever the time now.
  const int64_t midnight = now - now % day;
  const std::string oldest = SnapshotPath("Full", 0, 10, midnight - 60 * day);
  const std::string earlier_that_day = SnapshotPath("Full", 0, 20, midnight - 3 * day + 10 * 3600);
  const std::string newest_that_day = SnapshotPath("Full", 0, 30, midnight - 3 * day + 11 * 3600);
  const std::string old_delta = SnapshotPath("Incr", 31, 40, midnight - 3 * day + 11 * 3600 + 60);
  std::filesystem::create_directories(store_ + "/v2");
  for (const std::string& path : {oldest, earlier_that_day, newest_that_day, old_delta})
    std::ofstream(store_ + "/" + path) << "old";

  const int leader = Leader();
  ASSERT_GE(leader, 0);
  const CommandResult run = Agent(leader);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::string full = TextAt(Round(run), {"backup"});
  ASSERT_EQ(full.rfind("Full-", 0), 0u) << run.out;
  ASSERT_GT(LastRevision(full), 40);
  EXPECT_EQ(Collected(Round(run)), (std::set<std::string>{oldest, earlier_that_day, old_delta})) << run.out;
  std::vector<std::string> files = StoreFiles(store_);
  EXPECT_EQ(std::set<std::string>(files.begin(), files.end()),
            (std::set<std::string>{newest_that_day, "v2/" + full}));

  // A delta after the agent's full (a yearly schedule: no full due again).
  ASSERT_TRUE(writer.WriteSome(10).ok());
  const std::string yearly = "--schedule '0 0 1 1 *' --delta-snapshot-period 1s";
  const CommandResult delta = Agent(leader, yearly);
  ASSERT_EQ(delta.exit_code, 0) << delta.out << delta.err;
  const std::string incr = TextAt(Round(delta), {"backup"});
  ASSERT_EQ(incr.rfind("Incr-", 0), 0u) << delta.out;
  EXPECT_EQ(Collected(Round(delta)), std::set<std::string>{}) << delta.out;

  // The tightest limit: only the older full goes.
  const CommandResult tight =
      Agent(leader, yearly + " --garbage-collection-policy LimitBased --max-backups 1");
  ASSERT_EQ(tight.exit_code, 0) << tight.out << tight.err;
  EXPECT_EQ(Collected(Round(tight)), std::set<std::string>{newest_that_day}) << tight.out;
  files = StoreFiles(store_);
  EXPECT_EQ(std::set<std::string>(files.begin(), files.end()),
            (std::set<std::string>{"v2/" + full, "v2/" + incr}));
}

// Another cluster's full snapshot on the prefix (a split brain's other side,
// marked as its cluster's), newer by revision than this cluster's own: under
// LimitBased --max-backups 1 it counted, and this cluster's newest full
// snapshot was collected, leaving a restore only the other cluster's. Another
// cluster's snapshots are neither counted nor collected.
TEST_F(MemberAgentTest, AnotherClustersNewerFullSnapshotIsNeitherCountedNorCollected) {
  NumberedWriter writer(etcd_->ClientUrls(), "gc/");
  ASSERT_TRUE(writer.WriteSome(20).ok());
  const int leader = Leader();
  ASSERT_GE(leader, 0);
  const CommandResult first = Agent(leader);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const std::string own_full = TextAt(Round(first), {"backup"});
  ASSERT_EQ(own_full.rfind("Full-", 0), 0u) << first.out;
  ASSERT_TRUE(writer.WriteSome(10).ok());
  const std::string yearly = "--schedule '0 0 1 1 *' --delta-snapshot-period 1s";
  const CommandResult delta = Agent(leader, yearly);
  ASSERT_EQ(delta.exit_code, 0) << delta.out << delta.err;
  const std::string own_delta = TextAt(Round(delta), {"backup"});
  ASSERT_EQ(own_delta.rfind("Incr-", 0), 0u) << delta.out;

  const int64_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  const std::string other_full = SnapshotPath("Full", 0, LastRevision(own_full) + 1, now);
  std::ofstream(store_ + "/" + other_full) << "another cluster's";
  std::filesystem::create_directories(store_ + "/clusters/abcdef12");
  std::ofstream(store_ + "/clusters/abcdef12/snapshot-" + other_full.substr(3));  // the name after "v2/"

  const CommandResult limited =
      Agent(leader, yearly + " --garbage-collection-policy LimitBased --max-backups 1");
  ASSERT_EQ(limited.exit_code, 0) << limited.out << limited.err;
  EXPECT_EQ(Collected(Round(limited)), std::set<std::string>{}) << limited.out;
  const std::vector<std::string> files = StoreFiles(store_);
  EXPECT_EQ(std::set<std::string>(files.begin(), files.end()),
            (std::set<std::string>{"v2/" + own_full, "v2/" + own_delta, other_full}));
}

// After a scale-down from 5 to 3 (the Etcd says 3, etcd still has 5 members),
// with member 0 leading. etcd runs without its own check of a removal's
// quorum (--strict-reconfig-check, on by default, which an operator may turn
// off): the agent's checks are what is tested.
// The leader's backups into S3 (s3rver, which verifies Signature V4), with
// the credentials as etcd-druid mounts spec.backup.store.secretRef (a file
// per key): a full snapshot, deltas, and, once the credentials are rotated
// (a second key pair in the files, the first revoked on the server), a full
// snapshot again, as etcd-backup-restore does, and deltas after it, all
// with the new key by the agent that opened the store with the old one.
// The schedule is yearly, so that no scheduled full can be the cause.
TEST_F(MemberAgentTest, TheLeaderBacksUpIntoS3AndRotatedCredentialsBringAFullSnapshot) {
  auto server = S3Server::Start(dir_->path() + "/s3", {"backups"});
  ASSERT_TRUE(server.ok()) << server.error().message;
  const std::string credentials = dir_->path() + "/credentials";
  auto write_credentials = [&](const AwsCredentials& key) {
    std::filesystem::create_directories(credentials);
    std::ofstream(credentials + "/accessKeyID", std::ios::trunc) << key.access_key_id;
    std::ofstream(credentials + "/secretAccessKey", std::ios::trunc) << key.secret_access_key;
    std::ofstream(credentials + "/region", std::ios::trunc) << "us-east-1";
  };
  const AwsCredentials first = S3Server::Credentials(), second = {"ROTATED2", "second-secret-key", ""};
  write_credentials(first);
  StoreConfig config;
  config.provider = "S3";
  config.container = "backups";
  config.prefix = "etcd-main";
  config.endpoint_override = (*server)->endpoint();
  config.credentials = credentials;
  config.scratch_directory = dir_->path() + "/scratch";
  auto objects = OpenObjectStore(config);
  ASSERT_TRUE(objects.ok()) << objects.error().message;
  BackupStore store(std::move(*objects));
  // The snapshots of each kind in the bucket, as ruleplane lists them.
  auto count = [&](const std::string& kind) {
    auto listing = store.List();
    EXPECT_TRUE(listing.ok()) << listing.error().message;
    if (!listing.ok()) return -1;
    return static_cast<int>(
        std::count_if(listing->snapshots.begin(), listing->snapshots.end(),
                      [&](const StoredSnapshot& snapshot) { return snapshot.kind == kind; }));
  };
  auto await = [&](const std::string& kind, int wanted) {
    for (int attempt = 0; attempt < 300 && count(kind) < wanted; ++attempt)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return count(kind);
  };

  const int leader = Leader();
  ASSERT_GE(leader, 0);
  ChildProcess agent =
      StartAgent(leader, endpoints_, "", "agent-s3.log",
                 {"--k8s-heartbeat-duration", "1s", "--delta-snapshot-period", "1s", "--schedule",
                  "0 0 1 1 *", "--storage-provider", "S3", "--store-container", "backups", "--store-prefix",
                  "etcd-main", "--store-endpoint-override", (*server)->endpoint(), "--store-credentials",
                  credentials, "--snapstore-temp-directory", config.scratch_directory});
  ASSERT_EQ(await("Full", 1), 1) << Slurp(dir_->path() + "/agent-s3.log");
  NumberedWriter writer(etcd_->ClientUrls(), "s3/");
  ASSERT_TRUE(writer.WriteSome(20).ok());
  ASSERT_GE(await("Incr", 1), 1) << Slurp(dir_->path() + "/agent-s3.log");
  EXPECT_EQ(count("Full"), 1) << "no second full before the credentials change";

  // Modification times have a one-second grain here (they decide the full).
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  ASSERT_TRUE((*server)->SetAccessKeys({first, second}).ok());
  write_credentials(second);
  ASSERT_TRUE((*server)->SetAccessKeys({second}).ok());
  // The test's own listing follows the files too.
  EXPECT_EQ(await("Full", 2), 2) << Slurp(dir_->path() + "/agent-s3.log");
  const int64_t before_rotation = writer.acknowledged().back().revision;
  const int deltas = count("Incr");
  ASSERT_TRUE(writer.WriteSome(20).ok());
  EXPECT_GT(await("Incr", deltas + 1), deltas) << Slurp(dir_->path() + "/agent-s3.log");
  agent.Stop();
  EXPECT_EQ(TextAt(BackupReady(), {"status"}), "True");
  EXPECT_EQ(TextAt(Get("leases", "etcd-main-full-snap"), {"spec", "holderIdentity"}),
            std::to_string(before_rotation))
      << "the second full holds every write made before it";
}

// etcd-backup-restore's HTTP API on --server-port, as etcd-druid calls it:
// the leader's agent on 127.0.0.1 and a non-leader's on 127.0.0.2 with the
// same port (the leader's client URL is on 127.0.0.1, where the non-leader
// forwards). /healthz; /snapshot/full on the leader and on the non-leader
// (forwarded), each holding the cluster's revision then; ?final=true (a
// .final name); /snapshot/delta after writes; /snapshot/latest; /metrics
// with the newest full's revision.
TEST_F(MemberAgentTest, ServesEtcdBackupRestoresApiAndMetricsAndForwardsToTheLeader) {
  const int leader = Leader();
  ASSERT_GE(leader, 0);
  const int other = (leader + 1) % 3;
  const std::string port = std::to_string(FreeLoopbackPort());
  // No scheduled full after the first and no scheduled delta while the test runs.
  const std::vector<std::string> flags = {
      "--k8s-heartbeat-duration",    "1s", "--schedule",    "0 0 1 1 *", "--delta-snapshot-period",     "1h",
      "--garbage-collection-period", "1h", "--server-port", port,        "--snapshot-request-interval", "0s"};
  std::vector<std::string> leader_flags = flags, other_flags = flags;
  leader_flags.insert(leader_flags.end(), {"--server-host", "127.0.0.1"});
  other_flags.insert(other_flags.end(), {"--server-host", "127.0.0.2"});
  ChildProcess leading = StartAgent(leader, endpoints_, store_, "agent-leader.log", leader_flags);
  ChildProcess following = StartAgent(other, endpoints_, store_, "agent-other.log", other_flags);
  const std::string at_leader = "http://127.0.0.1:" + port, at_other = "http://127.0.0.2:" + port;
  HttpClient http;
  auto call = [&](const std::string& method, const std::string& url) {
    auto response = http.Send(method, url, "", std::chrono::seconds(60));
    EXPECT_TRUE(response.ok()) << url << ": " << response.error().message;
    return response.ok() ? *response : HttpResponse{};
  };
  auto json = [](const HttpResponse& response) {
    auto parsed = ParseJson(response.body);
    EXPECT_TRUE(parsed.ok()) << response.body;
    return parsed.ok() ? *parsed : Value::Null();
  };
  auto revision = [&] {
    EtcdClient client = etcd_->Client();
    auto status = client.MemberStatus(etcd_->member(leader).client_url, log_);
    EXPECT_TRUE(status.ok());
    return status.ok() ? status->revision : -1;
  };
  auto stored = [&](const std::string& name) {
    const std::vector<std::string> files = StoreFiles(store_);
    return std::find(files.begin(), files.end(), "v2/" + name) != files.end();
  };
  const std::string logs = dir_->path() + "/agent-leader.log";

  for (const std::string& agent : {at_leader, at_other}) {
    ASSERT_TRUE(Eventually(
        [&] {
          auto response = http.Send("GET", agent + "/healthz", "", std::chrono::seconds(2));
          return response.ok() && response->status == 200 && response->body == R"({"health":true})";
        },
        std::chrono::seconds(20)))
        << agent << "\n"
        << Slurp(logs);
  }
  // The first round's full snapshot, before any request.
  ASSERT_TRUE(Eventually([&] { return !StoreFiles(store_).empty(); }, std::chrono::seconds(20)))
      << Slurp(logs);

  NumberedWriter writer(etcd_->ClientUrls(), "api/");
  ASSERT_TRUE(writer.WriteSome(10).ok());
  // The delta period (1h) starts with the first full snapshot: the rounds
  // after it (counted in /metrics) take no delta of these writes.
  auto rounds = [&] {
    auto page = http.Send("GET", at_leader + "/metrics", "", std::chrono::seconds(10));
    const std::string name = "\nruleplane_backup_rounds_total ";
    const size_t at = page.ok() ? page->body.find(name) : std::string::npos;
    return at == std::string::npos ? -1 : std::atoi(page->body.c_str() + at + name.size());
  };
  const int rounds_before = rounds();
  ASSERT_GE(rounds_before, 0);
  // Three: the first may still be the one that took the full snapshot.
  ASSERT_TRUE(Eventually([&] { return rounds() >= rounds_before + 3; }, std::chrono::seconds(20)))
      << Slurp(logs);
  for (const std::string& name : StoreFiles(store_)) EXPECT_EQ(name.find("Incr-"), std::string::npos) << name;
  HttpResponse response = call("POST", at_leader + "/snapshot/full");
  ASSERT_EQ(response.status, 200) << response.body << Slurp(logs);
  Value snapshot = json(response);
  EXPECT_EQ(TextAt(snapshot, {"kind"}), "Full");
  EXPECT_EQ(ValueAt(snapshot, {"lastRevision"})->int_value(), revision());
  EXPECT_EQ(ValueAt(snapshot, {"isFinal"})->bool_value(), false);
  EXPECT_EQ(TextAt(snapshot, {"prefix"}), "etcd-main/v2/");
  EXPECT_TRUE(stored(TextAt(snapshot, {"snapName"}))) << response.body;

  // Asked of a member that does not lead: forwarded to the leader's agent.
  ASSERT_TRUE(writer.WriteSome(5).ok());
  response = call("GET", at_other + "/snapshot/full");
  ASSERT_EQ(response.status, 200) << response.body << Slurp(dir_->path() + "/agent-other.log");
  snapshot = json(response);
  EXPECT_EQ(ValueAt(snapshot, {"lastRevision"})->int_value(), revision());
  EXPECT_TRUE(stored(TextAt(snapshot, {"snapName"}))) << response.body;

  EXPECT_EQ(call("GET", at_leader + "/snapshot/full?final=maybe").status, 400);
  response = call("POST", at_leader + "/snapshot/full?final=true");
  ASSERT_EQ(response.status, 200) << response.body;
  const Value final_full = json(response);
  EXPECT_EQ(ValueAt(final_full, {"isFinal"})->bool_value(), true);
  const std::string final_name = TextAt(final_full, {"snapName"});
  EXPECT_TRUE(final_name.ends_with(".gz.final")) << response.body;
  EXPECT_TRUE(stored(final_name)) << final_name;

  ASSERT_TRUE(writer.WriteSome(7).ok());
  response = call("POST", at_leader + "/snapshot/delta");
  ASSERT_EQ(response.status, 200) << response.body;
  const Value delta = json(response);
  EXPECT_EQ(TextAt(delta, {"kind"}), "Incr");
  EXPECT_EQ(ValueAt(delta, {"startRevision"})->int_value(),
            ValueAt(final_full, {"lastRevision"})->int_value() + 1);
  EXPECT_EQ(ValueAt(delta, {"lastRevision"})->int_value(), writer.acknowledged().back().revision);
  EXPECT_TRUE(stored(TextAt(delta, {"snapName"}))) << response.body;

  response = call("GET", at_other + "/snapshot/latest");
  ASSERT_EQ(response.status, 200) << response.body;
  const Value latest = json(response);
  EXPECT_EQ(TextAt(latest, {"fullSnapshot", "snapName"}), final_name);
  const Value* deltas = ValueAt(latest, {"deltaSnapshots"});
  ASSERT_TRUE(deltas != nullptr && deltas->is_list()) << response.body;
  ASSERT_EQ(deltas->list_value().size(), 1u) << response.body;
  EXPECT_EQ(TextAt(deltas->list_value()[0], {"snapName"}), TextAt(delta, {"snapName"}));

  response = call("GET", at_leader + "/metrics");
  ASSERT_EQ(response.status, 200);
  EXPECT_TRUE(Contains(response.body, "\netcdbr_snapshot_latest_revision{kind=\"Full\"} " +
                                          std::to_string(ValueAt(final_full, {"lastRevision"})->int_value()) +
                                          "\n"))
      << response.body;
  EXPECT_TRUE(Contains(response.body, "\netcdbr_snapshot_latest_revision{kind=\"Incr\"} " +
                                          std::to_string(writer.acknowledged().back().revision) + "\n"))
      << response.body;
  EXPECT_TRUE(Contains(response.body, "\netcdbr_snapshot_gc_total{kind=\"Full\",succeeded=\"true\"} "))
      << response.body;
  EXPECT_TRUE(
      Contains(response.body, "\netcdbr_snapshot_duration_seconds_count{kind=\"Full\",succeeded=\"true\"} "))
      << response.body;
  following.Stop();
  leading.Stop();
}

class MemberAgentScaleInTest : public MemberAgentTest {
 protected:
  int Members() const override { return 5; }
  std::vector<std::string> EtcdFlags() const override { return {"--strict-reconfig-check=false"}; }

  void SetUp() override {
    MemberAgentTest::SetUp();
    if (HasFatalFailure()) return;
    // The leading agent never removes its own member: member 0 leads.
    EtcdClient client = etcd_->Client();
    auto status = client.MemberStatus(etcd_->member(0).client_url, log_);
    ASSERT_TRUE(status.ok()) << status.error().message;
    const int leader = Leader();
    ASSERT_GE(leader, 0);
    if (leader != 0) {
      auto moved = RunCommand({"etcdctl", "--endpoints", etcd_->member(leader).client_url, "move-leader",
                               MemberIdHex(status->member_id)},
                              std::chrono::seconds(30));
      ASSERT_TRUE(moved.ok() && moved->exit_code == 0) << (moved.ok() ? moved->err : moved.error().message);
    }
    ASSERT_TRUE(Eventually([&] { return Leader() == 0; }, std::chrono::seconds(10)));
  }

  // The names in etcd's member list now.
  std::vector<std::string> MemberNames() {
    EtcdClient client = etcd_->Client();
    auto members = client.MemberList(log_);
    EXPECT_TRUE(members.ok()) << members.error().message;
    std::vector<std::string> names;
    for (const EtcdMember& member : members.ok() ? *members : std::vector<EtcdMember>{})
      names.push_back(member.name);
    std::sort(names.begin(), names.end());
    return names;
  }

  // A Pod named `name`, as the StatefulSet made etcd-main-2 (on a node, running).
  void CreatePod(const std::string& name) {
    const Value pod = Get("pods", "etcd-main-2");
    auto object = ParseJson(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                            R"("},"spec":)" + FormatJson(*ValueAt(pod, {"spec"})) + "}");
    ASSERT_TRUE(object.ok());
    auto created = admin_->Create({"v1", "pods", "default", "", ""}, *object, log_);
    ASSERT_TRUE(created.ok()) << created.error().message;
  }

  // The JSON lines the agent printed.
  std::vector<Value> Rounds(const std::string& output) {
    std::vector<Value> rounds;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
      auto round = ParseJson(line);
      if (round.ok()) rounds.push_back(*round);
    }
    return rounds;
  }

  static std::vector<std::string> Strings(const Value& round, std::string_view field) {
    std::vector<std::string> strings;
    const Value* list = ValueAt(round, {field});
    if (list != nullptr && list->is_list()) {
      for (const Value& item : list->list_value()) strings.push_back(item.string_value());
    }
    return strings;
  }
};

// The leading agent, running with 1 s heartbeats, removes etcd-main-4 and
// then etcd-main-3, each in a heartbeat of its own: its log has one name per
// line, and etcd's member list, read every 20 ms, goes 5, 4, 3.
TEST_F(MemberAgentScaleInTest, TheLeaderRemovesOneSurplusMemberPerHeartbeat) {
  ChildProcess agent = StartAgent(0, endpoints_, store_, "agent.log", {"--k8s-heartbeat-duration", "1s"});
  std::vector<size_t> counts;  // each change of the member count, in order
  const bool shrunk = Eventually(
      [&] {
        const size_t count = MemberNames().size();
        if (counts.empty() || counts.back() != count) counts.push_back(count);
        return count == 3;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(20));
  // etcd's member list can show the removal before the agent's request has
  // returned; stopped then, the agent cancels it and reports no removal.
  Eventually([&] { return Contains(Slurp(dir_->path() + "/agent.log"), R"("removed":["etcd-main-3"])"); },
             std::chrono::seconds(30), std::chrono::milliseconds(50));
  EXPECT_EQ(agent.Stop(), 0);
  const std::string log = Slurp(dir_->path() + "/agent.log");
  ASSERT_TRUE(shrunk) << log;
  EXPECT_EQ(counts, (std::vector<size_t>{5, 4, 3})) << log;
  EXPECT_EQ(MemberNames(), (std::vector<std::string>{"etcd-main-0", "etcd-main-1", "etcd-main-2"}));
  std::vector<std::vector<std::string>> removals;
  for (const Value& round : Rounds(log)) {
    if (!Strings(round, "removed").empty()) removals.push_back(Strings(round, "removed"));
  }
  EXPECT_EQ(removals, (std::vector<std::vector<std::string>>{{"etcd-main-4"}, {"etcd-main-3"}})) << log;
}

// Heartbeat by heartbeat (--once): with members 1 and 2 stopped, removing the
// healthy etcd-main-4 would leave 2 healthy of 4 voters, and etcd-main-3's
// Pod runs: nothing is removed. With 1 and 2 back, etcd-main-4 goes, and
// etcd-main-3 stays while its Pod runs; once the Pod is being deleted, it goes.
TEST_F(MemberAgentScaleInTest, NeitherAMemberWhosePodRunsNorOneWithoutWhichQuorumIsLostIsRemoved) {
  CreatePod("etcd-main-3");
  etcd_->StopMember(1);
  etcd_->StopMember(2);
  const std::vector<std::string> all = {"etcd-main-0", "etcd-main-1", "etcd-main-2", "etcd-main-3",
                                        "etcd-main-4"};
  for (int heartbeat = 0; heartbeat < 2; ++heartbeat) {
    const CommandResult run = Agent(0);
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(Strings(Round(run), "removed"), std::vector<std::string>{}) << run.out;
    EXPECT_EQ(Strings(Round(run), "kept"),
              (std::vector<std::string>{
                  "etcd-main-4: without it 2 of 4 voting members would be healthy, no majority",
                  "etcd-main-3: its Pod runs"}))
        << run.out;
    EXPECT_EQ(MemberNames(), all);
  }

  for (int i : {1, 2}) {
    ASSERT_TRUE(etcd_->StartMember(i, "existing").ok());
    ASSERT_TRUE(etcd_->WaitReady(i).ok());
  }
  EtcdClient client = etcd_->Client();
  ASSERT_TRUE(Eventually(
      [&] {
        for (int i : {1, 2}) {
          auto status = client.MemberStatus(etcd_->member(i).client_url, log_);
          if (!status.ok() || status->leader == 0) return false;
        }
        return true;
      },
      std::chrono::seconds(30)));
  CommandResult run = Agent(0);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(Strings(Round(run), "removed"), std::vector<std::string>{"etcd-main-4"}) << run.out;
  EXPECT_EQ(MemberNames(),
            (std::vector<std::string>{"etcd-main-0", "etcd-main-1", "etcd-main-2", "etcd-main-3"}));
  run = Agent(0);
  EXPECT_EQ(Strings(Round(run), "removed"), std::vector<std::string>{}) << run.out;
  EXPECT_EQ(Strings(Round(run), "kept"), std::vector<std::string>{"etcd-main-3: its Pod runs"}) << run.out;

  // Deleted with the default grace period: on its node, it stays until the
  // kubelet confirms, with a deletionTimestamp.
  ASSERT_TRUE(admin_->Delete({"v1", "pods", "default", "etcd-main-3", ""}, {}, std::nullopt, log_).ok());
  ASSERT_NE(ValueAt(Get("pods", "etcd-main-3"), {"metadata", "deletionTimestamp"}), nullptr);
  run = Agent(0);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(Strings(Round(run), "removed"), std::vector<std::string>{"etcd-main-3"}) << run.out;
  EXPECT_EQ(MemberNames(), (std::vector<std::string>{"etcd-main-0", "etcd-main-1", "etcd-main-2"}));
}

// In a Pod, member-init reads the Etcd and its own Lease from the API server
// (under the member Role), and the Lease carries the revision the agent saw.
TEST_F(MemberAgentTest, MemberInitReadsTheEtcdAndItsLeaseWithTheRevisionFromTheApiServer) {
  const CommandResult round = Agent(0);
  ASSERT_EQ(round.exit_code, 0) << round.out << round.err;
  const Value lease = Get("leases", "etcd-main-0");
  const std::string revision = TextAt(lease, {"metadata", "annotations", "ruleplane.dev/revision"});
  ASSERT_FALSE(revision.empty()) << FormatJson(lease);
  EXPECT_GT(std::stoll(revision), 0);
  const std::string holder = TextAt(lease, {"spec", "holderIdentity"});
  EXPECT_EQ(TextAt(lease, {"metadata", "annotations", kRevisionMemberAnnotation}),
            holder.substr(0, holder.rfind(':')))
      << "the member and cluster of the holder, " << holder;

  // etcd-druid's template for member 0: its initial-cluster names every member, whose member list is
  // observed.
  ASSERT_TRUE(etcd_->WriteConfigTemplate(0, dir_->path() + "/template.yaml").ok());
  const CommandResult observed = testing_support::Ruleplane(
      "observe member --name etcd-main-0 --peer-url " + etcd_->member(0).peer_url + " --data-dir " +
      dir_->path() + "/pod-0/data --config-template " + dir_->path() +
      "/template.yaml --etcd-name etcd-main --namespace default --kubeconfig " + agent_kubeconfig_);
  ASSERT_EQ(observed.exit_code, 0) << observed.out << observed.err;
  auto snapshot = ParseJson(observed.out);
  ASSERT_TRUE(snapshot.ok()) << observed.out;
  EXPECT_EQ(TextAt(*snapshot, {"etcd", "metadata", "name"}), "etcd-main");
  EXPECT_EQ(TextAt(*snapshot, {"memberLease", "spec", "holderIdentity"}),
            TextAt(lease, {"spec", "holderIdentity"}));
  EXPECT_EQ(TextAt(*snapshot, {"memberLease", "metadata", "annotations", "ruleplane.dev/revision"}),
            revision);
  ASSERT_NE(ValueAt(*snapshot, {"memberList", "members"}), nullptr) << observed.out;
  EXPECT_EQ(ValueAt(*snapshot, {"memberList", "members"})->list_value().size(), 3u);
  // What the conformance check takes member-init's observer to write is what it writes.
  auto shape = ParseObservedShape(kMemberInitSnapshotShape);
  ASSERT_TRUE(shape.ok()) << shape.error().message;
  EXPECT_EQ(ShapeMismatches(*snapshot, *shape), std::vector<std::string>{}) << observed.out;

  const CommandResult missing = testing_support::Ruleplane(
      "observe member --name etcd-main-0 --peer-url " + etcd_->member(0).peer_url + " --data-dir " +
      dir_->path() + "/pod-0/data --config-template " + dir_->path() +
      "/template.yaml --etcd-name no-such-etcd --namespace default --kubeconfig " + agent_kubeconfig_);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--etcd-name"), std::string::npos) << missing.err;
}

TEST_F(MemberAgentTest, AStoppedMembersLeaseExpiresAndTheNextPlanSaysSo) {
  // Three heartbeats of 2 s: each renewal holds for 6 s.
  for (int i = 0; i < 3; ++i) {
    const CommandResult run = Agent(i, "--k8s-heartbeat-duration 2s");
    ASSERT_EQ(run.exit_code, 0) << run.out;
    EXPECT_EQ(ValueAt(Get("leases", etcd_->member(i).name), {"spec", "leaseDurationSeconds"})->int_value(),
              6);
  }
  for (const std::string& step : Steps(Plan())) EXPECT_FALSE(Contains(step, "LeaseExpired")) << step;

  const int leader = Leader();
  ASSERT_GE(leader, 0);
  const int stopped = (leader + 1) % 3;
  const std::string before = TextAt(Get("leases", etcd_->member(stopped).name), {"spec", "renewTime"});
  etcd_->StopMember(stopped);
  std::this_thread::sleep_for(std::chrono::seconds(7));
  for (int i = 0; i < 3; ++i) {
    const CommandResult run = Agent(i, "--k8s-heartbeat-duration 2s");
    EXPECT_EQ(run.exit_code, i == stopped ? 1 : 0) << run.out;
    if (i == stopped) {
      EXPECT_TRUE(Contains(run.out, "does not answer")) << run.out;
    }
  }
  EXPECT_EQ(TextAt(Get("leases", etcd_->member(stopped).name), {"spec", "renewTime"}), before)
      << "a stopped member's lease is not renewed";

  const std::vector<std::string> steps = Steps(Plan());
  const std::string expired = "SetMemberStatus " + etcd_->member(stopped).name + " Unknown LeaseExpired";
  EXPECT_TRUE(std::find(steps.begin(), steps.end(), expired) != steps.end())
      << ::testing::PrintToString(steps);
  for (const std::string& step : steps) {
    if (step != expired) {
      EXPECT_FALSE(Contains(step, "LeaseExpired")) << step;
    }
  }
}

// After a quorum loss the survivor's agent renews nothing (its member knows no
// leader) but records the revision its member holds now on the Lease: writes
// acknowledged after the last renewal count in a re-bootstrap's data-loss bound.
TEST_F(MemberAgentTest, ASurvivorOfAQuorumLossRecordsItsLiveRevisionWithoutRenewing) {
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Agent(i).exit_code, 0) << i;
  const std::string renewed = TextAt(Get("leases", "etcd-main-0"), {"spec", "renewTime"});
  const std::string recorded =
      TextAt(Get("leases", "etcd-main-0"), {"metadata", "annotations", kRevisionAnnotation});
  EtcdClient client = etcd_->Client();
  auto own = client.MemberStatus(etcd_->member(0).client_url, log_);
  ASSERT_TRUE(own.ok()) << own.error().message;
  int64_t written = -1;
  for (int i = 0; i < 20; ++i) {
    auto put = client.Put("/after-the-renewal/" + std::to_string(i), "v", log_);
    ASSERT_TRUE(put.ok()) << put.error().message;
    written = *put;
  }
  etcd_->StopMember(1);
  etcd_->StopMember(2);
  ASSERT_TRUE(etcd_->WaitLeaderless(0)) << "etcd-main-0 still knows a leader";

  const CommandResult run = Agent(0);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_TRUE(Contains(run.out, "knows no leader")) << run.out;
  const Value lease = Get("leases", "etcd-main-0");
  EXPECT_EQ(TextAt(lease, {"spec", "renewTime"}), renewed) << "a member without a leader is not renewed";
  EXPECT_LT(std::stoll(recorded), written);
  EXPECT_EQ(TextAt(lease, {"metadata", "annotations", kRevisionAnnotation}), std::to_string(written))
      << "the revision after the last renewal";
  EXPECT_TRUE(ParseRfc3339(TextAt(lease, {"metadata", "annotations", kRevisionTimeAnnotation})).ok());
  EXPECT_EQ(TextAt(lease, {"metadata", "annotations", kRevisionMemberAnnotation}),
            MemberIdHex(own->member_id) + ":" + MemberIdHex(own->cluster_id))
      << "whose revision it is: the controller counts it only for a member etcd lists";
}

// A full snapshot that takes 10 s (the leader reached over a slow link, on
// loopback) while the heartbeat is 1 s: read from the API server, the leader's
// Lease (3 s) is renewed all along and never expires. Then SIGTERM in the
// middle of a 60 s snapshot ends the agent within seconds, with exit status 0,
// no partial download left in the store and BackupReady not turned False.
TEST_F(MemberAgentTest, TheLeaseIsRenewedWhileASlowSnapshotIsTakenAndSigtermEndsIt) {
  const int leader = Leader();
  ASSERT_GE(leader, 0);
  const std::string lease_name = etcd_->member(leader).name;
  auto slow = SlowSnapshotProxy::Start(etcd_->member(leader).client_url, std::chrono::seconds(10));
  ASSERT_TRUE(slow.ok()) << slow.error().message;
  const std::string created = TextAt(Get("leases", lease_name), {"spec", "renewTime"});
  ChildProcess agent = StartAgent(leader, (*slow)->url(), store_, "agent.log",
                                  {"--k8s-heartbeat-duration", "1s", "--delta-snapshot-period", "1h"});
  // From the agent's first renewal on (the snapshot may start before it).
  ASSERT_TRUE(Eventually(
      [&] {
        return (*slow)->snapshot_in_progress() &&
               TextAt(Get("leases", lease_name), {"spec", "renewTime"}) != created;
      },
      std::chrono::seconds(30), std::chrono::milliseconds(20)))
      << Slurp(dir_->path() + "/agent.log");
  std::set<std::string> renewals;
  int64_t oldest_ms = 0;  // the longest time since the last renewal, seen while the snapshot ran
  while ((*slow)->snapshot_in_progress()) {
    const Value lease = Get("leases", lease_name);
    const std::string renewed = TextAt(lease, {"spec", "renewTime"});
    auto at = ParseRfc3339(renewed);
    ASSERT_TRUE(at.ok()) << renewed;
    const int64_t now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    oldest_ms = std::max(oldest_ms, (now_ns - (at->seconds * 1000000000 + at->nanos)) / 1000000);
    renewals.insert(renewed);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ((*slow)->snapshots_completed(), 1);
  EXPECT_GE(renewals.size(), 5u) << "renewals seen during the 10 s snapshot: "
                                 << ::testing::PrintToString(renewals);
  EXPECT_LT(oldest_ms, 3000) << "the 3 s Lease expired while the snapshot ran: " << oldest_ms << " ms";
  ASSERT_TRUE(Eventually(
      [&] {
        const std::vector<std::string> files = StoreFiles(store_);
        return std::any_of(files.begin(), files.end(),
                           [](const std::string& name) { return name.rfind("v2/Full-", 0) == 0; });
      },
      std::chrono::seconds(10)))
      << Slurp(dir_->path() + "/agent.log");
  EXPECT_EQ(agent.Stop(), 0) << Slurp(dir_->path() + "/agent.log");

  // SIGTERM while a snapshot drips (an empty store: a full one is due at once).
  const std::string second_store = dir_->path() + "/store-2/etcd-main";
  auto slower = SlowSnapshotProxy::Start(etcd_->member(leader).client_url, std::chrono::seconds(60));
  ASSERT_TRUE(slower.ok()) << slower.error().message;
  agent =
      StartAgent(leader, (*slower)->url(), second_store, "agent-2.log", {"--k8s-heartbeat-duration", "1s"});
  ASSERT_TRUE(Eventually([&] { return (*slower)->snapshot_in_progress(); }, std::chrono::seconds(30),
                         std::chrono::milliseconds(20)))
      << Slurp(dir_->path() + "/agent-2.log");
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto signalled = std::chrono::steady_clock::now();
  agent.Kill(SIGTERM);
  EXPECT_TRUE(
      Eventually([&] { return !agent.running(); }, std::chrono::seconds(5), std::chrono::milliseconds(20)))
      << "still running "
      << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - signalled)
             .count()
      << " ms after SIGTERM";
  EXPECT_EQ(agent.Stop(), 0) << Slurp(dir_->path() + "/agent-2.log");
  EXPECT_TRUE(Eventually([&] { return !(*slower)->snapshot_in_progress(); }, std::chrono::seconds(5)));
  EXPECT_EQ((*slower)->snapshots_abandoned(), 1);
  EXPECT_EQ(::testing::PrintToString(StoreFiles(second_store)), "{}")
      << "no snapshot and no partial download";
  EXPECT_NE(TextAt(BackupReady(), {"status"}), "False") << "an interrupted backup is not a failed upload";
}

}  // namespace
}  // namespace ruleplane::testing
