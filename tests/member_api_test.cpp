// member-agent's HTTP API (member_api.h) over a fake backend: the routes,
// etcd-backup-restore's JSON for snapshots and /snapshot/latest, forwarding
// to the leader's agent, and BackupMetrics' Prometheus text.
#include "member/member_api.h"

#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "engine/common/json_value.h"
#include "member/backup_metrics.h"
#include "tests/support/test_helpers.h"

namespace ruleplane {
namespace {

using testing::TextAt;

StoredSnapshot Stored(const std::string& path) {
  auto snapshot = StoredSnapshotOf(path);
  EXPECT_TRUE(snapshot.has_value()) << path;
  return snapshot.value_or(StoredSnapshot{});
}

class FakeBackend : public MemberApiBackend {
 public:
  bool Healthy() override { return healthy; }
  bool BacksUp() override { return backs_up; }
  RequestedSnapshot TakeSnapshot(const SnapshotRequest& request) override {
    requests.push_back(request);
    return answer;
  }
  Result<BackupStoreListing> ListStore() override { return listing; }
  uint64_t ClusterId() override { return cluster_id; }
  std::string StorePrefix() override { return "etcd-main"; }
  std::string MetricsText() override { return "etcdbr_snapshot_gc_total 0\n"; }
  Result<HttpAnswer> Send(const std::string& method, const std::string& url) override {
    sent.push_back(method + " " + url);
    if (url.ends_with("/healthz")) return HttpAnswer{200, "application/json", R"({"health":true})"};
    return HttpAnswer{200, "application/json", R"({"kind":"Full"})"};
  }

