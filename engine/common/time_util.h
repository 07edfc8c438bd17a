// Timestamps and durations as text, the way CEL and Kubernetes write them.
//
//   ParseRfc3339("2024-05-01T10:00:00.5+02:00")  -> 2024-05-01T08:00:00.5Z
//   FormatRfc3339(t)                              -> "2024-05-01T08:00:00.5Z"
//   ParseDuration("1h30m")                        -> 5400 s (Go syntax: h m s ms us ns,
//                                                    decimals and a sign, e.g. "-1.5h")
//   FormatDuration(d)                             -> "5400s" (CEL's form; "1.5s", "-0.001s")
//
// Times are nanoseconds since the Unix epoch in an int64, so they range over
// the years 1677 to 2262; text outside that range is an error.
#pragma once

#include <string>
#include <string_view>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane {

// RFC 3339: "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)". Digits of the
// fraction beyond nanoseconds are ignored. Errors are kInvalidArgument.
Result<Timestamp> ParseRfc3339(std::string_view text);

// UTC with a "Z"; the fraction only when non-zero, without trailing zeros.
std::string FormatRfc3339(Timestamp timestamp);

// Go's time.ParseDuration syntax, which CEL's duration() uses. Errors are
// kInvalidArgument.
Result<Duration> ParseDuration(std::string_view text);

// Seconds with a fraction only when non-zero: "300s", "1.5s", "-0.000000001s".
std::string FormatDuration(Duration duration);

}  // namespace ruleplane
