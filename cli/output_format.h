// Rendering values and plans for people and for other programs.
#pragma once

#include <string>

#include "engine/common/value.h"
#include "engine/plan/plan.h"

namespace ruleplane::cli {

// YAML block style; strings that would read back as another type are quoted.
std::string FormatYaml(const Value& value);

// The plan as a table: the rule sets with their matched rules, then one line per step.
std::string FormatPlanTable(const Plan& plan);

}  // namespace ruleplane::cli
