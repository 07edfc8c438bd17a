#include "engine/common/semver.h"

#include <algorithm>

namespace ruleplane {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnumOrHyphen(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

bool IsNumericIdentifier(std::string_view part) {
  if (part.empty() || !std::all_of(part.begin(), part.end(), IsDigit)) return false;
  return part.size() == 1 || part[0] != '0';
}

// Dot-separated non-empty identifiers; `numeric_no_leading_zero` for prerelease.
bool AreValidIdentifiers(std::string_view text, bool numeric_no_leading_zero) {
  size_t start = 0;
  while (true) {
    size_t dot = text.find('.', start);
    std::string_view part =
        text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || !std::all_of(part.begin(), part.end(), IsAlnumOrHyphen)) return false;
    if (numeric_no_leading_zero && std::all_of(part.begin(), part.end(), IsDigit) &&
        !IsNumericIdentifier(part)) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

bool IsValidSemver(std::string_view text) {
  size_t plus = text.find('+');
  if (plus != std::string_view::npos) {
    if (!AreValidIdentifiers(text.substr(plus + 1), false)) return false;
    text = text.substr(0, plus);
  }
  size_t hyphen = text.find('-');
  if (hyphen != std::string_view::npos) {
    if (!AreValidIdentifiers(text.substr(hyphen + 1), true)) return false;
    text = text.substr(0, hyphen);
  }
  for (int part = 0; part < 3; ++part) {
    size_t dot = text.find('.');
    if ((part < 2) != (dot != std::string_view::npos)) return false;
    if (!IsNumericIdentifier(text.substr(0, dot))) return false;
    if (dot != std::string_view::npos) text = text.substr(dot + 1);
  }
  return true;
}

}  // namespace ruleplane
