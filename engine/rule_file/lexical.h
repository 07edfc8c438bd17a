// The lexical forms rule files and catalogues use for names and numbers
// (internal to engine/rule_file/), checked by plain loops: std::regex
// recurses per character and overflows the stack on long input.
#pragma once

#include <optional>
#include <string_view>

namespace ruleplane {

// [A-Za-z_][A-Za-z0-9_]*: fact, param and action-parameter names.
bool IsIdentifier(std::string_view text);
// [A-Z][A-Za-z0-9]*: action names and snapshot subjects.
bool IsUpperCamel(std::string_view text);
// A DNS label, [a-z0-9]([a-z0-9-]*[a-z0-9])? of at most 63 characters:
// metadata.name and rule ids.
bool IsDnsLabel(std::string_view text);
// A decimal float as YAML 1.2's core schema writes one,
// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, as a double; nullopt
// for another form (the value may be infinite when the exponent is large).
std::optional<double> ParseDecimalFloat(std::string_view text);

}  // namespace ruleplane