  bool healthy = true;
  bool backs_up = true;
  RequestedSnapshot answer;
  BackupStoreListing listing;
  uint64_t cluster_id = 0;
  std::vector<SnapshotRequest> requests;
  std::vector<std::string> sent;
};

HttpAnswer Answer(const HttpReply& reply) { return reply.slow ? reply.slow() : reply.answer; }

HttpAnswer Ask(FakeBackend& backend, const std::string& method, const std::string& path,
               const std::string& query = "") {
  return Answer(ServeMemberApi({method, path, query}, backend, 8080));
}

TEST(MemberApi, HealthzSaysWhatTheLastHeartbeatFound) {
  FakeBackend backend;
  HttpAnswer answer = Ask(backend, "GET", "/healthz");
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, R"({"health":true})");
  backend.healthy = false;
  answer = Ask(backend, "GET", "/healthz");
  EXPECT_EQ(answer.status, 503);
  EXPECT_EQ(answer.body, R"({"health":false})");
  EXPECT_EQ(Ask(backend, "GET", "/nothing").status, 404);
}

// Any Pod that reached the port could ask for snapshots, and with LimitBased
// collection eight full ones pushed every older backup out: with a client
// CA, the snapshot routes answer only a verified client certificate.
TEST(MemberApi, WithAClientCaOnlyAVerifiedClientCertificateGetsASnapshot) {
  FakeBackend backend;
  backend.answer.outcome = RequestedSnapshot::Outcome::kTaken;
  backend.answer.snapshot = Stored("v2/Full-00000000-00000042-1714557600.gz");
  for (const std::string path : {"/snapshot/full", "/snapshot/delta", "/snapshot/latest"}) {
    const HttpAnswer refused = Answer(ServeMemberApi({"POST", path, ""}, backend, 8080, true, true));
    EXPECT_EQ(refused.status, 403) << path;
    EXPECT_NE(refused.body.find("client certificate"), std::string::npos) << refused.body;
  }
  EXPECT_TRUE(backend.requests.empty()) << "a refused request took a snapshot";
  for (const std::string path : {"/healthz", "/metrics"})
    EXPECT_EQ(Answer(ServeMemberApi({"GET", path, ""}, backend, 8080, true, true)).status, 200) << path;

  const HttpAnswer taken =
      Answer(ServeMemberApi({"POST", "/snapshot/full", "", true}, backend, 8080, true, true));
  EXPECT_EQ(taken.status, 200) << taken.body;
  EXPECT_EQ(backend.requests.size(), 1u);
  // Without a client CA, as etcd-backup-restore: anyone who reaches the port.
  EXPECT_EQ(Answer(ServeMemberApi({"POST", "/snapshot/full", ""}, backend, 8080, true)).status, 200);
}

TEST(MemberApi, AFullSnapshotIsASlowReplyAnsweredWithEtcdBackupRestoresJson) {
  FakeBackend backend;
  backend.answer.outcome = RequestedSnapshot::Outcome::kTaken;
  backend.answer.snapshot = Stored("v2/Full-00000000-00000042-1714557600.gz.final");
  const HttpReply reply = ServeMemberApi({"POST", "/snapshot/full", "final=true"}, backend, 8080);
  ASSERT_TRUE(static_cast<bool>(reply.slow)) << "a snapshot must not be taken on the server's thread";
  EXPECT_TRUE(backend.requests.empty());
  const HttpAnswer answer = reply.slow();
  ASSERT_EQ(backend.requests.size(), 1u);
  EXPECT_TRUE(backend.requests[0].full);
  EXPECT_TRUE(backend.requests[0].final);
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(
      answer.body,
      R"({"createdOn":"2024-05-01T10:00:00Z","immutabilityExpriyTime":"0001-01-01T00:00:00Z",)"
      R"("versionID":null,"kind":"Full","snapDir":"","snapName":"Full-00000000-00000042-1714557600.gz.final",)"
      R"("prefix":"etcd-main/v2/","compressionSuffix":".gz","startRevision":0,"lastRevision":42,)"
      R"("isChunk":false,"isFinal":true})");
}

TEST(MemberApi, FinalMustBeAGoBooleanAndIsFalseUnlessGiven) {
  FakeBackend backend;
  backend.answer.outcome = RequestedSnapshot::Outcome::kTaken;
  backend.answer.snapshot = Stored("v2/Full-00000000-00000042-1714557600");
  EXPECT_EQ(Ask(backend, "GET", "/snapshot/full", "final=maybe").status, 400);
  EXPECT_TRUE(backend.requests.empty());
  EXPECT_EQ(Ask(backend, "GET", "/snapshot/full", "final=F").status, 200);
  EXPECT_EQ(Ask(backend, "GET", "/snapshot/full").status, 200);
  ASSERT_EQ(backend.requests.size(), 2u);
  EXPECT_FALSE(backend.requests[0].final);
  EXPECT_FALSE(backend.requests[1].final);
}

TEST(MemberApi, ADeltaWithNothingNewIsNullAndAFailureIs500) {
  FakeBackend backend;
  backend.answer.outcome = RequestedSnapshot::Outcome::kNothingNew;
  HttpAnswer answer = Ask(backend, "POST", "/snapshot/delta");
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "null");
  ASSERT_EQ(backend.requests.size(), 1u);
  EXPECT_FALSE(backend.requests[0].full);
  backend.answer.outcome = RequestedSnapshot::Outcome::kFailed;
  backend.answer.error = "the store is full";
  answer = Ask(backend, "POST", "/snapshot/delta");
  EXPECT_EQ(answer.status, 500);
  EXPECT_NE(answer.body.find("the store is full"), std::string::npos);
}

TEST(MemberApi, WithoutABackupStoreSnapshotsAre405) {
  FakeBackend backend;
  backend.backs_up = false;
  EXPECT_EQ(Ask(backend, "GET", "/snapshot/full").status, 405);
  EXPECT_EQ(Ask(backend, "GET", "/snapshot/latest").status, 405);
  EXPECT_TRUE(backend.requests.empty());
  EXPECT_EQ(Ask(backend, "GET", "/metrics").status, 200);
}

