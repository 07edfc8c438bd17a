// YAML -> Value, as JSON would give it (internal to engine/): plain scalars
// `null`/`~`, true/false, integers and floats become those kinds; every other
// scalar, and every quoted or block scalar, is a string.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane {

// Errors (kInvalidRuleFile, positioned at the offending node within `file`):
// a non-string mapping key, nesting deeper than 100 levels, or more than a
// million nodes (aliases can make a small file expand enormously).
Result<Value> YamlToValue(const YAML::Node& node, const std::string& file);

// A plain scalar's value by the rules above; quoted scalars are strings.
Value YamlScalarToValue(const YAML::Node& node);

}  // namespace ruleplane
