// --param NAME=VALUE for the commands that evaluate without a snapshot
// (verify, diff).
#pragma once

#include <iosfwd>
#include <string>

#include "cli/rule_library.h"
#include "engine/match/compiled_rule_set.h"

namespace ruleplane::cli {

// Adds NAME=VALUE to `overrides` (the value as text, converted to the param's
// type later); false after writing a usage error to `err`.
bool ParseParamOption(const std::string& value, ParamOverrides& overrides, std::ostream& err);

// Whether every override names a param some loaded rule file declares, with
// a value of the param's type; else writes what is wrong.
bool OverridesAreDeclared(const RuleLibrary& library, const ParamOverrides& overrides, std::ostream& err);

}  // namespace ruleplane::cli
