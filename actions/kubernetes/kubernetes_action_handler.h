// ActionHandler: one catalogue action of `adapter: kubernetes`, in one file
// under adapters/kubernetes/actions/ named for the action
// (scale_stateful_set.cpp performs ScaleStatefulSet). KubernetesAdapter looks
// the step's action up here and calls its handler:
//
//   is_done              reads the object fresh and says whether the step's
//                        effect is there (a step done before a crash, or by
//                        someone else, is found done)
//   perform              builds the step's requests and sends them in order;
//                        a dry run is the same call with a RequestLog that
//                        records the writes instead of sending them
//   fenced_by_etcd_spec  a write to another object than the Etcd, resting on
//                        the Etcd's spec as observed: the adapter checks the
//                        Etcd's uid and generation first (not in a dry run)
//   poll_interval        for a step that only waits for the world: how soon
//                        to look again (Adapter::PollInterval)
//
// Each handler's file gives all four, so that its fencing is read there.
//
// Adding an action: a file actions/<action in snake_case>.cpp that defines
// `ActionHandler <Action>Handler()`, and the action in execution/catalogue.yaml.
// The build lists the folder (CMakeLists.txt) and registers every file in it.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/kubernetes/action_context.h"
#include "adapters/kubernetes/step_params.h"
#include "adapters/request.h"
#include "engine/common/error.h"
#include "engine/plan/plan.h"

namespace ruleplane {

struct ActionHandler {
  Result<bool> (*is_done)(const PlanStep& step, ActionContext& context, RequestLog& log) = nullptr;
  Status (*perform)(const PlanStep& step, ActionContext& context, RequestLog& log) = nullptr;
  bool fenced_by_etcd_spec = false;
  std::optional<std::chrono::milliseconds> poll_interval;
};

// The handler of `action`, or nullptr when the kubernetes adapter has none.
const ActionHandler* FindKubernetesActionHandler(std::string_view action);

// The actions that have a handler, sorted.
std::vector<std::string> KubernetesActionNames();

}  // namespace ruleplane
