// ActionHandler: one catalogue action, in one file of the folder of the
// adapter that performs it, named for the action
// (actions/kubernetes/scale_stateful_set.cpp performs ScaleStatefulSet). The
// adapter (the Adapter the executor calls for the catalogue's `adapter:`)
// looks the step's action up among its handlers and calls that handler with
// its Context: what every handler of the folder is given (the client, the
// snapshot the plan was made from, the member's files).
//
//   is_done        reads the world fresh and says whether the step's effect
//                  is there (a step done before a crash, or by someone else,
//                  is found done)
//   perform        builds the step's requests and sends them in order; a dry
//                  run is the same call with a RequestLog that records the
//                  writes instead of sending them
//   fence          what the step's writes rest on beyond the objects they
//                  write, checked before perform (not in a dry run): an error
//                  (kConflict: re-observe) when it changed since it was
//                  observed; nullptr when the writes carry their own
//                  precondition or need none
//   poll_interval  for a step that only waits for the world: how soon to
//                  look again (Adapter::PollInterval)
//
// Each handler's file gives all four, so that its fencing is read there.
//
//   KubernetesActionHandler ScaleStatefulSetHandler() {
//     return {.is_done = IsDone, .perform = Perform, .fence = EtcdSpecAsObserved, .poll_interval =
//     std::nullopt};
//   }
//
// Adding an action: a file actions/<adapter>/<action in snake_case>.cpp that
// defines `<Adapter>ActionHandler <Action>Handler()`, and the action in
// actions/catalogue.yaml. The build registers every file of the folder that
// has no header of its own (CMakeLists.txt writes <adapter>_actions.inc,
// which <adapter>_action_handler.cpp turns into the folder's table).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "adapters/request.h"
#include "engine/common/error.h"
#include "engine/plan/plan.h"

namespace ruleplane {

template <typename Context>
struct ActionHandler {
  Result<bool> (*is_done)(const PlanStep& step, Context& context, RequestLog& log) = nullptr;
  Status (*perform)(const PlanStep& step, Context& context, RequestLog& log) = nullptr;
  Status (*fence)(Context& context, RequestLog& log) = nullptr;
  std::optional<std::chrono::milliseconds> poll_interval;
};

// The handlers of one adapter, by action name.
template <typename Context>
using ActionHandlers = std::map<std::string, ActionHandler<Context>, std::less<>>;

// The handler of `action`, or nullptr when there is none.
template <typename Context>
const ActionHandler<Context>* FindActionHandler(const ActionHandlers<Context>& handlers,
                                                std::string_view action) {
  auto found = handlers.find(action);
  return found != handlers.end() ? &found->second : nullptr;
}

// Performs `step` with `handler`: its fence first (not in a dry run), then perform.
template <typename Context>
Status PerformFenced(const ActionHandler<Context>& handler, const PlanStep& step, Context& context,
                     RequestLog& log) {
  if (handler.fence != nullptr && !log.dry_run()) {
    if (Status unchanged = handler.fence(context, log); !unchanged.ok()) return unchanged;
  }
  return handler.perform(step, context, log);
}

}  // namespace ruleplane
