// Timestamps and durations as text, the way CEL and Kubernetes write them.
//
//   ParseRfc3339("2024-05-01T10:00:00.5+02:00")  -> 2024-05-01T08:00:00.5Z
//   FormatRfc3339(t)                              -> "2024-05-01T08:00:00.5Z"
//   ParseDuration("1h30m")                        -> 5400 s (Go syntax: h m s ms us ns,
//                                                    decimals and a sign, e.g. "-1.5h")
//   FormatDuration(d)                             -> "5400s" (CEL's form; "1.5s", "-0.001s")
//
// Timestamps range over CEL's years 1 to 9999 (0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59.999999999Z): text, seconds and arithmetic outside that
// range are errors. Durations are nanoseconds in an int64 (about 292 years
// either way), as in cel-go.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane {

inline constexpr int64_t kMinTimestampSeconds = -62135596800;  // 0001-01-01T00:00:00Z
inline constexpr int64_t kMaxTimestampSeconds = 253402300799;  // 9999-12-31T23:59:59Z

// RFC 3339: "YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)". Digits of the
// fraction beyond nanoseconds are ignored. Errors are kInvalidArgument.
Result<Timestamp> ParseRfc3339(std::string_view text);

// The timestamp `seconds` after the epoch, as CEL's timestamp(int). The
// errors below are kEvaluation, with "out of range" in the message.
Result<Timestamp> TimestampFromUnixSeconds(int64_t seconds);

// timestamp + duration and timestamp - duration, within CEL's range.
Result<Timestamp> AddDuration(Timestamp timestamp, Duration duration);
Result<Timestamp> SubtractDuration(Timestamp timestamp, Duration duration);

// a - b, when it fits in a Duration.
Result<Duration> TimeBetween(Timestamp a, Timestamp b);

// UTC with a "Z"; the fraction only when non-zero, without trailing zeros.
std::string FormatRfc3339(Timestamp timestamp);

// Go's time.ParseDuration syntax, which CEL's duration() uses. Errors are
// kInvalidArgument.
Result<Duration> ParseDuration(std::string_view text);

// Seconds with a fraction only when non-zero: "300s", "1.5s", "-0.000000001s".
std::string FormatDuration(Duration duration);

}  // namespace ruleplane
