#include "engine/extensions/cron_schedule.h"

#include <bit>
#include <chrono>
#include <optional>
#include <span>
#include <vector>

#include "engine/common/time_util.h"

namespace ruleplane::expr {
namespace {

constexpr int64_t kMinutesPerDay = 24 * 60;
constexpr int kYearsSearched = 5;

constexpr std::string_view kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                            "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::string_view kDayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

struct Field {
  std::string_view name;
  int min;
  int max;                                  // what `*` and `n/s` extend to
  int largest;                              // the largest number written (7: Sunday again)
  std::span<const std::string_view> names;  // names[i] stands for min + i
};

constexpr Field kFields[] = {
    {"minute", 0, 59, 59, {}},           {"hour", 0, 23, 23, {}},
    {"day of month", 1, 31, 31, {}},     {"month", 1, 12, 12, kMonthNames},
    {"day of week", 0, 6, 7, kDayNames},
};

struct Descriptor {
  std::string_view name;
  std::string_view fields;
};

constexpr Descriptor kDescriptors[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
    {"@daily", "0 0 * * *"},  {"@midnight", "0 0 * * *"}, {"@hourly", "0 * * * *"},
};

struct FieldBits {
  uint64_t bits = 0;
  bool any = false;  // `*` or `?` (without a step above 1): matters for the day-of-month/day-of-week rule
};

Error Invalid(std::string_view schedule, std::string_view why) {
  return Error{ErrorCode::kInvalidArgument,
               "invalid cron schedule \"" + std::string(schedule) + "\": " + std::string(why),
               {}};
}

bool EqualsIgnoringCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (c != lower[i]) return false;
  }
  return true;
}

std::optional<int> ParseNumber(std::string_view text) {
  if (text.empty() || text.size() > 6) return std::nullopt;
  int value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

std::optional<int> ParseValue(std::string_view text, const Field& field) {
  for (size_t i = 0; i < field.names.size(); ++i) {
    if (EqualsIgnoringCase(text, field.names[i])) return field.min + static_cast<int>(i);
  }
  return ParseNumber(text);
}

// One element of a comma-separated list: `*`, `n`, `a-b`, each with an optional `/step`.
Result<FieldBits> ParseRange(std::string_view schedule, std::string_view text, const Field& field) {
  const std::string where = std::string(field.name) + ": ";
  const size_t slash = text.find('/');
  const std::string_view range = text.substr(0, slash);
  FieldBits out;
  int start = 0, end = 0;
  if (range == "*" || range == "?") {
    start = field.min;
    end = field.max;
    out.any = true;
  } else {
    const size_t hyphen = range.find('-');
    const std::string_view low = range.substr(0, hyphen);
    const std::optional<int> first = ParseValue(low, field);
    if (!first) return Invalid(schedule, where + "'" + std::string(low) + "' is not a number or name");
    start = end = *first;
    if (hyphen != std::string_view::npos) {
      const std::string_view high = range.substr(hyphen + 1);
      if (high.find('-') != std::string_view::npos) {
        return Invalid(schedule, where + "too many hyphens in '" + std::string(text) + "'");
      }
      const std::optional<int> last = ParseValue(high, field);
      if (!last) return Invalid(schedule, where + "'" + std::string(high) + "' is not a number or name");
      end = *last;
    } else if (slash != std::string_view::npos) {
      end = field.max;  // `n/s`: from n to the maximum
    }
  }
  int step = 1;
  if (slash != std::string_view::npos) {
    const std::string_view step_text = text.substr(slash + 1);
    if (step_text.find('/') != std::string_view::npos) {
      return Invalid(schedule, where + "too many slashes in '" + std::string(text) + "'");
    }
    const std::optional<int> parsed = ParseNumber(step_text);
    if (!parsed) return Invalid(schedule, where + "step '" + std::string(step_text) + "' is not a number");
    step = *parsed;
    if (step > 1) out.any = false;
  }
  if (start < field.min) {
    return Invalid(schedule,
                   where + std::to_string(start) + " is below the minimum " + std::to_string(field.min));
  }
  if (end > field.largest) {
    return Invalid(schedule,
                   where + std::to_string(end) + " is above the maximum " + std::to_string(field.largest));
  }
  if (start > end) {
    return Invalid(schedule, where + "range start " + std::to_string(start) + " is beyond its end " +
                                 std::to_string(end));
  }
  if (step == 0) return Invalid(schedule, where + "the step must be positive");
  for (int value = start; value <= end; value += step) out.bits |= uint64_t{1} << value;
  return out;
}

Result<FieldBits> ParseField(std::string_view schedule, std::string_view text, const Field& field) {
  FieldBits out;
  size_t begin = 0;
  while (true) {
    const size_t comma = text.find(',', begin);
    auto range = ParseRange(schedule, text.substr(begin, comma - begin), field);
    if (!range.ok()) return range.error();
    out.bits |= range->bits;
    out.any |= range->any;
    if (comma == std::string_view::npos) return out;
    begin = comma + 1;
  }
}

bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::vector<std::string_view> SplitFields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    const size_t begin = i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    if (i > begin) fields.push_back(text.substr(begin, i - begin));
  }
  return fields;
}

