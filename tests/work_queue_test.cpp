#include "controller/work_queue.h"

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

TEST(WorkQueue, AKeyIsQueuedOnceHowEverOftenItIsAdded) {
  WorkQueue queue;
  queue.Add("ns/a");
  queue.Add("ns/a");
  queue.Add("ns/b");
  EXPECT_EQ(queue.Depth(), 2u);
  EXPECT_EQ(*queue.Get(), "ns/a");
  EXPECT_EQ(*queue.Get(), "ns/b");
  EXPECT_EQ(queue.Depth(), 0u);
}

TEST(WorkQueue, AKeyAddedWhileAWorkerHasItComesBackWhenTheWorkerIsDone) {
  WorkQueue queue;
  queue.Add("ns/a");
  const std::string key = *queue.Get();
  queue.Add(key);  // an event while reconciling
  EXPECT_EQ(queue.Depth(), 1u);
  queue.Add("ns/b");
  EXPECT_EQ(*queue.Get(), "ns/b") << "never two workers on one key";
  queue.Done(key);
  EXPECT_EQ(*queue.Get(), "ns/a");
}

TEST(WorkQueue, FailuresBackOffExponentiallyUntilForgotten) {
  WorkQueue queue(milliseconds(20), milliseconds(1000));
  const auto started = WorkQueue::Clock::now();
  queue.AddRateLimited("ns/a");  // due in 20 ms
  EXPECT_EQ(*queue.Get(), "ns/a");
  queue.Done("ns/a");
  EXPECT_GE(WorkQueue::Clock::now() - started, milliseconds(20));
  // Order, not timing: d (30 ms) comes before a (now 40 ms, then 80 ms: the
  // earlier due time stands), and a before b (60 ms).
  queue.AddRateLimited("ns/a");
  queue.AddRateLimited("ns/a");
  EXPECT_EQ(queue.Failures("ns/a"), 3);
  queue.AddAfter("ns/b", milliseconds(60));
  queue.AddAfter("ns/d", milliseconds(30));
  EXPECT_EQ(*queue.Get(), "ns/d");
  EXPECT_EQ(*queue.Get(), "ns/a");
  EXPECT_EQ(*queue.Get(), "ns/b");
  queue.Forget("ns/a");
  EXPECT_EQ(queue.Failures("ns/a"), 0);
}

TEST(WorkQueue, AnEarlierAddWinsOverALaterDueTime) {
  WorkQueue queue;
  queue.AddAfter("ns/a", std::chrono::hours(1));
  queue.Add("ns/a");
  queue.AddAfter("ns/b", milliseconds(50));
  EXPECT_EQ(*queue.Get(), "ns/a") << "due now, not in an hour";
  EXPECT_EQ(*queue.Get(), "ns/b");
}

TEST(WorkQueue, ShutDownWakesAWaitingWorker) {
  WorkQueue queue;
  std::optional<std::string> got = "not yet";
  std::thread worker([&] { got = queue.Get(); });
  std::this_thread::sleep_for(milliseconds(20));
  queue.ShutDown();
  worker.join();
  EXPECT_FALSE(got.has_value());
}

// Several workers, a few keys added again and again, also while a worker has
// them: a key is never handed to two workers at once, and different keys do
// run side by side.
TEST(WorkQueue, SeveralWorkersNeverHoldOneKeyAtOnce) {
  WorkQueue queue;
  const std::vector<std::string> keys = {"ns/a", "ns/b", "ns/c"};
  std::mutex mutex;
  std::map<std::string, int> holders;
  int overlaps = 0, most_at_once = 0, at_once = 0;
  std::atomic<int> handed{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back([&] {
      while (auto key = queue.Get()) {
        {
          std::lock_guard lock(mutex);
          overlaps += holders[*key]++ > 0;
          most_at_once = std::max(most_at_once, ++at_once);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        queue.Add(*key);  // an event while it is being reconciled
        {
          std::lock_guard lock(mutex);
          --holders[*key];
          --at_once;
        }
        queue.Done(*key);
        if (++handed == 600) queue.ShutDown();
      }
    });
  }
  for (const std::string& key : keys) queue.Add(key);
  for (std::thread& worker : workers) worker.join();
  EXPECT_GE(handed.load(), 600);
  EXPECT_EQ(overlaps, 0) << "a key was handed to a second worker while the first had it";
  EXPECT_GE(most_at_once, 2) << "different keys are reconciled side by side";
}

// RequeueAfter: a key added after a delay while a worker has it comes back
// no sooner than that, and does not stop other keys in the meantime.
TEST(WorkQueue, AKeyRequeuedAfterADelayComesBackThenAndOthersGoFirst) {
  WorkQueue queue;
  queue.Add("ns/waiting");
  const std::string key = *queue.Get();
  const auto requeued = WorkQueue::Clock::now();
  queue.AddAfter(key, milliseconds(150));
  queue.Done(key);
  EXPECT_EQ(queue.Depth(), 1u);
  queue.Add("ns/other");
  EXPECT_EQ(*queue.Get(), "ns/other") << "the waiting key does not hold the queue";
  queue.Done("ns/other");
  EXPECT_EQ(*queue.Get(), "ns/waiting");
  EXPECT_GE(WorkQueue::Clock::now() - requeued, milliseconds(150));
}

}  // namespace
}  // namespace ruleplane
