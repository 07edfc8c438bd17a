// ReconcileWorkers: the threads that take keys from a WorkQueue and reconcile
// them, as controller-runtime's controller runs MaxConcurrentReconciles
// workers. The queue hands a key to one worker at a time, so one Etcd is
// never reconciled by two workers at once, while different Etcds are
// reconciled side by side. A reconcile never waits for the world: a step that
// is not done yet ends it with `requeue_after`, and the key comes back then
// (or sooner, on an event), leaving the worker free for other keys.
//
//   std::vector<ReconcileFunction> workers;
//   for (int i = 0; i < n; ++i) workers.push_back([&, i](const std::string& key) { return
//   r[i].Reconcile(key); }); RunReconcileWorkers(queue, workers);  // returns once the queue is shut down and
//   every worker is done
//
// What happens to a key after its reconcile (controller-runtime's
// reconcileHandler): success forgets its failures and, with a requeue_after,
// queues it again after that delay; kNotFound (the object is gone) forgets it;
// any other error queues it again after its exponential backoff.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "controller/work_queue.h"
#include "engine/common/error.h"

namespace ruleplane {

struct ReconcileResult {
  // > 0: reconcile the key again after this long, even without an event
  // (a step is not done yet: pods still terminating, a wait for time).
  std::chrono::milliseconds requeue_after{0};
};

using ReconcileFunction = std::function<Result<ReconcileResult>(const std::string& key)>;

// Applies the outcome of one reconcile of `key` to the queue (not Done).
void FinishReconcile(WorkQueue& queue, const std::string& key, const Result<ReconcileResult>& outcome);

// One thread per function, each taking keys until the queue is shut down;
// returns when all have stopped.
void RunReconcileWorkers(WorkQueue& queue, const std::vector<ReconcileFunction>& workers);

}  // namespace ruleplane
