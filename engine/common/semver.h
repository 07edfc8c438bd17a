// Semantic versions (semver 2.0.0): MAJOR.MINOR.PATCH[-prerelease][+build].
#pragma once

#include <string_view>

namespace ruleplane {

// Whether `text` is a valid semantic version: numeric parts without leading
// zeros, dot-separated [0-9A-Za-z-] identifiers after '-' and '+', and no
// leading zeros in numeric prerelease identifiers.
bool IsValidSemver(std::string_view text);

}  // namespace ruleplane
