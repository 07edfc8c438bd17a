#include "engine/common/semver.h"

#include <algorithm>

#include "engine/common/ascii.h"

namespace ruleplane {
namespace {

bool IsAlnumOrHyphen(char c) {
  return IsAsciiDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

bool IsNumericIdentifier(std::string_view part) {
  if (part.empty() || !std::all_of(part.begin(), part.end(), IsAsciiDigit)) return false;
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
    if (numeric_no_leading_zero && std::all_of(part.begin(), part.end(), IsAsciiDigit) &&
        !IsNumericIdentifier(part)) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// The next dot-separated identifier of `text` from `pos`, advancing `pos`.
std::string_view NextIdentifier(std::string_view text, size_t& pos) {
  const size_t dot = std::min(text.find('.', pos), text.size());
  const std::string_view part = text.substr(pos, dot - pos);
  pos = dot + 1;
  return part;
}

bool AllDigits(std::string_view part) {
  return !part.empty() && std::all_of(part.begin(), part.end(), IsAsciiDigit);
}

// Numeric identifiers without leading zeros: longer is larger, then by text.
int CompareNumbers(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : a.compare(b) > 0 ? 1 : 0;
}

}  // namespace

int CompareSemver(std::string_view a, std::string_view b) {
  a = a.substr(0, a.find('+'));
  b = b.substr(0, b.find('+'));
  const size_t a_hyphen = std::min(a.find('-'), a.size()), b_hyphen = std::min(b.find('-'), b.size());
  size_t a_pos = 0, b_pos = 0;
  const std::string_view a_core = a.substr(0, a_hyphen), b_core = b.substr(0, b_hyphen);
  for (int part = 0; part < 3; ++part) {
    if (int order = CompareNumbers(NextIdentifier(a_core, a_pos), NextIdentifier(b_core, b_pos)))
      return order;
  }
  const bool a_pre = a_hyphen < a.size(), b_pre = b_hyphen < b.size();
  if (a_pre != b_pre) return a_pre ? -1 : 1;
  if (!a_pre) return 0;
  const std::string_view a_rest = a.substr(a_hyphen + 1), b_rest = b.substr(b_hyphen + 1);
  a_pos = b_pos = 0;
  while (a_pos <= a_rest.size() && b_pos <= b_rest.size()) {
    const std::string_view x = NextIdentifier(a_rest, a_pos), y = NextIdentifier(b_rest, b_pos);
    const bool x_number = AllDigits(x), y_number = AllDigits(y);
    int order = 0;
    if (x_number && y_number) {
      order = CompareNumbers(x, y);
    } else if (x_number != y_number) {
      order = x_number ? -1 : 1;
    } else {
      order = x.compare(y) < 0 ? -1 : x.compare(y) > 0 ? 1 : 0;
    }
    if (order != 0) return order;
  }
  if (a_pos <= a_rest.size()) return 1;  // a has more identifiers
  if (b_pos <= b_rest.size()) return -1;
  return 0;
}

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