int64_t FloorDivide(int64_t a, int64_t b) {
  const int64_t quotient = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient;
}

}  // namespace

Result<CronSchedule> CronSchedule::Parse(std::string_view text) {
  if (text.empty()) return Invalid(text, "empty schedule");
  std::string_view fields_text = text;
  if (text.front() == '@') {
    const Descriptor* descriptor = nullptr;
    for (const Descriptor& candidate : kDescriptors) {
      if (candidate.name == text) descriptor = &candidate;
    }
    if (descriptor == nullptr) {
      return Invalid(text,
                     "unknown descriptor (expected @yearly, @annually, @monthly, @weekly, @daily, "
                     "@midnight or @hourly)");
    }
    fields_text = descriptor->fields;
  }
  const std::vector<std::string_view> fields = SplitFields(fields_text);
  if (fields.size() != std::size(kFields)) {
    return Invalid(text, "expected 5 fields (minute hour day-of-month month day-of-week), found " +
                             std::to_string(fields.size()));
  }
  FieldBits parsed[std::size(kFields)];
  for (size_t i = 0; i < fields.size(); ++i) {
    auto field = ParseField(text, fields[i], kFields[i]);
    if (!field.ok()) return field.error();
    parsed[i] = *field;
  }
  CronSchedule schedule;
  schedule.text_ = std::string(text);
  schedule.minutes_ = parsed[0].bits;
  schedule.hours_ = static_cast<uint32_t>(parsed[1].bits);
  schedule.days_ = static_cast<uint32_t>(parsed[2].bits);
  schedule.any_day_ = parsed[2].any;
  schedule.months_ = static_cast<uint32_t>(parsed[3].bits);
  schedule.weekdays_ = static_cast<uint32_t>(parsed[4].bits);
  if (schedule.weekdays_ & (1u << 7)) schedule.weekdays_ = (schedule.weekdays_ | 1u) & 0x7f;
  schedule.any_weekday_ = parsed[4].any;

  // Only the day of month can make a schedule impossible (31 in February, ...),
  // and only when it alone decides the day.
  if (!schedule.any_day_ && schedule.any_weekday_) {
    static constexpr int kLongestMonth[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool possible = false;
    for (int month = 1; month <= 12; ++month) {
      const uint64_t days_of_month = ((uint64_t{1} << (kLongestMonth[month - 1] + 1)) - 1) & ~uint64_t{1};
      if ((schedule.months_ >> month & 1) && (schedule.days_ & days_of_month)) possible = true;
    }
    if (!possible) return Invalid(text, "the day of month never occurs in the months given");
  }
  return schedule;
}

bool CronSchedule::DayMatches(int day_of_month, int day_of_week) const {
  const bool day = days_ >> day_of_month & 1;
  const bool weekday = weekdays_ >> day_of_week & 1;
  // cron's rule: when both fields are restricted, either may match.
  if (any_day_ || any_weekday_) return day && weekday;
  return day || weekday;
}

Result<Timestamp> CronSchedule::Next(Timestamp after) const {
  using std::chrono::days;
  using std::chrono::sys_days;
  using std::chrono::year_month_day;
  // Activations are whole minutes; the first candidate is the next one.
  const int64_t first_minute = FloorDivide(after.seconds, 60) + 1;
  int64_t day = FloorDivide(first_minute, kMinutesPerDay);
  int64_t minute_of_day = first_minute - day * kMinutesPerDay;
  const int last_year = static_cast<int>(year_month_day(sys_days(days(day))).year()) + kYearsSearched;
  for (;; ++day, minute_of_day = 0) {
    const sys_days date{days(day)};
    const year_month_day civil(date);
    if (static_cast<int>(civil.year()) > last_year) break;
    if (!(months_ >> static_cast<unsigned>(civil.month()) & 1)) {
      day = sys_days(civil.year() / civil.month() / std::chrono::last).time_since_epoch().count();
      continue;
    }
    if (!DayMatches(static_cast<int>(static_cast<unsigned>(civil.day())),
                    static_cast<int>(std::chrono::weekday(date).c_encoding()))) {
      continue;
    }
    for (int64_t hour = minute_of_day / 60; hour < 24; ++hour) {
      if (!(hours_ >> hour & 1)) continue;
      const int64_t first = hour == minute_of_day / 60 ? minute_of_day % 60 : 0;
      const uint64_t candidates = minutes_ & (~uint64_t{0} << first);
      if (candidates == 0) continue;
      const int64_t minute = (day * kMinutesPerDay) + hour * 60 + std::countr_zero(candidates);
      if (minute * 60 > kMaxTimestampSeconds) {
        return Error{
            ErrorCode::kEvaluation,
            "timestamp out of range: the next activation of \"" + text_ + "\" is after the year 9999",
            {}};
      }
      return Timestamp{minute * 60, 0};
    }
  }
  return Error{ErrorCode::kEvaluation,
               "cron schedule \"" + text_ + "\" has no activation within " + std::to_string(kYearsSearched) +
                   " years after " + FormatRfc3339(after),
               {}};
}

}  // namespace ruleplane::expr
