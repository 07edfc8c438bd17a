#include "engine/expr/regex.h"

#include <memory>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <string>

namespace ruleplane::expr {

Result<std::shared_ptr<const Regex>> Regex::Compile(std::string_view pattern, uint32_t match_limit) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_NEVER_BACKSLASH_C, &error_code,
                                   &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    return Error{ErrorCode::kCheck,
                 "invalid regular expression '" + std::string(pattern) +
                     "': " + reinterpret_cast<const char*>(message) + " (at offset " +
                     std::to_string(error_offset) + ")",
                 {}};
  }
  std::shared_ptr<Regex> regex(new Regex());
  regex->code_ = code;
  for (uint64_t limit = 64;; limit *= 8) {
    const auto step_limit =
        static_cast<uint32_t>(std::min<uint64_t>(limit, std::max<uint32_t>(match_limit, 1)));
    pcre2_match_context* context = pcre2_match_context_create(nullptr);
    if (context == nullptr) return Error{ErrorCode::kInternal, "out of memory compiling a regex", {}};
    pcre2_set_match_limit(context, step_limit);
    pcre2_set_depth_limit(context, step_limit);
    regex->contexts_.emplace_back(step_limit, context);
    if (step_limit >= match_limit) break;
  }
  return std::shared_ptr<const Regex>(std::move(regex));
}

Regex::~Regex() {
  for (const auto& [limit, context] : contexts_) pcre2_match_context_free(context);
  pcre2_code_free(code_);
}

Value Regex::Matches(std::string_view subject, Budget& budget) const {
  // matches() asks only whether there is a match: one ovector pair is enough,
  // and one block per thread serves every match.
  thread_local const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match_data_block(
      pcre2_match_data_create(1, nullptr), &pcre2_match_data_free);
  pcre2_match_data* match_data = match_data_block.get();
  if (match_data == nullptr) return Value::Error("out of memory matching a regular expression");
  int result = PCRE2_ERROR_MATCHLIMIT;
  int64_t spent = static_cast<int64_t>(subject.size());
  for (const auto& [limit, context] : contexts_) {
    if (!budget.Fits(spent + limit / 8)) {
      spent = budget.limit() - budget.used() + 1;  // exhausts it
      break;
    }
    result = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0, 0,
                         match_data, context);
    const bool ran_out = result == PCRE2_ERROR_MATCHLIMIT || result == PCRE2_ERROR_DEPTHLIMIT;
    spent += ran_out ? limit : limit / 8;
    if (!ran_out) break;
  }
  if (!budget.Charge(spent)) return Value::Error(budget.Message());
  if (result >= 0) return Value::Bool(true);
  if (result == PCRE2_ERROR_NOMATCH) return Value::Bool(false);
  if (result == PCRE2_ERROR_MATCHLIMIT || result == PCRE2_ERROR_DEPTHLIMIT ||
      result == PCRE2_ERROR_HEAPLIMIT) {
    return Value::Error("regular expression match limit exceeded");
  }
  PCRE2_UCHAR message[256];
  pcre2_get_error_message(result, message, sizeof(message));
  return Value::Error(std::string("regular expression match failed: ") +
                      reinterpret_cast<const char*>(message));
}

}  // namespace ruleplane::expr
