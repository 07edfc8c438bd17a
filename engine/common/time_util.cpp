#include "engine/common/time_util.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "engine/common/ascii.h"

namespace ruleplane {
namespace {

constexpr int64_t kNanosPerSecond = 1000000000;
constexpr int64_t kSecondsPerDay = 86400;

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;
  const int64_t day_of_year = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

struct CivilDate {
  int64_t year;
  int month;
  int day;
};

CivilDate CivilFromDays(int64_t days) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t day_of_era = days - era * 146097;
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const int64_t shifted_month = (5 * day_of_year + 2) / 153;
  const int day = static_cast<int>(day_of_year - (153 * shifted_month + 2) / 5 + 1);
  const int month = static_cast<int>(shifted_month < 10 ? shifted_month + 3 : shifted_month - 9);
  return {year_of_era + era * 400 + (month <= 2), month, day};
}

bool IsLeapYear(int64_t year) { return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0); }

int DaysInMonth(int64_t year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

// Reads exactly `count` digits at `pos`; false when they are not all digits.
bool ReadDigits(std::string_view text, size_t& pos, int count, int& value) {
  if (pos + count > text.size()) return false;
  value = 0;
  for (int i = 0; i < count; ++i) {
    const char c = text[pos + i];
    if (!IsAsciiDigit(c)) return false;
    value = value * 10 + (c - '0');
  }
  pos += count;
  return true;
}

bool Expect(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

Error InvalidTimestamp(std::string_view text, std::string_view why) {
  return Error{
      ErrorCode::kInvalidArgument, "invalid timestamp '" + std::string(text) + "': " + std::string(why), {}};
}

Error InvalidDuration(std::string_view text, std::string_view why) {
  return Error{
      ErrorCode::kInvalidArgument, "invalid duration '" + std::string(text) + "': " + std::string(why), {}};
}

bool InRange(int64_t seconds) { return seconds >= kMinTimestampSeconds && seconds <= kMaxTimestampSeconds; }

Error TimestampOutOfRange() {
  return Error{ErrorCode::kEvaluation, "timestamp out of range (years 1 to 9999)", {}};
}

__int128 TotalNanos(Timestamp timestamp) {
  return static_cast<__int128>(timestamp.seconds) * kNanosPerSecond + timestamp.nanos;
}

// The timestamp `nanos` after the epoch, when it is in CEL's range.
Result<Timestamp> FromTotalNanos(__int128 nanos) {
  __int128 seconds = nanos / kNanosPerSecond;
  __int128 rest = nanos % kNanosPerSecond;
  if (rest < 0) {
    rest += kNanosPerSecond;
    --seconds;
  }
  if (seconds < kMinTimestampSeconds || seconds > kMaxTimestampSeconds) return TimestampOutOfRange();
  return Timestamp{static_cast<int64_t>(seconds), static_cast<int32_t>(rest)};
}

// The digits of `nanos` (0 < nanos < 1e9) as a fraction without trailing zeros.
std::string FractionDigits(int64_t nanos) {
  std::string digits = std::to_string(nanos);
  digits.insert(0, 9 - digits.size(), '0');
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
  return digits;
}

}  // namespace

Result<Timestamp> ParseRfc3339(std::string_view text) {
  constexpr std::string_view kExpected = "expected RFC 3339 such as 2024-05-01T10:00:00Z";
  size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!ReadDigits(text, pos, 4, year) || !Expect(text, pos, '-') || !ReadDigits(text, pos, 2, month) ||
      !Expect(text, pos, '-') || !ReadDigits(text, pos, 2, day)) {
    return InvalidTimestamp(text, kExpected);
  }
  if (pos >= text.size() || (text[pos] != 'T' && text[pos] != 't')) return InvalidTimestamp(text, kExpected);
  ++pos;
  if (!ReadDigits(text, pos, 2, hour) || !Expect(text, pos, ':') || !ReadDigits(text, pos, 2, minute) ||
      !Expect(text, pos, ':') || !ReadDigits(text, pos, 2, second)) {
    return InvalidTimestamp(text, kExpected);
  }
  int64_t fraction_nanos = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int digits = 0;
    while (pos < text.size() && IsAsciiDigit(text[pos])) {
      if (digits < 9) fraction_nanos = fraction_nanos * 10 + (text[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return InvalidTimestamp(text, "expected digits after '.'");
    for (int i = digits; i < 9; ++i) fraction_nanos *= 10;
  }
  int offset_seconds = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int offset_hours = 0, offset_minutes = 0;
    if (!ReadDigits(text, pos, 2, offset_hours) || !Expect(text, pos, ':') ||
        !ReadDigits(text, pos, 2, offset_minutes) || offset_hours > 23 || offset_minutes > 59) {
      return InvalidTimestamp(text, "expected a time zone offset such as +02:00");
    }
    offset_seconds = sign * (offset_hours * 3600 + offset_minutes * 60);
  } else {
    return InvalidTimestamp(text, "expected a time zone ('Z' or an offset such as +02:00)");
  }
  if (pos != text.size()) return InvalidTimestamp(text, "unexpected text after the time zone");
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, month) || hour > 23 ||
      minute > 59 || second > 59) {
    return InvalidTimestamp(text, "date or time field out of range");
  }
  const int64_t seconds =
      DaysFromCivil(year, month, day) * kSecondsPerDay + hour * 3600 + minute * 60 + second - offset_seconds;
  if (!InRange(seconds)) return InvalidTimestamp(text, "out of range (years 1 to 9999 in UTC)");
  return Timestamp{seconds, static_cast<int32_t>(fraction_nanos)};
}

