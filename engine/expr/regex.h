// A compiled PCRE2 regular expression with a bounded match (internal).
// Immutable and safe to use from many threads: match data is per call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/common/error.h"
#include "engine/common/value.h"
#include "engine/expr/budget.h"

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
  // when the match limit is exceeded. The steps count against `budget`: the
  // match runs under growing step limits (64, then 8 times more each time, up
  // to the match limit), and is charged the limits of the tries that ran out
  // plus the last limit it stayed under, so that the charge is within a
  // factor of 8 of the steps taken; a match that runs out of the match limit
  // is charged all of it, and cannot be retried cheaply on every element.
  Value Matches(std::string_view subject, Budget& budget) const;

 private:
  Regex() = default;
  pcre2_real_code_8* code_ = nullptr;
  std::vector<std::pair<uint32_t, pcre2_real_match_context_8*>> contexts_;  // by growing step limit
};

}  // namespace ruleplane::expr
