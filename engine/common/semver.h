// Semantic versions (semver 2.0.0): MAJOR.MINOR.PATCH[-prerelease][+build].
#pragma once

#include <string_view>

namespace ruleplane {

// Whether `text` is a valid semantic version: numeric parts without leading
// zeros, dot-separated [0-9A-Za-z-] identifiers after '-' and '+', and no
// leading zeros in numeric prerelease identifiers.
bool IsValidSemver(std::string_view text);

// Semver 2.0.0 precedence of two valid versions: < 0, 0 or > 0. MAJOR, MINOR
// and PATCH numerically; a pre-release before its release; pre-release
// identifiers one by one, numeric ones numerically and before alphanumeric
// ones (compared in ASCII order), a shorter list first when all else is
// equal (1.0.0-rc.9 < 1.0.0-rc.10 < 1.0.0); build metadata ignored.
int CompareSemver(std::string_view a, std::string_view b);

}  // namespace ruleplane