Result<Timestamp> TimestampFromUnixSeconds(int64_t seconds) {
  if (!InRange(seconds)) return TimestampOutOfRange();
  return Timestamp{seconds, 0};
}

Result<Timestamp> AddDuration(Timestamp timestamp, Duration duration) {
  return FromTotalNanos(TotalNanos(timestamp) + duration.nanos);
}

Result<Timestamp> SubtractDuration(Timestamp timestamp, Duration duration) {
  return FromTotalNanos(TotalNanos(timestamp) - duration.nanos);
}

Result<Duration> TimeBetween(Timestamp a, Timestamp b) {
  const __int128 nanos = TotalNanos(a) - TotalNanos(b);
  if (nanos < std::numeric_limits<int64_t>::min() || nanos > std::numeric_limits<int64_t>::max()) {
    return Error{ErrorCode::kEvaluation, "duration out of range (about 292 years either way)", {}};
  }
  return Duration{static_cast<int64_t>(nanos)};
}

std::string FormatRfc3339(Timestamp timestamp) {
  const int64_t seconds = timestamp.seconds;
  const int64_t nanos = timestamp.nanos;
  int64_t days = seconds / kSecondsPerDay;
  int64_t second_of_day = seconds % kSecondsPerDay;
  if (second_of_day < 0) {
    second_of_day += kSecondsPerDay;
    --days;
  }
  const CivilDate date = CivilFromDays(days);
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%04lld-%02d-%02dT%02lld:%02lld:%02lld",
                static_cast<long long>(date.year), date.month, date.day,
                static_cast<long long>(second_of_day / 3600), static_cast<long long>(second_of_day / 60 % 60),
                static_cast<long long>(second_of_day % 60));
  std::string out = buffer;
  if (nanos != 0) out += "." + FractionDigits(nanos);
  out += 'Z';
  return out;
}

