// A standard 5-field cron schedule, as robfig/cron's standard parser reads it
// (etcd-druid's full-snapshot and defragmentation schedules), in UTC.
//
//   auto schedule = CronSchedule::Parse("*/30 * * * *");
//   Result<Timestamp> next = schedule->Next(now);   // the first activation strictly after now
//
// Fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or
// JAN-DEC), day of week (0-6 or SUN-SAT, 7 is also Sunday). Each field is a
// comma-separated list of `*`, `?`, `n`, `a-b`, `*/s`, `n/s` (n to the maximum)
// or `a-b/s`; names are case insensitive. When day of month and day of week are
// both restricted (neither starts with `*` or `?` without a step above 1), a day
// matches if either matches. Descriptors: @yearly, @annually, @monthly, @weekly,
// @daily, @midnight, @hourly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane::expr {

class CronSchedule {
 public:
  // Errors (kInvalidArgument) say which field is wrong and why; a schedule
  // whose days can never occur (`0 0 30 2 *`) is an error too.
  static Result<CronSchedule> Parse(std::string_view text);

  // The first activation strictly after `after`, searching up to the end of
  // the fifth year after it (as robfig/cron does); an error beyond that or
  // past the largest representable timestamp.
  Result<Timestamp> Next(Timestamp after) const;

  const std::string& text() const { return text_; }

 private:
  CronSchedule() = default;
  bool DayMatches(int day_of_month, int day_of_week) const;

  std::string text_;
  uint64_t minutes_ = 0;      // bit i: minute i
  uint32_t hours_ = 0;        // bit i: hour i
  uint32_t days_ = 0;         // bit i: day of month i (1-31)
  uint32_t months_ = 0;       // bit i: month i (1-12)
  uint32_t weekdays_ = 0;     // bit i: day of week i (0 = Sunday)
  bool any_day_ = false;      // the day-of-month field is `*` or `?`
  bool any_weekday_ = false;  // the day-of-week field is `*` or `?`
};

}  // namespace ruleplane::expr
