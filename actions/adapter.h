// Adapter: performs the catalogue's actions of one kind (`adapter:` in
// actions/catalogue.yaml): "kubernetes", "etcd", "local", "backup-sidecar",
// each by handing the step to its action's handler (action_handler.h) in
// actions/<kind>/. The executor calls it; an embedding program may implement
// its own (its own backup store, its own transport) and register it under the
// same kind.
//
// Every request an adapter sends is first built as data and recorded in the
// step's RequestLog; in a dry run the log says not to send what mutates, and
// the adapter goes on building the rest of the step's requests.
//
// Failures carry a code that says what to do (engine/common/error.h):
// kUnavailable / kDeadlineExceeded are retried with backoff by the executor,
// kConflict means re-observe, anything else stops the plan.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "adapters/request.h"
#include "engine/common/error.h"
#include "engine/plan/plan.h"

namespace ruleplane {

class Adapter {
 public:
  virtual ~Adapter() = default;

  // The catalogue's adapter name this adapter performs.
  virtual std::string_view kind() const = 0;

  // Whether `step` has already taken effect in the real state (reads only).
  // An error when the state cannot be read.
  virtual Result<bool> IsDone(const PlanStep& step, RequestLog& log) = 0;

  // Performs `step`. A step of several requests performs them in order and
  // stops at the first failure; performing it again after a failure or a
  // crash must converge (check, then act).
  virtual Status Perform(const PlanStep& step, RequestLog& log) = 0;

  // For a step that only waits for the world to get somewhere (it sends
  // nothing, and IsDone says when the world got there): how soon it is worth
  // looking again. The executor never blocks on such a step: while it is not
  // done the plan pauses before it, to be observed again after this long.
  // nullopt for a step that acts.
  virtual std::optional<std::chrono::milliseconds> PollInterval(const PlanStep& /*step*/) const {
    return std::nullopt;
  }
};

}  // namespace ruleplane
