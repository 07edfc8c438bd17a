// etcd-backup-restore's garbage collection (pkg/snapshot/snapshotter/garbagecollector.go),
// computed instead of performed: see backup_retention.h.
#include "member/backup_retention.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>

#include "engine/extensions/cron_schedule.h"

namespace ruleplane {
namespace {

constexpr int64_t kSecondsPerDay = 24 * 3600;
constexpr int64_t kNanosecondsPerSecond = 1'000'000'000;
// Go's time.Hour, in nanoseconds: the durations below are Go's time.Duration.
constexpr int64_t kHour = 3600 * kNanosecondsPerSecond;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kWeek = 7 * kDay;
// The largest time.Duration, in whole seconds: --delta-snapshot-retention-period cannot exceed it.
constexpr int64_t kMaxDurationSeconds = std::numeric_limits<int64_t>::max() / kNanosecondsPerSecond;

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

// time.Time.Hour() of a UTC time (ParseSnapshot makes CreatedOn UTC; the collector's now is UTC).
int64_t HourOfDay(int64_t unix_seconds) { return FloorMod(unix_seconds, kSecondsPerDay) / 3600; }

// Go's t.Sub(u) for whole seconds: a time.Duration, saturated at its range.
int64_t GoSub(int64_t t_seconds, int64_t u_seconds) {
  int64_t seconds = 0;
  int64_t nanoseconds = 0;
  if (__builtin_sub_overflow(t_seconds, u_seconds, &seconds) ||
      __builtin_mul_overflow(seconds, kNanosecondsPerSecond, &nanoseconds)) {
    return t_seconds < u_seconds ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
  return nanoseconds;
}

// What etcd-backup-restore's ParseSnapshot would have refused, or a chunk
// ("v2/<name>/<part>"), which its collector handles apart (GarbageCollectChunks).
bool Placeable(const StoredSnapshot& snapshot) {
  if (snapshot.kind != "Full" && snapshot.kind != "Incr") return false;
  if (snapshot.start_revision > snapshot.last_revision) return false;
  return snapshot.path.empty() || snapshot.path == snapshot.name ||
         snapshot.path.ends_with("/" + snapshot.name);
}

// RunGarbageCollector, case GarbageCollectionPolicyExponential: walks the
// fulls from the newest to the oldest and judges each (nextSnap) against the
// next newer one (snap), whether or not that one is deleted. Returns the
// positions in `fulls` to delete.
std::vector<size_t> ExponentialCollects(const std::vector<const StoredSnapshot*>& fulls,
                                        int64_t now_seconds) {
  std::vector<size_t> doomed;
  // now.Truncate(24 * time.Hour) rounds down to a multiple of days since
  // Go's zero time, which is UTC midnight; then 23:59:59 is added.
  int64_t eod = now_seconds - FloorMod(now_seconds, kSecondsPerDay) + kSecondsPerDay - 1;
  bool tracking_week = false;
  for (size_t index = fulls.size() - 1; index > 0; --index) {
    const StoredSnapshot& snap = *fulls[index];
    const StoredSnapshot& next_snap = *fulls[index - 1];
    const int64_t age = GoSub(eod, next_snap.created_on);
    int64_t threshold = 0;
    if (age < kDay) {
      // Today: every full of the current hour is kept.
      threshold = HourOfDay(next_snap.created_on) == HourOfDay(now_seconds) ? 0 : 1;
    } else if (age < 8 * kDay) {
      threshold = 24;
    } else if (age < 5 * kWeek) {
      if (!tracking_week) {
        // "we shift eod to previous day's EOD when start tracking week"
        eod -= kSecondsPerDay;
        tracking_week = true;
      }
      threshold = 24 * 7;
    } else {
      threshold = std::numeric_limits<int32_t>::max();
    }
    // int(d.Hours()), int(d.Hours()/24), int(d.Hours()/(24*7)): truncation
    // toward zero, as integer division does.
    const int64_t to_next = GoSub(eod, next_snap.created_on);
    const int64_t to_snap = GoSub(eod, snap.created_on);
    const int64_t hour_change = to_next / kHour - to_snap / kHour;
    const int64_t day_change = to_next / kDay - to_snap / kDay;
    const int64_t week_change = to_next / kWeek - to_snap / kWeek;
    const bool keep = threshold == 0 || hour_change / threshold != 0 || day_change * 24 / threshold != 0 ||
                      week_change * 24 * 7 / threshold != 0;
    if (!keep) doomed.push_back(index - 1);
  }
  return doomed;
}

// Whether fulls[index] and the next newer full fall in one period of
// `schedule`: the same first activation after their creation. A schedule
// that never fires again shares nothing.
bool SharesPeriodWithNext(const std::vector<const StoredSnapshot*>& fulls, size_t index,
                          const std::optional<expr::CronSchedule>& schedule) {
  if (!schedule || index + 1 >= fulls.size()) return false;
  auto period = schedule->Next(Timestamp{fulls[index]->created_on, 0});
  auto next_period = schedule->Next(Timestamp{fulls[index + 1]->created_on, 0});
  return period.ok() && next_period.ok() && period->seconds == next_period->seconds;
}

}  // namespace

Result<GarbageCollectionPolicy> ParseGarbageCollectionPolicy(std::string_view text) {
  if (text == "Exponential") return GarbageCollectionPolicy::kExponential;
  if (text == "LimitBased") return GarbageCollectionPolicy::kLimitBased;
  return Error{
      ErrorCode::kInvalidArgument,
      "invalid garbage collection policy \"" + std::string(text) + "\": Exponential or LimitBased (spelt so)",
      {}};
}

const char* GarbageCollectionPolicyName(GarbageCollectionPolicy policy) {
  return policy == GarbageCollectionPolicy::kLimitBased ? "LimitBased" : "Exponential";
}

Result<std::vector<StoredSnapshot>> SnapshotsToCollect(const std::vector<StoredSnapshot>& snapshots,
                                                       const RetentionOptions& options,
                                                       std::chrono::system_clock::time_point now) {
  if (options.policy == GarbageCollectionPolicy::kLimitBased && options.max_backups < 1) {
    return Error{ErrorCode::kInvalidArgument,
                 "max backups is " + std::to_string(options.max_backups) +
                     ": LimitBased garbage collection keeps at least 1",
                 {}};
  }
  if (options.delta_retention.count() < 0 || options.delta_retention.count() > kMaxDurationSeconds) {
    return Error{ErrorCode::kInvalidArgument,
                 "delta snapshot retention period of " + std::to_string(options.delta_retention.count()) +
                     " s: from 0 to " + std::to_string(kMaxDurationSeconds) + " s",
                 {}};
  }

  // snapList, sorted as the store sorts it (SnapList.Less), without what
  // cannot be placed.
  std::vector<const StoredSnapshot*> ordered;
  for (const StoredSnapshot& snapshot : snapshots) {
    if (Placeable(snapshot)) ordered.push_back(&snapshot);
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const StoredSnapshot* a, const StoredSnapshot* b) {
    if (a->last_revision != b->last_revision) return a->last_revision < b->last_revision;
    return a->created_on < b->created_on;
  });
  // getFullSnapshotIndexList. It always lists position 0, even when that is
  // a delta, and so deletes such a delta by the rule for fulls, within the
  // retention period too; here it differs from etcd-backup-restore because a
  // delta is judged by the delta rule only, as its documentation says
  // (docs/usage/garbage_collection.md: "All delta snapshots that fall within
  // the delta-snapshot-retention-period are preserved").
  std::vector<size_t> full_positions;
  std::vector<const StoredSnapshot*> fulls;
  for (size_t position = 0; position < ordered.size(); ++position) {
    if (ordered[position]->kind != "Full") continue;
    full_positions.push_back(position);
    fulls.push_back(ordered[position]);
  }
  std::vector<StoredSnapshot> doomed;
  if (fulls.empty()) return doomed;  // one stream, the latest: nothing to collect

