// WorkQueue: the keys (namespace/name of Etcd objects) waiting to be
// reconciled, as client-go's rate-limited work queue keeps them. A key is
// queued at most once however often it is added; it is handed to one worker
// at a time, and a key added while a worker has it is queued again when the
// worker is Done. A key whose reconcile failed comes back after its own
// exponential backoff (base * 2^failures, capped), which Forget resets.
//
//   queue.Add("shoot/etcd-main");
//   while (auto key = queue.Get()) {
//     if (Reconcile(*key).ok()) queue.Forget(*key); else queue.AddRateLimited(*key);
//     queue.Done(*key);
//   }
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace ruleplane {

class WorkQueue {
 public:
  using Clock = std::chrono::steady_clock;

  explicit WorkQueue(std::chrono::milliseconds base_backoff = std::chrono::milliseconds(500),
                     std::chrono::milliseconds max_backoff = std::chrono::minutes(5));

  void Add(const std::string& key);
  void AddAfter(const std::string& key, std::chrono::milliseconds delay);
  // After the key's backoff, which doubles with each call until Forget.
  void AddRateLimited(const std::string& key);
  void Forget(const std::string& key);
  int Failures(const std::string& key) const;

  // The next key that is due, waiting for one; nullopt once shut down.
  std::optional<std::string> Get();
  void Done(const std::string& key);
  void ShutDown();

  // Keys due now or waiting for their time (not those a worker has).
  size_t Depth() const;

 private:
  void AddLocked(const std::string& key, Clock::time_point due);

  std::chrono::milliseconds base_backoff_, max_backoff_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Clock::time_point> queued_;  // key -> when it is due
  std::set<std::string> processing_;
  std::map<std::string, Clock::time_point> requeue_;  // added while processing
  std::map<std::string, int> failures_;
  bool shut_down_ = false;
};

}  // namespace ruleplane
