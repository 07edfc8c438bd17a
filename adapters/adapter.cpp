#include "adapters/adapter.h"

namespace ruleplane {

std::string StepParam(const PlanStep& step, std::string_view name) {
  const Value* value = step.params.Find(name);
  return value != nullptr && value->is_string() ? value->string_value() : "";
}

}  // namespace ruleplane