  const int64_t now_nanoseconds =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  const int64_t now_seconds = FloorDiv(now_nanoseconds, kNanosecondsPerSecond);
  std::vector<bool> collect(ordered.size(), false);

  // GarbageCollectDeltaSnapshots over every stream but the latest: a delta
  // whose CreatedOn is Before(now - retention), strictly.
  const int64_t cutoff_nanoseconds =
      now_nanoseconds - options.delta_retention.count() * kNanosecondsPerSecond;
  const int64_t cutoff_seconds_ceiling = -FloorDiv(-cutoff_nanoseconds, kNanosecondsPerSecond);
  for (size_t position = 0; position < full_positions.back(); ++position) {
    const StoredSnapshot& snapshot = *ordered[position];
    if (snapshot.kind == "Incr" && snapshot.created_on < cutoff_seconds_ceiling) collect[position] = true;
  }

  if (options.policy == GarbageCollectionPolicy::kExponential) {
    for (size_t index : ExponentialCollects(fulls, now_seconds)) collect[full_positions[index]] = true;
  } else {
    // Every full but the newest max_backups counted ones; never the newest,
    // as max_backups >= 1 and the newest is counted.
    // Parsed once; an unreadable schedule counts files, as without one.
    std::optional<expr::CronSchedule> schedule;
    if (!options.schedule.empty()) {
      if (auto parsed = expr::CronSchedule::Parse(options.schedule); parsed.ok()) schedule = *parsed;
    }
    std::vector<size_t> counted;
    for (size_t index = 0; index < fulls.size(); ++index) {
      if (SharesPeriodWithNext(fulls, index, schedule)) {
        collect[full_positions[index]] = true;
      } else {
        counted.push_back(index);
      }
    }
    const int64_t surplus = static_cast<int64_t>(counted.size()) - options.max_backups;
    for (int64_t index = 0; index < surplus; ++index)
      collect[full_positions[counted[static_cast<size_t>(index)]]] = true;
  }

  // What a compaction replaced stays while the compaction's full is the newest.
  if (!options.compacted_full.empty() && fulls.size() >= 2 && fulls.back()->name == options.compacted_full) {
    for (size_t position = full_positions[fulls.size() - 2]; position < full_positions.back(); ++position)
      collect[position] = false;
  }

  const StoredSnapshot* newest_final = nullptr;
  for (const StoredSnapshot* snapshot : ordered) {
    if (snapshot->kind == "Full" && snapshot->is_final) newest_final = snapshot;
  }
  for (size_t position = 0; position < ordered.size(); ++position) {
    if (collect[position] && ordered[position] != newest_final) doomed.push_back(*ordered[position]);
  }
  return doomed;
}

}  // namespace ruleplane
