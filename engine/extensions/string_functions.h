// CEL's strings extension (cel-go ext.Strings), internal to the expression
// engine. Indexes and counts are in code points, as size() counts them.
// The caller has checked the argument kinds; results that would equal the
// receiver return the receiver itself (no copy).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "engine/common/value.h"

namespace ruleplane::expr {

// s.split(sep[, n]): Go's strings.SplitN; limit < 0 splits at every `sep`,
// 0 gives [], n gives at most n parts (the last holds the rest). An empty
// `sep` splits into code points.
Value SplitString(const Value& text, std::string_view separator, int64_t limit);

// s.substring(start[, end]): code points [start, end), `end` defaulting to the
// end of the string. Out of range: an error.
Value Substring(const Value& text, int64_t start, std::optional<int64_t> end);

// s.indexOf(sub[, offset]): the first occurrence at or after `offset`, -1 when
// absent; an offset outside [0, size(s)] is an error.
Value IndexOf(const Value& text, std::string_view part, int64_t offset);

// s.lastIndexOf(sub): the last occurrence, -1 when absent.
Value LastIndexOf(const Value& text, std::string_view part);

// s.lowerAscii(), s.upperAscii(): only A-Z / a-z change.
Value LowerAscii(const Value& text);
Value UpperAscii(const Value& text);

// s.replace(old, new[, n]): Go's strings.Replace; limit < 0 replaces all.
Value ReplaceString(const Value& text, std::string_view old_part, std::string_view new_part, int64_t limit);

// s.trim(): without leading and trailing Unicode white space.
Value TrimString(const Value& text);

// list.join([sep]): the list's strings joined; another element is an error.
Value JoinStrings(const Value& list, std::string_view separator);

// The bytes ReplaceString and JoinStrings would build, computed without
// building them (0 when they would fail or return an argument unchanged).
int64_t ReplacedSize(const Value& text, std::string_view old_part, std::string_view new_part, int64_t limit);
int64_t JoinedSize(const Value& list, std::string_view separator);

}  // namespace ruleplane::expr