// Follows Go's time.ParseDuration, including its handling of fractions.
Result<Duration> ParseDuration(std::string_view text) {
  struct Unit {
    std::string_view name;
    uint64_t nanos;
  };
  static constexpr Unit kUnits[] = {
      {"ns", 1},       {"us", 1000},      {"\xC2\xB5s", 1000},       {"\xCE\xBCs", 1000},
      {"ms", 1000000}, {"s", 1000000000}, {"m", 60ULL * 1000000000}, {"h", 3600ULL * 1000000000},
  };
  constexpr uint64_t kLimit = uint64_t{1} << 63;
  std::string_view rest = text;
  bool negative = false;
  if (!rest.empty() && (rest[0] == '-' || rest[0] == '+')) {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  if (rest == "0") return Duration{0};
  if (rest.empty()) return InvalidDuration(text, "expected a number and a unit such as 5m, 1h30m or 1.5s");
  uint64_t total = 0;
  while (!rest.empty()) {
    if (rest[0] != '.' && !IsAsciiDigit(rest[0])) {
      return InvalidDuration(text, "expected a number and a unit such as 5m, 1h30m or 1.5s");
    }
    uint64_t whole = 0;
    size_t i = 0;
    for (; i < rest.size() && IsAsciiDigit(rest[i]); ++i) {
      if (whole > (kLimit - 1) / 10) return InvalidDuration(text, "out of range");
      whole = whole * 10 + (rest[i] - '0');
      if (whole > kLimit) return InvalidDuration(text, "out of range");
    }
    const bool has_whole = i > 0;
    rest.remove_prefix(i);
    uint64_t fraction = 0;
    double scale = 1;
    bool has_fraction = false;
    if (!rest.empty() && rest[0] == '.') {
      rest.remove_prefix(1);
      bool overflowed = false;
      for (i = 0; i < rest.size() && IsAsciiDigit(rest[i]); ++i) {
        if (overflowed) continue;
        if (fraction > (kLimit - 1) / 10) {
          overflowed = true;
          continue;
        }
        const uint64_t next = fraction * 10 + (rest[i] - '0');
        if (next > kLimit) {
          overflowed = true;
          continue;
        }
        fraction = next;
        scale *= 10;
      }
      has_fraction = i > 0;
      rest.remove_prefix(i);
    }
    if (!has_whole && !has_fraction) {
      return InvalidDuration(text, "expected a number and a unit such as 5m, 1h30m or 1.5s");
    }
    for (i = 0; i < rest.size() && rest[i] != '.' && !IsAsciiDigit(rest[i]); ++i) {
    }
    if (i == 0) return InvalidDuration(text, "missing unit (ns, us, ms, s, m or h)");
    const std::string_view unit_name = rest.substr(0, i);
    rest.remove_prefix(i);
    const Unit* unit = nullptr;
    for (const Unit& candidate : kUnits) {
      if (candidate.name == unit_name) unit = &candidate;
    }
    if (unit == nullptr) {
      return InvalidDuration(text, "unknown unit '" + std::string(unit_name) + "' (ns, us, ms, s, m or h)");
    }
    if (whole > kLimit / unit->nanos) return InvalidDuration(text, "out of range");
    uint64_t value = whole * unit->nanos;
    if (fraction > 0) {
      value +=
          static_cast<uint64_t>(static_cast<double>(fraction) * (static_cast<double>(unit->nanos) / scale));
      if (value > kLimit) return InvalidDuration(text, "out of range");
    }
    total += value;
    if (total > kLimit) return InvalidDuration(text, "out of range");
  }
  if (negative) return Duration{static_cast<int64_t>(0 - total)};
  if (total > kLimit - 1) return InvalidDuration(text, "out of range");
  return Duration{static_cast<int64_t>(total)};
}

std::string FormatDuration(Duration duration) {
  const bool negative = duration.nanos < 0;
  const uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(duration.nanos) : static_cast<uint64_t>(duration.nanos);
  std::string out = negative ? "-" : "";
  out += std::to_string(magnitude / kNanosPerSecond);
  const uint64_t nanos = magnitude % kNanosPerSecond;
  if (nanos != 0) out += "." + FractionDigits(static_cast<int64_t>(nanos));
  out += 's';
  return out;
}

}  // namespace ruleplane
