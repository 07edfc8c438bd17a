// Leader election through a coordination.k8s.io/v1 Lease against a real
// kube-apiserver 1.20.2, with short durations (lease 2 s, renew deadline
// 1.5 s, retry 200 ms): a new lease acquired and kept while renewed; taken
// over only after the lease duration as the taker's own clock measures it
// (the holder's clock is an hour behind); two electors racing on one
// resourceVersion, one winner; Run() losing a lease someone else took and
// saying so; Run() releasing the lease on stop so that another takes it at
// once.
#include "adapters/kubernetes/leader_election.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <latch>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "adapters/kubernetes/kube_client.h"
#include "engine/common/json_value.h"
#include "tests/support/kube_cluster.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;
using std::chrono::system_clock;

KubeResource LeaseResource(const std::string& name) {
  return {"coordination.k8s.io/v1", "leases", "default", name, ""};
}

LeaderElectionConfig Config(const std::string& lease, const std::string& identity) {
  return {"default", lease, identity, milliseconds(2000), milliseconds(1500), milliseconds(200)};
}

// An elector's Run() on a thread of its own, stopped and joined when this
// goes out of scope, recording what it told on_change and what it returned.
class RunningElector {
 public:
  explicit RunningElector(LeaderElector& elector) {
    thread_ = std::thread([this, &elector] {
      Status ended = elector.Run([this] { return stop_.load(); },
                                 [this](bool leading) {
                                   std::lock_guard lock(mutex_);
                                   changes_.push_back(leading);
                                 });
      std::lock_guard lock(mutex_);
      result_ = ended;
    });
  }
  ~RunningElector() {
    stop_ = true;
    thread_.join();
  }

  void Stop() { stop_ = true; }
  std::vector<bool> changes() {
    std::lock_guard lock(mutex_);
    return changes_;
  }
  std::optional<Status> result() {
    std::lock_guard lock(mutex_);
    return result_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<bool> changes_;
  std::optional<Status> result_;
  std::thread thread_;
};

class LeaderElectionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("leader-election");
    auto kube = KubeCluster::Start(dir_->path());
    ASSERT_TRUE(kube.ok()) << kube.error().message;
    kube_ = kube->release();
  }
  static void TearDownTestSuite() {
    delete kube_;
    delete dir_;
  }
  void SetUp() override {
    if (kube_ == nullptr) GTEST_FAIL() << "the API server did not start";
  }

  // The Lease as the API server holds it.
  static Value Lease(const std::string& name) {
    KubeClient admin(kube_->AdminConfig());
    RequestLog log;
    auto lease = admin.Get(LeaseResource(name), log);
    EXPECT_TRUE(lease.ok()) << lease.error().message;
    return lease.ok() ? *lease : Value::Null();
  }

  static TempDir* dir_;
  static KubeCluster* kube_;
};

TempDir* LeaderElectionTest::dir_ = nullptr;
KubeCluster* LeaderElectionTest::kube_ = nullptr;

// A round's result: whether the elector holds the lease after it (false,
// and a failure of the test, when the round failed).
bool Holds(const Result<bool>& round) {
  EXPECT_TRUE(round.ok()) << round.error().message;
  return round.ok() && *round;
}

TEST_F(LeaderElectionTest, TheFirstAcquiresANewLeaseAndKeepsItWhileItRenews) {
  KubeClient kube_a(kube_->AdminConfig()), kube_b(kube_->AdminConfig());
  LeaderElector a(kube_a, Config("new-lease", "a"));
  LeaderElector b(kube_b, Config("new-lease", "b"));
  EXPECT_FALSE(a.IsLeader());

  const auto acquired = system_clock::now();
  ASSERT_TRUE(Holds(a.TryAcquireOrRenew(acquired)));
  EXPECT_TRUE(a.IsLeader());
  Value lease = Lease("new-lease");
  EXPECT_EQ(Text(lease, {"spec", "holderIdentity"}), "a");
  EXPECT_EQ(Text(lease, {"spec", "leaseDurationSeconds"}), "2");
  EXPECT_EQ(Text(lease, {"spec", "leaseTransitions"}), "0");
  EXPECT_EQ(Text(lease, {"spec", "acquireTime"}), FormatMicroTime(acquired));
  EXPECT_EQ(Text(lease, {"spec", "renewTime"}), FormatMicroTime(acquired));

  // Longer than the lease duration: b never gets it while a renews.
  system_clock::time_point renewed = acquired;
  for (int round = 0; round < 15; ++round) {
    std::this_thread::sleep_for(milliseconds(200));
    renewed = system_clock::now();
    ASSERT_TRUE(Holds(a.TryAcquireOrRenew(renewed))) << "round " << round;
    ASSERT_FALSE(Holds(b.TryAcquireOrRenew(system_clock::now()))) << "round " << round;
    EXPECT_FALSE(b.IsLeader());
    EXPECT_EQ(b.ObservedHolder(), "a");
  }
  lease = Lease("new-lease");
  EXPECT_EQ(Text(lease, {"spec", "holderIdentity"}), "a");
  EXPECT_EQ(Text(lease, {"spec", "leaseTransitions"}), "0");
  EXPECT_EQ(Text(lease, {"spec", "acquireTime"}), FormatMicroTime(acquired)) << "renewals keep it";
  EXPECT_EQ(Text(lease, {"spec", "renewTime"}), FormatMicroTime(renewed));
}

