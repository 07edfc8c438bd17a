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

// Text as one line of printable text: control characters (a newline in a
// target, an escape sequence) are written as \n, \t, \xHH, so that no value
// read from a journal, a store or a cluster can start a line of its own or
// rewrite the terminal.
std::string Printable(const std::string& text);

}  // namespace ruleplane::cli
