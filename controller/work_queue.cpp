#include "controller/work_queue.h"

#include <algorithm>

namespace ruleplane {

WorkQueue::WorkQueue(std::chrono::milliseconds base_backoff, std::chrono::milliseconds max_backoff)
    : base_backoff_(base_backoff), max_backoff_(max_backoff) {}

void WorkQueue::AddLocked(const std::string& key, Clock::time_point due) {
  if (shut_down_) return;
  if (processing_.count(key) != 0) {
    auto [at, added] = requeue_.emplace(key, due);
    if (!added) at->second = std::min(at->second, due);
    return;
  }
  auto [at, added] = queued_.emplace(key, due);
  if (!added) at->second = std::min(at->second, due);
  changed_.notify_one();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard lock(mutex_);
  AddLocked(key, Clock::now());
}

void WorkQueue::AddAfter(const std::string& key, std::chrono::milliseconds delay) {
  std::lock_guard lock(mutex_);
  AddLocked(key, Clock::now() + delay);
}

void WorkQueue::AddRateLimited(const std::string& key) {
  std::lock_guard lock(mutex_);
  const int failures = failures_[key]++;
  auto backoff = base_backoff_;
  for (int i = 0; i < failures && backoff < max_backoff_; ++i) backoff *= 2;
  AddLocked(key, Clock::now() + std::min(backoff, max_backoff_));
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard lock(mutex_);
  failures_.erase(key);
}

int WorkQueue::Failures(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto found = failures_.find(key);
  return found == failures_.end() ? 0 : found->second;
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock lock(mutex_);
  while (!shut_down_) {
    auto next = std::min_element(queued_.begin(), queued_.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    if (next == queued_.end()) {
      changed_.wait(lock);
      continue;
    }
    if (next->second > Clock::now()) {
      // A copy: while this worker waits, another may take the key and erase
      // its entry, which wait_until reads again when it wakes.
      const Clock::time_point due = next->second;
      changed_.wait_until(lock, due);
      continue;
    }
    std::string key = next->first;
    queued_.erase(next);
    processing_.insert(key);
    return key;
  }
  return std::nullopt;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard lock(mutex_);
  processing_.erase(key);
  auto again = requeue_.find(key);
  if (again != requeue_.end()) {
    const Clock::time_point due = again->second;
    requeue_.erase(again);
    AddLocked(key, due);
  }
}

void WorkQueue::ShutDown() {
  std::lock_guard lock(mutex_);
  shut_down_ = true;
  changed_.notify_all();
}

size_t WorkQueue::Depth() const {
  std::lock_guard lock(mutex_);
  return queued_.size() + requeue_.size();
}

}  // namespace ruleplane
