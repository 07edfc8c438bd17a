#include "actions/work_queue.h"

#include <gtest/gtest.h>

#include <thread>

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

}  // namespace
}  // namespace ruleplane