TEST_F(LeaderElectionTest, AnotherTakesItOverAfterTheLeaseDurationByItsOwnClock) {
  KubeClient kube_a(kube_->AdminConfig()), kube_b(kube_->AdminConfig());
  LeaderElector a(kube_a, Config("taken-over", "a"));
  LeaderElector b(kube_b, Config("taken-over", "b"));
  // a's clock is an hour behind: every renewTime it writes looks long expired
  // to b's clock, which must not matter.
  const auto skew = std::chrono::hours(1);
  ASSERT_TRUE(Holds(a.TryAcquireOrRenew(system_clock::now() - skew)));
  const std::string first_acquire = Text(Lease("taken-over"), {"spec", "acquireTime"});

  steady_clock::time_point seen;  // just before b first saw a's last renewal
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(milliseconds(200));
    ASSERT_TRUE(Holds(a.TryAcquireOrRenew(system_clock::now() - skew)));
    seen = steady_clock::now();
    ASSERT_FALSE(Holds(b.TryAcquireOrRenew(system_clock::now())))
        << "a renewTime an hour old by b's clock is no reason to take the lease";
  }

  // a stops renewing; b keeps trying.
  steady_clock::time_point taken;
  system_clock::time_point taken_at;
  for (;;) {
    std::this_thread::sleep_for(milliseconds(100));
    taken_at = system_clock::now();
    if (Holds(b.TryAcquireOrRenew(taken_at))) {
      taken = steady_clock::now();
      break;
    }
    ASSERT_LT(steady_clock::now() - seen, std::chrono::seconds(10)) << "b never took the expired lease";
  }
  EXPECT_GE(taken - seen, milliseconds(2000)) << "taken before the lease duration had passed";
  EXPECT_LT(taken - seen, milliseconds(3500)) << "taken long after the lease expired";
  EXPECT_TRUE(b.IsLeader());

  const Value lease = Lease("taken-over");
  EXPECT_EQ(Text(lease, {"spec", "holderIdentity"}), "b");
  EXPECT_EQ(Text(lease, {"spec", "leaseTransitions"}), "1");
  EXPECT_EQ(Text(lease, {"spec", "acquireTime"}), FormatMicroTime(taken_at));
  EXPECT_NE(Text(lease, {"spec", "acquireTime"}), first_acquire);

  // a, back, finds the lease b's and fresh.
  EXPECT_FALSE(Holds(a.TryAcquireOrRenew(system_clock::now() - skew)));
  EXPECT_FALSE(a.IsLeader());
  EXPECT_EQ(a.ObservedHolder(), "b");
  EXPECT_EQ(Text(Lease("taken-over"), {"spec", "holderIdentity"}), "b");
}

TEST_F(LeaderElectionTest, OfTwoElectorsRacingOnTheSameResourceVersionExactlyOneWins) {
  KubeClient kube_a(kube_->AdminConfig()), kube_b(kube_->AdminConfig());
  LeaderElector a(kube_a, Config("raced", "a"));
  LeaderElector b(kube_b, Config("raced", "b"));
  // Round 0 races to create the Lease; every later one to take it free (the
  // last winner released it). A round is contested when the loser read the
  // same version as the winner, so that only the resourceVersion (or the
  // name, on create) kept it from writing too; the loser then still saw the
  // lease free. Until a few rounds were contested.
  int contested = 0;
  int round = 0;
  for (; round < 60 && (round < 10 || contested < 3); ++round) {
    Result<bool> won_a = false, won_b = false;
    std::latch start(2);
    auto race = [&start](LeaderElector& elector, Result<bool>& won) {
      start.arrive_and_wait();
      won = elector.TryAcquireOrRenew(system_clock::now());
    };
    std::thread racer_a(race, std::ref(a), std::ref(won_a));
    std::thread racer_b(race, std::ref(b), std::ref(won_b));
    racer_a.join();
    racer_b.join();
    ASSERT_TRUE(won_a.ok()) << won_a.error().message;
    ASSERT_TRUE(won_b.ok()) << won_b.error().message;
    ASSERT_NE(*won_a, *won_b) << "round " << round << ": exactly one wins";
    LeaderElector& winner = *won_a ? a : b;
    LeaderElector& loser = *won_a ? b : a;
    EXPECT_TRUE(winner.IsLeader());
    EXPECT_FALSE(loser.IsLeader());
    if (loser.ObservedHolder().empty()) ++contested;

    const Value lease = Lease("raced");
    ASSERT_EQ(Text(lease, {"spec", "holderIdentity"}), winner.config().identity) << "round " << round;
    // Only the winners' writes landed: one transition per round after the create.
    ASSERT_EQ(Text(lease, {"spec", "leaseTransitions"}), std::to_string(round)) << "round " << round;
    Status released = winner.Release();
    ASSERT_TRUE(released.ok()) << released.error().message;
  }
  EXPECT_GE(contested, 3) << "of " << round << " rounds, too few raced on the same version";
}

