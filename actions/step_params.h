// A plan step's parameters as the action handlers read them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/plan/plan.h"

namespace ruleplane {

// The step's parameter `name`, or null.
const Value& StepValue(const PlanStep& step, std::string_view name);
// The step's string parameter `name`, or "" when absent.
std::string StepParam(const PlanStep& step, std::string_view name);
// The step's integer parameter `name`, or 0.
int64_t IntParam(const PlanStep& step, std::string_view name);
// The step's boolean parameter `name`, or false.
bool BoolParam(const PlanStep& step, std::string_view name);
// The step's `name` parameter, or its target when it gives none.
std::string StepName(const PlanStep& step);

}  // namespace ruleplane
