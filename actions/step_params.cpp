#include "adapters/kubernetes/step_params.h"

namespace ruleplane {

const Value& StepValue(const PlanStep& step, std::string_view name) {
  static const Value kNull = Value::Null();
  const Value* value = step.params.is_map() ? step.params.Find(name) : nullptr;
  return value != nullptr ? *value : kNull;
}

int64_t IntParam(const PlanStep& step, std::string_view name) {
  const Value& value = StepValue(step, name);
  return value.is_int() ? value.int_value() : 0;
}

std::string StepName(const PlanStep& step) {
  return StepValue(step, "name").is_string() ? StepValue(step, "name").string_value() : step.target;
}

}  // namespace ruleplane