TEST(MemberApi, ANonLeaderForwardsToTheLeadersAgentOnceItIsHealthy) {
  FakeBackend backend;
  backend.answer.outcome = RequestedSnapshot::Outcome::kNotLeader;
  backend.answer.leader_client_url = "http://10.0.0.7:2379";
  const HttpAnswer answer = Ask(backend, "POST", "/snapshot/full", "final=true");
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, R"({"kind":"Full"})");
  EXPECT_EQ(backend.sent, (std::vector<std::string>{"GET http://10.0.0.7:8080/healthz",
                                                    "POST http://10.0.0.7:8080/snapshot/full?final=true"}));
  backend.answer.leader_client_url = "";
  EXPECT_EQ(Ask(backend, "POST", "/snapshot/full").status, 405);
}

TEST(MemberApi, LeaderAgentUrlIsTheHostWithTheAgentsPortAndScheme) {
  EXPECT_EQ(LeaderAgentUrl("http://10.0.0.1:2379", 8080), "http://10.0.0.1:8080");
  // The agents' scheme, not etcd's: etcd with client TLS, the agents without, and the other way round.
  EXPECT_EQ(LeaderAgentUrl("https://etcd-main-0.etcd-main-peer.default.svc:2379", 9090),
            "http://etcd-main-0.etcd-main-peer.default.svc:9090");
  EXPECT_EQ(LeaderAgentUrl("http://etcd-main-0.etcd-main-peer.default.svc:2379", 9090, true),
            "https://etcd-main-0.etcd-main-peer.default.svc:9090");
  EXPECT_EQ(LeaderAgentUrl("http://[::1]:2379", 8080), "http://[::1]:8080");
  EXPECT_EQ(LeaderAgentUrl("http://127.0.0.1", 8080), "http://127.0.0.1:8080");
  EXPECT_EQ(LeaderAgentUrl("127.0.0.1:2379", 8080), "");
}

TEST(MemberApi, LatestIsTheNewestFullAndTheDeltasAfterIt) {
  BackupStoreListing listing;
  listing.prefix = "etcd-main";
  for (const char* path :
       {"v2/Full-00000000-00000010-1714557600", "v2/Incr-00000011-00000020-1714557610",
        "v1/Backup-1714557620/Full-00000000-00000020-1714557620.gz",
        "v2/Incr-00000021-00000030-1714557630.gz", "v2/Incr-00000031-00000040-1714557640.gz"})
    listing.snapshots.push_back(Stored(path));
  auto latest = ParseJson(LatestSnapshotsJson(listing));
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(TextAt(*latest, {"fullSnapshot", "snapName"}), "Full-00000000-00000020-1714557620.gz");
  EXPECT_EQ(TextAt(*latest, {"fullSnapshot", "snapDir"}), "Backup-1714557620");
  EXPECT_EQ(TextAt(*latest, {"fullSnapshot", "prefix"}), "etcd-main/v1/");
  const Value* deltas = ValueAt(*latest, {"deltaSnapshots"});
  ASSERT_TRUE(deltas != nullptr && deltas->is_list());
  ASSERT_EQ(deltas->list_value().size(), 2u);
  EXPECT_EQ(TextAt(deltas->list_value()[0], {"snapName"}), "Incr-00000021-00000030-1714557630.gz");
  EXPECT_EQ(TextAt(deltas->list_value()[1], {"kind"}), "Incr");

  EXPECT_EQ(LatestSnapshotsJson(BackupStoreListing{}), R"({"fullSnapshot":null,"deltaSnapshots":null})");
}

