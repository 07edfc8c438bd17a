#include "engine/rule_file/lexical.h"

#include <cstdlib>
#include <string>

#include "engine/common/ascii.h"

namespace ruleplane {
namespace {

bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsAlnum(char c) { return IsAsciiDigit(c) || IsLower(c) || IsUpper(c); }

// Skips digits from `pos`; how many there were.
size_t SkipDigits(std::string_view text, size_t& pos) {
  const size_t start = pos;
  while (pos < text.size() && IsAsciiDigit(text[pos])) ++pos;
  return pos - start;
}

}  // namespace

bool IsIdentifier(std::string_view text) {
  if (text.empty() || IsAsciiDigit(text[0])) return false;
  for (const char c : text) {
    if (!IsAlnum(c) && c != '_') return false;
  }
  return true;
}

bool IsUpperCamel(std::string_view text) {
  if (text.empty() || !IsUpper(text[0])) return false;
  for (const char c : text) {
    if (!IsAlnum(c)) return false;
  }
  return true;
}

bool IsDnsLabel(std::string_view text) {
  if (text.empty() || text.size() > 63 || text.front() == '-' || text.back() == '-') return false;
  for (const char c : text) {
    if (!IsLower(c) && !IsAsciiDigit(c) && c != '-') return false;
  }
  return true;
}

std::optional<double> ParseDecimalFloat(std::string_view text) {
  size_t pos = 0;
  if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) ++pos;
  const size_t whole = SkipDigits(text, pos);
  size_t fraction = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    fraction = SkipDigits(text, pos);
  }
  if (whole == 0 && fraction == 0) return std::nullopt;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) ++pos;
    if (SkipDigits(text, pos) == 0) return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  return std::strtod(std::string(text).c_str(), nullptr);
}

}  // namespace ruleplane
