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
  WorkQueue queue(milliseconds(20), milliseconds(70));
  const auto started = WorkQueue::Clock::now();
  queue.AddRateLimited("ns/a");  // 20 ms
  queue.Get();
  queue.Done("ns/a");
  EXPECT_GE(WorkQueue::Clock::now() - started, milliseconds(20));
  queue.AddRateLimited("ns/a");  // 40 ms
  queue.AddRateLimited("ns/a");  // 70 ms (capped), but the earlier due time stands
  EXPECT_EQ(queue.Failures("ns/a"), 3);
  const auto second = WorkQueue::Clock::now();
  queue.Get();
  const auto waited = WorkQueue::Clock::now() - second;
  EXPECT_GE(waited, milliseconds(40));
  EXPECT_LT(waited, milliseconds(70));
  queue.Forget("ns/a");
  EXPECT_EQ(queue.Failures("ns/a"), 0);
}

TEST(WorkQueue, AnEarlierAddWinsOverALaterDueTime) {
  WorkQueue queue;
  queue.AddAfter("ns/a", std::chrono::hours(1));
  queue.Add("ns/a");
  const auto started = WorkQueue::Clock::now();
  EXPECT_EQ(*queue.Get(), "ns/a");
  EXPECT_LT(WorkQueue::Clock::now() - started, milliseconds(100));
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
