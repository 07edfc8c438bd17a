#include "controller/reconcile_workers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace ruleplane {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Records the order of reconciles and shuts the queue down after `limit`.
struct Recorder {
  std::mutex mutex;
  std::vector<std::pair<std::string, Clock::time_point>> seen;

  size_t Record(const std::string& key) {
    std::lock_guard lock(mutex);
    seen.emplace_back(key, Clock::now());
    return seen.size();
  }
  std::vector<std::string> Keys() {
    std::lock_guard lock(mutex);
    std::vector<std::string> keys;
    for (const auto& [key, at] : seen) keys.push_back(key);
    return keys;
  }
};

TEST(ReconcileWorkers, ARequeueAfterBringsTheKeyBackAfterTheDelayWithoutCountingAFailure) {
  WorkQueue queue(milliseconds(10));
  Recorder recorder;
  int failures_seen = -1;
  ReconcileFunction reconcile = [&](const std::string& key) -> Result<ReconcileResult> {
    if (recorder.Record(key) == 1) return ReconcileResult{milliseconds(200)};  // not done yet
    failures_seen = queue.Failures(key);
    queue.ShutDown();
    return ReconcileResult{};
  };
  queue.Add("ns/a");
  RunReconcileWorkers(queue, {reconcile});
  ASSERT_EQ(recorder.seen.size(), 2u);
  EXPECT_GE(recorder.seen[1].second - recorder.seen[0].second, milliseconds(200));
  EXPECT_EQ(failures_seen, 0) << "a wait is not a failure: no backoff";
}

// One worker: an Etcd whose plan waits (for pods to go) is queued again
// after its delay and leaves the worker to the others meanwhile.
TEST(ReconcileWorkers, AKeyThatWaitsDoesNotHoldTheOnlyWorker) {
  WorkQueue queue;
  Recorder recorder;
  ReconcileFunction reconcile = [&](const std::string& key) -> Result<ReconcileResult> {
    const size_t count = recorder.Record(key);
    if (key == "ns/quorum-lost") {
      if (count == 1) queue.Add("ns/other");  // an event for another Etcd meanwhile
      if (count >= 3) queue.ShutDown();
      return ReconcileResult{milliseconds(300)};
    }
    return ReconcileResult{};
  };
  queue.Add("ns/quorum-lost");
  RunReconcileWorkers(queue, {reconcile});
  const std::vector<std::string> keys = recorder.Keys();
  ASSERT_GE(keys.size(), 3u);
  EXPECT_EQ(keys[0], "ns/quorum-lost");
  EXPECT_EQ(keys[1], "ns/other") << "reconciled while the first waits";
  EXPECT_EQ(keys[2], "ns/quorum-lost");
}

TEST(ReconcileWorkers, AFailureBacksOffAndAGoneObjectIsForgotten) {
  WorkQueue queue(milliseconds(20), milliseconds(1000));
  FinishReconcile(queue, "ns/failed", Error{ErrorCode::kUnavailable, "503", {}});
  FinishReconcile(queue, "ns/gone", Error{ErrorCode::kNotFound, "no such Etcd", {}});
  EXPECT_EQ(queue.Failures("ns/failed"), 1);
  EXPECT_EQ(queue.Failures("ns/gone"), 0);
  EXPECT_EQ(queue.Depth(), 1u) << "only the failed key comes back";
  FinishReconcile(queue, "ns/failed", ReconcileResult{});
  EXPECT_EQ(queue.Failures("ns/failed"), 0);
}

// Several workers over a handful of keys, each reconcile queueing its key
// again: never two reconciles of one key at once, several of different keys.
TEST(ReconcileWorkers, SeveralWorkersReconcileDifferentKeysSideBySideButOneKeyOnlyOnce) {
  WorkQueue queue;
  std::mutex mutex;
  std::map<std::string, int> running;
  int overlaps = 0, at_once = 0, most_at_once = 0;
  std::atomic<int> total{0};
  ReconcileFunction reconcile = [&](const std::string& key) -> Result<ReconcileResult> {
    {
      std::lock_guard lock(mutex);
      overlaps += running[key]++ > 0;
      most_at_once = std::max(most_at_once, ++at_once);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    {
      std::lock_guard lock(mutex);
      --running[key];
      --at_once;
    }
    if (++total >= 300) queue.ShutDown();
    return ReconcileResult{milliseconds(1)};
  };
  for (const char* key : {"ns/a", "ns/b", "ns/c", "ns/d"}) queue.Add(key);
  RunReconcileWorkers(queue, std::vector<ReconcileFunction>(3, reconcile));
  EXPECT_GE(total.load(), 300);
  EXPECT_EQ(overlaps, 0);
  EXPECT_GE(most_at_once, 2);
}

}  // namespace
}  // namespace ruleplane
