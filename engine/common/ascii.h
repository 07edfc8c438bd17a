// ASCII character classes and case, the same in every locale (<cctype>'s
// follow the process's locale).
#pragma once

#include <string>
#include <string_view>

namespace ruleplane {

inline bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

inline std::string AsciiLower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

}  // namespace ruleplane
