// YAML -> Value, as JSON would give it (internal to engine/): plain scalars
// `null`/`~`, true/false, integers and floats become those kinds; every other
// scalar, and every quoted or block scalar, is a string.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane {

// What the conversions of one file may still build: aliases can make a small
// file expand enormously, so the bound is per file, not per node.
struct YamlExpansion {
  int64_t values_left = 1'000'000;
  int64_t bytes_left = 64 << 20;  // of scalar text
};

// Errors (kInvalidRuleFile, positioned at the offending node within `file`):
// a non-string mapping key, nesting deeper than 100 levels, or more values
// or scalar bytes than `expansion` has left (it is charged what was built).
Result<Value> YamlToValue(const YAML::Node& node, const std::string& file, YamlExpansion& expansion);

// A plain scalar's value by the rules above; quoted scalars are strings.
Value YamlScalarToValue(const YAML::Node& node);

}  // namespace ruleplane
