// The table of action handlers: one entry per file in actions/, listed by the
// build into kubernetes_actions.inc as RULEPLANE_KUBERNETES_ACTION(<Action>).
#include <map>

#include "adapters/kubernetes/action_handler.h"

namespace ruleplane {

#define RULEPLANE_KUBERNETES_ACTION(action) ActionHandler action##Handler();
#include "kubernetes_actions.inc"
#undef RULEPLANE_KUBERNETES_ACTION

namespace {

const std::map<std::string, ActionHandler, std::less<>>& Handlers() {
  static const auto* const kHandlers = new std::map<std::string, ActionHandler, std::less<>>{
#define RULEPLANE_KUBERNETES_ACTION(action) {#action, action##Handler()},
#include "kubernetes_actions.inc"
#undef RULEPLANE_KUBERNETES_ACTION
  };
  return *kHandlers;
}

}  // namespace

const ActionHandler* FindKubernetesActionHandler(std::string_view action) {
  auto found = Handlers().find(action);
  return found != Handlers().end() ? &found->second : nullptr;
}

std::vector<std::string> KubernetesActionNames() {
  std::vector<std::string> names;
  for (const auto& [name, handler] : Handlers()) names.push_back(name);
  return names;
}

}  // namespace ruleplane
