#include "controller/reconcile_workers.h"

#include <thread>

namespace ruleplane {

void FinishReconcile(WorkQueue& queue, const std::string& key, const Result<ReconcileResult>& outcome) {
  if (!outcome.ok()) {
    if (outcome.error().code == ErrorCode::kNotFound) {
      queue.Forget(key);
    } else {
      queue.AddRateLimited(key);
    }
    return;
  }
  queue.Forget(key);
  if (outcome->requeue_after > std::chrono::milliseconds::zero()) queue.AddAfter(key, outcome->requeue_after);
}

void RunReconcileWorkers(WorkQueue& queue, const std::vector<ReconcileFunction>& workers) {
  std::vector<std::thread> threads;
  threads.reserve(workers.size());
  for (const ReconcileFunction& reconcile : workers) {
    threads.emplace_back([&queue, &reconcile] {
      while (auto key = queue.Get()) {
        FinishReconcile(queue, *key, reconcile(*key));
        queue.Done(*key);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace ruleplane
