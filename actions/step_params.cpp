#include "actions/step_params.h"

namespace ruleplane {

const Value& StepValue(const PlanStep& step, std::string_view name) {
  static const Value kNull = Value::Null();
  const Value* value = step.params.is_map() ? step.params.Find(name) : nullptr;
  return value != nullptr ? *value : kNull;
}

std::string StepParam(const PlanStep& step, std::string_view name) {
  const Value* value = step.params.Find(name);
  return value != nullptr && value->is_string() ? value->string_value() : "";
}

int64_t IntParam(const PlanStep& step, std::string_view name) {
  const Value& value = StepValue(step, name);
  return value.is_int() ? value.int_value() : 0;
}

bool BoolParam(const PlanStep& step, std::string_view name) {
  const Value* value = step.params.is_map() ? step.params.Find(name) : nullptr;
  return value != nullptr && value->is_bool() && value->bool_value();
}

std::string StepName(const PlanStep& step) {
  return StepValue(step, "name").is_string() ? StepValue(step, "name").string_value() : step.target;
}

}  // namespace ruleplane