TEST_F(LeaderElectionTest, RunLosesALeaseSomeoneElseTookAndSaysSo) {
  KubeClient kube_a(kube_->AdminConfig());
  LeaderElector a(kube_a, Config("lost", "a"));
  RunningElector run(a);
  ASSERT_TRUE(Eventually([&] { return run.changes() == std::vector<bool>{true}; }, milliseconds(5000),
                         milliseconds(20)));
  EXPECT_TRUE(a.IsLeader());

  // Someone else takes it over, with a fresh renewTime.
  KubeClient admin(kube_->AdminConfig());
  RequestLog log;
  auto patched = admin.MergePatch(
      LeaseResource("lost"),
      *ParseJson(R"({"spec":{"holderIdentity":"intruder","leaseDurationSeconds":2,"renewTime":")" +
                 FormatMicroTime(system_clock::now()) + R"("}})"),
      log);
  ASSERT_TRUE(patched.ok()) << patched.error().message;
  const auto taken = steady_clock::now();

  ASSERT_TRUE(Eventually([&] { return run.result().has_value(); }, milliseconds(5000), milliseconds(20)))
      << "Run() kept going on a lease someone else holds";
  const auto ended_after = steady_clock::now() - taken;
  const Status ended = *run.result();
  ASSERT_FALSE(ended.ok());
  EXPECT_EQ(ended.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(ended.error().message.rfind("lost the lease default/lost", 0), 0u) << ended.error().message;
  EXPECT_EQ(run.changes(), (std::vector<bool>{true, false}));
  EXPECT_FALSE(a.IsLeader());
  EXPECT_LE(ended_after, milliseconds(1500 + 1000)) << "later than the renew deadline";
  EXPECT_EQ(Text(Lease("lost"), {"spec", "holderIdentity"}), "intruder") << "a wrote over it";
}

TEST_F(LeaderElectionTest, RunReleasesTheLeaseOnStopAndAnotherTakesItAtOnce) {
  KubeClient kube_a(kube_->AdminConfig()), kube_b(kube_->AdminConfig());
  LeaderElector a(kube_a, Config("released", "a"));
  LeaderElector b(kube_b, Config("released", "b"));
  {
    RunningElector run(a);
    ASSERT_TRUE(Eventually([&] { return run.changes() == std::vector<bool>{true}; }, milliseconds(5000),
                           milliseconds(20)));
    ASSERT_FALSE(Holds(b.TryAcquireOrRenew(system_clock::now())));
    run.Stop();
    ASSERT_TRUE(Eventually([&] { return run.result().has_value(); }, milliseconds(2000), milliseconds(20)));
    const Status ended = *run.result();
    EXPECT_TRUE(ended.ok()) << ended.error().message;
    EXPECT_EQ(run.changes(), (std::vector<bool>{true, false}));
  }
  EXPECT_FALSE(a.IsLeader());
  Value lease = Lease("released");
  EXPECT_EQ(Text(lease, {"spec", "holderIdentity"}), "");
  EXPECT_EQ(Text(lease, {"spec", "leaseDurationSeconds"}), "1");
  EXPECT_EQ(Text(lease, {"spec", "leaseTransitions"}), "0");

  // b saw a hold it a moment ago; the release frees it without waiting.
  ASSERT_TRUE(Holds(b.TryAcquireOrRenew(system_clock::now())));
  lease = Lease("released");
  EXPECT_EQ(Text(lease, {"spec", "holderIdentity"}), "b");
  EXPECT_EQ(Text(lease, {"spec", "leaseDurationSeconds"}), "2");
  EXPECT_EQ(Text(lease, {"spec", "leaseTransitions"}), "1");
}

TEST_F(LeaderElectionTest, RefusesARenewDeadlineNotShorterThanTheLeaseAndWritesNothing) {
  KubeClient kube_a(kube_->AdminConfig());
  LeaderElectionConfig config = Config("misconfigured", "a");
  config.renew_deadline = config.lease_duration;
  LeaderElector a(kube_a, config);
  auto round = a.TryAcquireOrRenew(system_clock::now());
  ASSERT_FALSE(round.ok());
  EXPECT_EQ(round.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(round.error().message.find("renew_deadline"), std::string::npos) << round.error().message;
  Status ran = a.Run([] { return false; }, [](bool) {});
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.error().code, ErrorCode::kInvalidArgument);

  KubeClient admin(kube_->AdminConfig());
  RequestLog log;
  auto lease = admin.Get(LeaseResource("misconfigured"), log);
  ASSERT_FALSE(lease.ok());
  EXPECT_EQ(lease.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace ruleplane::testing