// Issue 41, hazard 11: another etcd cluster's snapshots on the prefix (a
// member that split off, an Etcd created again) are not this cluster's
// latest; the controller's TriggerFullSnapshot reads its backup from here.
// Before, the other cluster's newer full snapshot was answered.
TEST(MemberApi, LatestListsOnlyTheClusterTheLastHeartbeatAnsweredFor) {
  FakeBackend backend;
  backend.listing.prefix = "etcd-main";
  for (const auto& [path, cluster] :
       std::vector<std::pair<std::string, uint64_t>>{{"v2/Full-00000000-00000010-1714557600.gz", 0xa1},
                                                     {"v2/Incr-00000011-00000020-1714557610.gz", 0xa1},
                                                     {"v2/Incr-00000021-00000030-1714557630.gz", 0},
                                                     {"v2/Full-00000000-00000090-1714557620.gz", 0xb2}}) {
    StoredSnapshot snapshot = Stored(path);
    snapshot.cluster_id = cluster;
    backend.listing.snapshots.push_back(snapshot);
  }
  auto latest = ParseJson(Ask(backend, "GET", "/snapshot/latest").body);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(TextAt(*latest, {"fullSnapshot", "snapName"}), "Full-00000000-00000090-1714557620.gz")
      << "no heartbeat yet: every snapshot counts";

  backend.cluster_id = 0xa1;
  latest = ParseJson(Ask(backend, "GET", "/snapshot/latest").body);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(TextAt(*latest, {"fullSnapshot", "snapName"}), "Full-00000000-00000010-1714557600.gz");
  const Value* deltas = ValueAt(*latest, {"deltaSnapshots"});
  ASSERT_TRUE(deltas != nullptr && deltas->is_list());
  ASSERT_EQ(deltas->list_value().size(), 2u) << "its own delta and the unmarked one (etcd-backup-restore's)";
  EXPECT_EQ(TextAt(deltas->list_value()[1], {"snapName"}), "Incr-00000021-00000030-1714557630.gz");
}

bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(BackupMetrics, NamesTypesAndLabelsAreEtcdBackupRestores) {
  BackupMetrics metrics;
  const std::string initial = metrics.Text();
  EXPECT_TRUE(HasLine(initial, "# TYPE etcdbr_snapshot_duration_seconds histogram"));
  EXPECT_TRUE(HasLine(initial, "# TYPE etcdbr_snapshot_gc_total counter"));
  EXPECT_TRUE(HasLine(initial, "# TYPE etcdbr_snapshot_latest_revision gauge"));
  EXPECT_TRUE(HasLine(initial, R"(etcdbr_snapshot_gc_total{kind="Incr",succeeded="false"} 0)"));
  EXPECT_TRUE(HasLine(initial, R"(etcdbr_snapshotter_failure{error=""} 0)"));
  EXPECT_TRUE(HasLine(initial, R"(etcdbr_snapshot_required{kind="Full"} 0)"));
  EXPECT_TRUE(HasLine(initial, "ruleplane_backup_rounds_total 0"));
  metrics.RoundRun();
  metrics.RoundRun();
  EXPECT_TRUE(HasLine(metrics.Text(), "ruleplane_backup_rounds_total 2"));

  metrics.ObserveStore({Stored("v2/Full-00000000-00000010-1714557600"),
                        Stored("v2/Incr-00000011-00000020-1714557610"),
                        Stored("v2/Incr-00000021-00000025-1714557620")});
  std::string text = metrics.Text();
  EXPECT_TRUE(HasLine(text, R"(etcdbr_snapshot_latest_revision{kind="Full"} 10)"));
  EXPECT_TRUE(HasLine(text, R"(etcdbr_snapshot_latest_revision{kind="Incr"} 25)"));
  EXPECT_TRUE(HasLine(text, R"(etcdbr_snapshot_latest_timestamp{kind="Incr"} 1714557620)"));
  EXPECT_TRUE(HasLine(text, "etcdbr_snapstore_latest_deltas_total 2"));
  EXPECT_TRUE(HasLine(text, "etcdbr_snapstore_latest_deltas_revisions_total 14"));

  metrics.SnapshotFailed("Full", 0.2, "etcd \"main\" does not answer");
  text = metrics.Text();
  EXPECT_TRUE(HasLine(text, R"(etcdbr_snapshot_required{kind="Full"} 1)"));
  EXPECT_TRUE(HasLine(text, R"(etcdbr_snapshot_required{kind="Incr"} 1)"));
  EXPECT_TRUE(HasLine(text, R"(etcdbr_snapshotter_failure{error="etcd \"main\" does not answer"} 1)"));
  EXPECT_TRUE(
      HasLine(text, R"(etcdbr_snapshot_duration_seconds_bucket{kind="Full",succeeded="false",le="0.1"} 0)"));
  EXPECT_TRUE(
      HasLine(text, R"(etcdbr_snapshot_duration_seconds_bucket{kind="Full",succeeded="false",le="0.25"} 1)"));
  EXPECT_TRUE(
      HasLine(text, R"(etcdbr_snapshot_duration_seconds_bucket{kind="Full",succeeded="false",le="+Inf"} 1)"));
  EXPECT_TRUE(HasLine(text, R"(etcdbr_snapshot_duration_seconds_count{kind="Full",succeeded="false"} 1)"));

  metrics.SnapshotTaken(Stored("v2/Full-00000000-00000042-1714557700.gz"), 3);
  metrics.Collected("Full", true);
  metrics.Collected("Incr", true);
  metrics.Collected("Incr", true);
  text = metrics.Text();
  EXPECT_TRUE(HasLine(text, R"(etcdbr_snapshot_latest_revision{kind="Full"} 42)"));
  EXPECT_TRUE(HasLine(text, R"(etcdbr_snapshot_required{kind="Full"} 0)"));
  EXPECT_TRUE(HasLine(text, "etcdbr_snapstore_latest_deltas_total 0"));
  EXPECT_TRUE(HasLine(text, R"(etcdbr_snapshot_duration_seconds_sum{kind="Full",succeeded="true"} 3)"));
  EXPECT_TRUE(HasLine(text, R"(etcdbr_snapshot_gc_total{kind="Incr",succeeded="true"} 2)"));
}

