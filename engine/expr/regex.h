// A compiled PCRE2 regular expression with a bounded match (internal).
// Immutable and safe to use from many threads: match data is per call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engine/common/error.h"
#include "engine/common/value.h"

struct pcre2_real_code_8;
struct pcre2_real_match_context_8;

namespace ruleplane::expr {

class Regex {
 public:
  // Errors (kCheck) carry PCRE2's message and the offset in the pattern.
  static Result<std::shared_ptr<const Regex>> Compile(std::string_view pattern, uint32_t match_limit);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // CEL's matches(): true when any part of `subject` matches. An error value
  // when the match limit is exceeded.
  Value Matches(std::string_view subject) const;

 private:
  Regex() = default;
  pcre2_real_code_8* code_ = nullptr;
  pcre2_real_match_context_8* context_ = nullptr;
};

}  // namespace ruleplane::expr