TEST(BackupMetrics, DistinctErrorMessagesAreBounded) {
  BackupMetrics metrics;
  for (int i = 0; i < 40; ++i) metrics.Failure("revision " + std::to_string(i) + " is compacted");
  const std::string text = metrics.Text();
  size_t series = 0;
  for (size_t at = text.find("etcdbr_snapshotter_failure{"); at != std::string::npos;
       at = text.find("etcdbr_snapshotter_failure{", at + 1))
    ++series;
  EXPECT_LE(series, BackupMetrics::kMaxErrorSeries + 2);
  EXPECT_TRUE(HasLine(text, R"(etcdbr_snapshotter_failure{error="other"} 24)")) << text;
}

// A request nobody serves ends at its timeout; Close answers one that waits.
TEST(MemberBackupsRequests, ARequestEndsAtItsTimeoutOrWhenClosed) {
  EtcdClient cluster(EtcdClientConfig{});
  KubeClient kube(KubeConfig{});
  BackupStore store(std::string("/nonexistent/store"));
  MemberBackups backups(MemberAgentOptions{}, cluster, kube, store);
  RequestedSnapshot answer = backups.Request({}, std::chrono::milliseconds(50));
  EXPECT_EQ(answer.outcome, RequestedSnapshot::Outcome::kFailed);
  EXPECT_NE(answer.error.find("no answer"), std::string::npos) << answer.error;

  auto waiting = std::async(std::launch::async, [&] { return backups.Request({}, std::chrono::minutes(1)); });
  std::atomic<bool> stop{false};
  // The backup thread's wait returns at once: a request is queued.
  const auto started = std::chrono::steady_clock::now();
  while (waiting.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready &&
         std::chrono::steady_clock::now() - started < std::chrono::milliseconds(200)) {
  }
  EXPECT_TRUE(backups.WaitForWork(std::chrono::steady_clock::now() + std::chrono::minutes(1), stop));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  backups.Close();
  answer = waiting.get();
  EXPECT_EQ(answer.outcome, RequestedSnapshot::Outcome::kFailed);
  EXPECT_NE(answer.error.find("stopping"), std::string::npos) << answer.error;
}

}  // namespace
}  // namespace ruleplane
