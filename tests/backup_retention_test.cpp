// etcd-backup-restore's garbage collection as a decision: its own tests'
// stores and expectations (pkg/snapshot/snapshotter/snapshotter_test.go,
// "##GarbageCollector"), the bucket boundaries second by second, where
// ruleplane keeps what etcd-backup-restore would delete, and invariants over
// generated listings from fixed seeds.
#include "member/backup_retention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace ruleplane {
namespace {

using Clock = std::chrono::system_clock;

constexpr int64_t kMinute = 60;
constexpr int64_t kHour = 3600;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kToday = 1710460800;  // 2024-03-15T00:00:00Z

// Unix seconds of today + `day` days (negative: before) at hh:mm:ss UTC.
int64_t At(int64_t day, int64_t hour, int64_t minute = 0, int64_t second = 0) {
  return kToday + day * kDay + hour * kHour + minute * kMinute + second;
}

Clock::time_point Time(int64_t unix_seconds, int64_t nanoseconds = 0) {
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(
      std::chrono::seconds(unix_seconds) + std::chrono::nanoseconds(nanoseconds)));
}

StoredSnapshot Stored(const std::string& kind, int64_t start, int64_t last, int64_t created,
                      bool final = false) {
  char name[96];
  std::snprintf(name, sizeof name, "%s-%08lld-%08lld-%lld%s", kind.c_str(), static_cast<long long>(start),
                static_cast<long long>(last), static_cast<long long>(created), final ? ".final" : "");
  StoredSnapshot snapshot;
  snapshot.name = name;
  snapshot.path = "v2/" + snapshot.name;
  snapshot.kind = kind;
  snapshot.start_revision = start;
  snapshot.last_revision = last;
  snapshot.created_on = created;
  snapshot.is_final = final;
  return snapshot;
}

StoredSnapshot Full(int64_t last, int64_t created, bool final = false) {
  return Stored("Full", 0, last, created, final);
}

StoredSnapshot Incr(int64_t start, int64_t last, int64_t created) {
  return Stored("Incr", start, last, created);
}

std::vector<std::string> Names(const std::vector<StoredSnapshot>& snapshots) {
  std::vector<std::string> names;
  for (const StoredSnapshot& snapshot : snapshots) names.push_back(snapshot.name);
  return names;
}

std::vector<StoredSnapshot> Collect(const std::vector<StoredSnapshot>& listing,
                                    const RetentionOptions& options, Clock::time_point now) {
  auto collected = SnapshotsToCollect(listing, options, now);
  EXPECT_TRUE(collected.ok()) << collected.error().message;
  return collected.ok() ? *collected : std::vector<StoredSnapshot>{};
}

// The listing without what `Collect` deletes, in the listing's order.
std::vector<StoredSnapshot> Kept(const std::vector<StoredSnapshot>& listing, const RetentionOptions& options,
                                 Clock::time_point now) {
  std::set<std::string> deleted;
  for (const StoredSnapshot& snapshot : Collect(listing, options, now)) deleted.insert(snapshot.path);
  std::vector<StoredSnapshot> kept;
  for (const StoredSnapshot& snapshot : listing) {
    if (!deleted.contains(snapshot.path)) kept.push_back(snapshot);
  }
  return kept;
}

RetentionOptions Exponential() { return {GarbageCollectionPolicy::kExponential, kDefaultMaxBackups, {}, ""}; }

RetentionOptions LimitBased(int64_t max_backups, std::chrono::seconds retention = {}) {
  return {GarbageCollectionPolicy::kLimitBased, max_backups, retention, ""};
}

TEST(BackupRetention, ParsesThePolicyAsEtcdBackupRestoresFlagSpellsIt) {
  auto exponential = ParseGarbageCollectionPolicy("Exponential");
  ASSERT_TRUE(exponential.ok());
  EXPECT_EQ(*exponential, GarbageCollectionPolicy::kExponential);
  auto limit_based = ParseGarbageCollectionPolicy("LimitBased");
  ASSERT_TRUE(limit_based.ok());
  EXPECT_EQ(*limit_based, GarbageCollectionPolicy::kLimitBased);
  EXPECT_STREQ(GarbageCollectionPolicyName(*exponential), "Exponential");
  EXPECT_STREQ(GarbageCollectionPolicyName(*limit_based), "LimitBased");
  for (const char* wrong : {"exponential", "Limitbased", "", "LimitBased "}) {
    auto parsed = ParseGarbageCollectionPolicy(wrong);
    ASSERT_FALSE(parsed.ok()) << wrong;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message.find("\"" + std::string(wrong) + "\""), std::string::npos)
        << parsed.error().message;
  }
}

TEST(BackupRetention, RefusesOptionsEtcdBackupRestoreRefuses) {
  const std::vector<StoredSnapshot> listing = {Full(100, At(-1, 0)), Full(200, At(0, 0))};
  auto none_kept = SnapshotsToCollect(listing, LimitBased(0), Time(At(0, 1)));
  ASSERT_FALSE(none_kept.ok());
  EXPECT_EQ(none_kept.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(SnapshotsToCollect(listing, LimitBased(-3), Time(At(0, 1))).ok());
  EXPECT_FALSE(SnapshotsToCollect(listing, LimitBased(1, std::chrono::seconds(-1)), Time(At(0, 1))).ok());
  // Go's time.Duration ends at about 292 years.
  EXPECT_FALSE(
      SnapshotsToCollect(listing, LimitBased(1, std::chrono::seconds(9'223'372'037)), Time(At(0, 1))).ok());
  EXPECT_TRUE(
      SnapshotsToCollect(listing, LimitBased(1, std::chrono::seconds(9'223'372'036)), Time(At(0, 1))).ok());
  // max_backups means nothing to Exponential (Validate checks it for LimitBased only).
  EXPECT_TRUE(
      SnapshotsToCollect(listing, {GarbageCollectionPolicy::kExponential, 0, {}, ""}, Time(At(0, 1))).ok());
}

// prepareStoreForGarbageCollection: from midnight 36 days back to `now`,
// a snapshot every 10 minutes, a full then two deltas, all named 0-1001.
std::vector<StoredSnapshot> EtcdBackupRestoresGarbageCollectionStore(int64_t now) {
  std::vector<StoredSnapshot> store;
  int count = 0;
  for (int64_t time = At(-36, 0); time <= now; time += 10 * kMinute) {
    store.push_back(Stored(count == 0 ? "Full" : "Incr", 0, 1001, time));
    count = (count + 1) % 3;
  }
  return store;
}

// prepareExpectedSnapshotsList: the newest full of each of 4 weeks and of the
// 7 days before today (all at 23:30), of each hour of today (hh:30), every
// full of the current hour, and the deltas after the newest full.
std::vector<std::string> EtcdBackupRestoresExponentialExpectation(int64_t now) {
  std::vector<std::string> expected;
  for (int64_t day : {-29, -22, -15, -8, -7, -6, -5, -4, -3, -2, -1}) {
    expected.push_back(Stored("Full", 0, 1001, At(day, 23, 30)).name);
  }
  const int64_t hour_start = now - (now - kToday) % kHour;
  for (int64_t time = At(0, 0, 30); time < hour_start; time += kHour) {
    expected.push_back(Stored("Full", 0, 1001, time).name);
  }
  int64_t time = hour_start;
  for (; time <= now; time += 30 * kMinute) expected.push_back(Stored("Full", 0, 1001, time).name);
  for (time = time - 30 * kMinute + 10 * kMinute; time <= now; time += 10 * kMinute) {
    expected.push_back(Stored("Incr", 0, 1001, time).name);
  }
  return expected;
}

TEST(BackupRetention, ExponentialKeepsWhatEtcdBackupRestoresOwnTestExpects) {
  // (now, how many snapshots its expectation lists, counted by hand)
  const std::vector<std::pair<int64_t, size_t>> cases = {
      {At(0, 10, 25), 4 + 7 + 10 + 1 + 2},  // hours 0-9 at hh:30; 10:00; deltas 10:10, 10:20
      {At(0, 0, 5), 4 + 7 + 0 + 1 + 0},     // 00:00 only
      {At(0, 23, 55), 4 + 7 + 23 + 2 + 2},  // 23:00, 23:30; deltas 23:40, 23:50
      {At(0, 12, 0), 4 + 7 + 12 + 1 + 0},   // the newest full at now itself
  };
  for (const auto& [now, count] : cases) {
    SCOPED_TRACE(now);
    const std::vector<StoredSnapshot> store = EtcdBackupRestoresGarbageCollectionStore(now);
    const std::vector<std::string> kept = Names(Kept(store, Exponential(), Time(now, 400'000'000)));
    EXPECT_EQ(kept, EtcdBackupRestoresExponentialExpectation(now));
    EXPECT_EQ(kept.size(), count);
  }
}

TEST(BackupRetention, LimitBasedKeepsWhatEtcdBackupRestoresOwnTestExpects) {
  const int64_t now = At(0, 10, 25);
  const std::vector<StoredSnapshot> store = EtcdBackupRestoresGarbageCollectionStore(now);
  // maxBackups = 2 as in its test: at most 2 fulls, then only deltas.
  EXPECT_EQ(Names(Kept(store, LimitBased(2), Time(now))),
            (std::vector<std::string>{Full(1001, At(0, 9, 30)).name, Full(1001, At(0, 10, 0)).name,
                                      Incr(0, 1001, At(0, 10, 10)).name, Incr(0, 1001, At(0, 10, 20)).name}));
  const std::vector<StoredSnapshot> kept = Kept(store, LimitBased(kDefaultMaxBackups), Time(now));
  ASSERT_EQ(kept.size(), 9u);
  EXPECT_EQ(kept.front().name, Full(1001, At(0, 7, 0)).name);
  EXPECT_EQ(std::count_if(kept.begin(), kept.end(), [](const StoredSnapshot& s) { return s.kind == "Full"; }),
            7);
}

TEST(BackupRetention, TheListingsOrderIsTheStoresNotTheCallers) {
  const int64_t now = At(0, 10, 25);
  std::vector<StoredSnapshot> store = EtcdBackupRestoresGarbageCollectionStore(now);
  const std::vector<std::string> sorted = Names(Collect(store, Exponential(), Time(now)));
  std::reverse(store.begin(), store.end());
  EXPECT_EQ(Names(Collect(store, Exponential(), Time(now))), sorted);
}

// GarbageCollectDeltaSnapshots' tests: six deltas 60 to 10 minutes old, here
// between two fulls so that they are not the latest stream.
TEST(BackupRetention, DeltasOfOlderStreamsGoOnceOlderThanTheRetentionPeriod) {
  const int64_t now = At(0, 10, 0);
  std::vector<StoredSnapshot> listing = {Full(100, now - 70 * kMinute)};
  for (int64_t i = 0; i < 6; ++i)
    listing.push_back(Incr(101 + 10 * i, 110 + 10 * i, now - (60 - 10 * i) * kMinute));
  listing.push_back(Full(160, now - 5 * kMinute));
  listing.push_back(Incr(161, 170, now - 1 * kMinute));  // the latest stream's: never
  auto deleted = [&](int64_t retention_minutes, int64_t now_nanoseconds = 0) {
    return Collect(listing, LimitBased(2, std::chrono::minutes(retention_minutes)),
                   Time(now, now_nanoseconds))
        .size();
  };
  EXPECT_EQ(deleted(0), 6u);  // "should delete all delta snapshots" (the default period, 0)
  EXPECT_EQ(deleted(600), 0u);
  EXPECT_EQ(deleted(35), 3u);  // "should delete only the delta snapshots older than the retention period"
  // Before(now - retention), strictly: the delta made 30 minutes ago exactly
  // stays, until now passes by a fraction of a second.
  EXPECT_EQ(deleted(30), 3u);
  EXPECT_EQ(deleted(30, 1), 4u);
  EXPECT_EQ(deleted(10), 5u);
}

TEST(BackupRetention, HourWindowsAreClockHoursToTheSecond) {
  const Clock::time_point now = Time(At(0, 10, 25));
  // 08:00:00 and 08:59:59 share an hour: the older goes. 08:59:59 and
  // 09:00:00 do not: both stay, as does the newest of 09:00 before 10:00.
  const std::vector<StoredSnapshot> listing = {Full(100, At(0, 8, 0, 0)), Full(200, At(0, 8, 59, 59)),
                                               Full(300, At(0, 9, 0, 0)), Full(400, At(0, 10, 0))};
  EXPECT_EQ(Names(Collect(listing, Exponential(), now)), (std::vector<std::string>{listing[0].name}));
}

TEST(BackupRetention, EveryFullOfTheCurrentHourStaysButNotOfThatHourYesterday) {
  const Clock::time_point now = Time(At(0, 10, 25));
  const std::vector<StoredSnapshot> listing = {Full(100, At(-1, 10, 5)), Full(200, At(-1, 10, 20)),
                                               Full(300, At(0, 10, 0)), Full(400, At(0, 10, 5)),
                                               Full(500, At(0, 10, 10))};
  EXPECT_EQ(Names(Collect(listing, Exponential(), now)), (std::vector<std::string>{listing[0].name}));
}

TEST(BackupRetention, DayWindowsEndAtMidnightUtc) {
  const Clock::time_point now = Time(At(0, 10, 25));
  const std::vector<StoredSnapshot> listing = {
      Full(100, At(-1, 23, 0)),       // yesterday, with a newer one the same day: goes
      Full(200, At(-1, 23, 59, 59)),  // yesterday's newest
      Full(300, At(0, 0, 0, 0)),      // today, hour 0, with a newer one in the hour: goes
      Full(400, At(0, 0, 30)),        // hour 0's newest
      Full(500, At(0, 5, 0)),         // the newest
  };
  EXPECT_EQ(Names(Collect(listing, Exponential(), now)),
            (std::vector<std::string>{listing[0].name, listing[2].name}));
}

TEST(BackupRetention, WeekWindowsEndAtYesterdaysEndAndTheOldestGoAfter35Days) {
  const Clock::time_point now = Time(At(0, 10, 25));
  const std::vector<StoredSnapshot> listing = {
      Full(100, At(-36, 23, 59, 59)),  // 35 days before yesterday's end: goes
      Full(200, At(-35, 0, 0, 0)),     // within 35 days of yesterday's end (not of today's): stays
      Full(300, At(-22, 23, 59, 59)),  // 21 days before yesterday's end: week 3
      Full(400, At(-21, 23, 59, 59)),  // week 2, as the next: goes
      Full(500, At(-15, 23, 59, 59)),  // week 2's newest (from today's end, in the next's week: it would go)
      Full(600, At(-14, 0, 0, 0)),     // week 1
      Full(700, At(-3, 12, 0)),        // a day of the last week
      Full(800, At(0, 10, 0)),         // the newest
  };
  EXPECT_EQ(Names(Collect(listing, Exponential(), now)),
            (std::vector<std::string>{listing[0].name, listing[3].name}));
}

TEST(BackupRetention, KeepsFinalSnapshotsEtcdBackupRestoreWouldDelete) {
  const int64_t now = At(0, 10, 0);
  const std::vector<StoredSnapshot> listing = {Full(100, At(-50, 0), true), Incr(101, 110, At(-50, 1)),
                                               Full(200, At(-40, 0)),       Incr(201, 210, At(-40, 1)),
                                               Full(300, At(-1, 0)),        Incr(301, 310, At(-1, 1))};
  // etcd-backup-restore would delete the .final full too, under either policy.
  EXPECT_EQ(Names(Collect(listing, LimitBased(1), Time(now))),
            (std::vector<std::string>{listing[1].name, listing[2].name, listing[3].name}));
  EXPECT_EQ(Names(Collect(listing, Exponential(), Time(now))),
            (std::vector<std::string>{listing[1].name, listing[2].name, listing[3].name}));
}

TEST(BackupRetention, OnlyTheNewestFinalSnapshotIsKeptWhateverThePolicy) {
  const int64_t now = At(0, 10, 0);
  // `?final=true` asked for again and again: the older finals go as any full would.
  const std::vector<StoredSnapshot> listing = {Full(100, At(-3, 0), true), Full(200, At(-2, 0), true),
                                               Full(300, At(-1, 0), true), Full(400, At(0, 9, 0))};
  EXPECT_EQ(Names(Collect(listing, LimitBased(1), Time(now))),
            (std::vector<std::string>{listing[0].name, listing[1].name}));
}

TEST(BackupRetention, LimitBasedWithAScheduleCountsPeriodsSoOnDemandFullsCannotPushOutOlderBackups) {
  const int64_t now = At(0, 10, 30);
  // Hourly fulls at 07:00, 08:00, 09:00 and 10:00, then eight asked for on
  // demand within a minute of 10:20.
  std::vector<StoredSnapshot> listing = {Full(100, At(0, 7, 0)), Full(200, At(0, 8, 0)),
                                         Full(300, At(0, 9, 0)), Full(400, At(0, 10, 0))};
  for (int64_t i = 0; i < 8; ++i) listing.push_back(Full(500 + i, At(0, 10, 20) + 5 * i));
  RetentionOptions options = LimitBased(3);
  // Counting files, as etcd-backup-restore does: every hourly backup goes.
  std::vector<std::string> files;
  for (size_t i = 0; i < listing.size() - 3; ++i) files.push_back(listing[i].name);
  EXPECT_EQ(Names(Collect(listing, options, Time(now))), files);
  // Counting the schedule's periods: 08:00 and 09:00 stay with the newest of
  // 10:xx; 07:00 is beyond the three, and the older fulls of 10:xx are replaced.
  options.schedule = "0 */1 * * *";
  std::vector<std::string> replaced = {listing[0].name};
  for (size_t i = 3; i < listing.size() - 1; ++i) replaced.push_back(listing[i].name);
  EXPECT_EQ(Names(Collect(listing, options, Time(now))), replaced);
}

// Issue 41, hazard 8: the compaction Job's full snapshot was verified, never
// taken from the live cluster. While it is the newest full, the full before
// it and the deltas it replaced stay; once a member's own full is newer, they
// go as any older stream does. Before, the first collection after the
// compaction deleted the older full and the deltas.
TEST(BackupRetention, WhatACompactionReplacedStaysUntilAMembersOwnFullIsNewer) {
  const int64_t now = At(0, 10, 0);
  std::vector<StoredSnapshot> listing = {Full(100, now - 50 * kMinute), Incr(101, 150, now - 40 * kMinute),
                                         Incr(151, 200, now - 30 * kMinute)};
  const StoredSnapshot compacted = Full(200, now - 20 * kMinute);
  listing.push_back(compacted);
  listing.push_back(Incr(201, 210, now - 10 * kMinute));
  RetentionOptions options = LimitBased(1);
  EXPECT_EQ(Names(Collect(listing, options, Time(now))),
            (std::vector<std::string>{listing[0].name, listing[1].name, listing[2].name}))
      << "not named as the compaction's, it is a full like any other";
  options.compacted_full = compacted.name;
  EXPECT_EQ(Names(Collect(listing, options, Time(now))), std::vector<std::string>{});

  const StoredSnapshot own = Full(220, now - 5 * kMinute);
  listing.push_back(own);
  EXPECT_EQ(Names(Kept(listing, options, Time(now))), std::vector<std::string>{own.name})
      << "a member's own full is newer: the compaction and what it replaced go as older streams";
}

TEST(BackupRetention, WhatItCannotPlaceStaysAndChangesNothing) {
  const int64_t now = At(0, 10, 0);
  const std::vector<StoredSnapshot> placeable = {Full(100, At(-3, 0)), Incr(101, 110, At(-3, 1)),
                                                 Full(200, At(-2, 0)), Incr(201, 210, At(-2, 1)),
                                                 Full(300, At(-1, 0)), Incr(301, 310, At(-1, 1))};
  std::vector<StoredSnapshot> listing = placeable;
  StoredSnapshot chunk = Full(205, At(-2, 5));
  chunk.path += "/0000000001";  // part 1 of a multipart upload
  StoredSnapshot unknown_kind = Stored("Snap", 0, 250, At(-2, 6));
  StoredSnapshot backwards = Stored("Full", 400, 260, At(-2, 7));
  StoredSnapshot newest_looking = Stored("Incr", 9000, 8000, At(0, 1));
  for (const StoredSnapshot& odd : {chunk, unknown_kind, backwards, newest_looking}) listing.push_back(odd);
  const std::vector<std::string> expected = {placeable[0].name, placeable[1].name, placeable[2].name,
                                             placeable[3].name};
  EXPECT_EQ(Names(Collect(placeable, LimitBased(1), Time(now))), expected);
  EXPECT_EQ(Names(Collect(listing, LimitBased(1), Time(now))), expected);
}

// getFullSnapshotIndexList lists position 0 whatever it is, so etcd-backup-
// restore deletes a leading delta by the rule for fulls, within the retention
// period too; ruleplane judges it as a delta.
TEST(BackupRetention, ALeadingDeltaIsJudgedAsADelta) {
  const int64_t now = At(0, 10, 0);
  const std::vector<StoredSnapshot> listing = {Incr(1, 50, now - 10 * kMinute), Full(100, now - 9 * kMinute),
                                               Full(200, now - 5 * kMinute)};
  EXPECT_EQ(Names(Collect(listing, LimitBased(1, std::chrono::hours(1)), Time(now))),
            (std::vector<std::string>{listing[1].name}));
  EXPECT_EQ(Names(Collect(listing, LimitBased(1), Time(now))),
            (std::vector<std::string>{listing[0].name, listing[1].name}));
}

TEST(BackupRetention, WithOneFullOnlyDeltasBeforeItCanGo) {
  const Clock::time_point now = Time(At(0, 10, 0));
  EXPECT_TRUE(Collect({}, LimitBased(1), now).empty());
  const std::vector<StoredSnapshot> deltas = {Incr(1, 10, At(-90, 0)), Incr(11, 20, At(-80, 0))};
  EXPECT_TRUE(Collect(deltas, LimitBased(1), now).empty());
  EXPECT_TRUE(Collect(deltas, Exponential(), now).empty());
  const std::vector<StoredSnapshot> one = {Incr(1, 10, At(-90, 0)), Full(10, At(-80, 0)),
                                           Incr(11, 20, At(-70, 0))};
  EXPECT_EQ(Names(Collect(one, LimitBased(1), now)), (std::vector<std::string>{one[0].name}));
  EXPECT_EQ(Names(Collect(one, Exponential(), now)), (std::vector<std::string>{one[0].name}));
}

// --- Invariants over generated listings -------------------------------------

struct GeneratedCase {
  std::vector<StoredSnapshot> listing;
  RetentionOptions options;
  int64_t now_seconds = 0;
  int64_t now_nanoseconds = 0;
};

GeneratedCase Generate(std::mt19937_64& random) {
  auto uniform = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(random); };
  GeneratedCase generated;
  generated.now_seconds = kToday + uniform(-400, 400) * kDay + uniform(0, kDay - 1);
  generated.now_nanoseconds = chance(0.5) ? uniform(0, 999'999'999) : 0;
  // Gaps of seconds, of minutes or of hours; mostly fulls, or mostly deltas.
  const std::vector<std::pair<int64_t, int64_t>> gaps = {{1, 120}, {60, 3 * kHour}, {kHour, 30 * kHour}};
  const auto [gap_low, gap_high] = gaps[static_cast<size_t>(uniform(0, 2))];
  const double full_share = std::vector<double>{0.1, 0.35, 0.7, 1.0}[static_cast<size_t>(uniform(0, 3))];
  // Times from the newest back (often right up to now), then revisions forward.
  std::vector<int64_t> times;
  int64_t time = generated.now_seconds - (chance(0.5) ? uniform(0, 30 * kMinute) : uniform(0, 10 * kDay));
  for (int64_t count = uniform(0, 250); count > 0; --count) {
    times.push_back(time);
    time -= chance(0.05) ? 0 : uniform(gap_low, gap_high);
  }
  std::reverse(times.begin(), times.end());
  int64_t revision = uniform(1, 1000);
  std::set<std::string> names;
  for (int64_t created : times) {
    StoredSnapshot snapshot;
    if (chance(full_share)) {
      revision += uniform(0, 5);
      snapshot = Full(revision, created, chance(0.05));
    } else {
      const int64_t start = revision + 1;
      revision += uniform(1, 1000);
      snapshot = Incr(start, revision, created);
    }
    if (chance(0.03)) {
      // Something it cannot place, anywhere among the revisions.
      const int64_t last = uniform(0, revision + 1000);
      const int64_t kind = uniform(0, 2);
      snapshot = kind == 0   ? Stored("Snap", 0, last, created)
                 : kind == 1 ? Stored("Full", last + 1, last, created)
                             : Full(last, created);
      if (kind == 2) snapshot.path += "/0000000002";
    }
    if (names.insert(snapshot.path).second) generated.listing.push_back(snapshot);
  }
  std::stable_sort(generated.listing.begin(), generated.listing.end(),
                   [](const StoredSnapshot& a, const StoredSnapshot& b) {
                     if (a.last_revision != b.last_revision) return a.last_revision < b.last_revision;
                     return a.created_on < b.created_on;
                   });
  generated.options.policy =
      chance(0.5) ? GarbageCollectionPolicy::kExponential : GarbageCollectionPolicy::kLimitBased;
  generated.options.max_backups = uniform(1, 10);
  const std::vector<int64_t> retentions = {0, 10 * kMinute, kHour, kDay, uniform(0, 10 * kDay)};
  generated.options.delta_retention = std::chrono::seconds(retentions[static_cast<size_t>(uniform(0, 4))]);
  if (generated.options.policy == GarbageCollectionPolicy::kLimitBased && chance(0.5))
    generated.options.schedule = "0 */1 * * *";
  return generated;
}

bool Placeable(const StoredSnapshot& snapshot) {
  return (snapshot.kind == "Full" || snapshot.kind == "Incr") &&
         snapshot.start_revision <= snapshot.last_revision && snapshot.path == "v2/" + snapshot.name;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

struct Tally {
  int64_t listings = 0;
  int64_t snapshots = 0;
  int64_t deleted = 0;
  // Exponential: fulls of the current hour, windows of an hour, a day, a
  // week whose newest full was checked, fulls older than 35 days.
  int64_t current_hour = 0;
  int64_t hours = 0;
  int64_t days = 0;
  int64_t weeks = 0;
  int64_t older = 0;
  int64_t limit_based = 0;
  int64_t limit_based_periods = 0;
  int64_t deltas_judged = 0;
};

// Checks one generated case; returns false at the first broken invariant.
bool CheckInvariants(const GeneratedCase& generated, Tally& tally) {
  const std::vector<StoredSnapshot>& listing = generated.listing;
  auto collected =
      SnapshotsToCollect(listing, generated.options, Time(generated.now_seconds, generated.now_nanoseconds));
  if (!collected.ok()) {
    ADD_FAILURE() << collected.error().message;
    return false;
  }
  tally.listings++;
  tally.snapshots += static_cast<int64_t>(listing.size());
  tally.deleted += static_cast<int64_t>(collected->size());

  // (e) Everything deleted came from the input, once.
  std::map<std::string, const StoredSnapshot*> by_path;
  for (const StoredSnapshot& snapshot : listing) by_path[snapshot.path] = &snapshot;
  std::set<std::string> deleted;
  for (const StoredSnapshot& snapshot : *collected) {
    auto found = by_path.find(snapshot.path);
    EXPECT_TRUE(found != by_path.end()) << snapshot.path << " is not in the listing";
    if (found == by_path.end()) return false;
    const StoredSnapshot& input = *found->second;
    EXPECT_TRUE(input.name == snapshot.name && input.kind == snapshot.kind &&
                input.start_revision == snapshot.start_revision &&
                input.last_revision == snapshot.last_revision && input.created_on == snapshot.created_on &&
                input.is_final == snapshot.is_final)
        << snapshot.path << " differs from the listing's";
    EXPECT_TRUE(deleted.insert(snapshot.path).second) << snapshot.path << " deleted twice";
  }

  std::vector<const StoredSnapshot*> ordered;  // placeable, in the listing's order
  std::vector<const StoredSnapshot*> fulls;
  for (const StoredSnapshot& snapshot : listing) {
    if (!Placeable(snapshot)) {
      EXPECT_FALSE(deleted.contains(snapshot.path)) << snapshot.path << " cannot be placed, yet deleted";
      continue;
    }
    ordered.push_back(&snapshot);
    if (snapshot.kind == "Full") fulls.push_back(&snapshot);
  }
  const StoredSnapshot* newest_final = nullptr;
  for (const StoredSnapshot* full : fulls) {
    if (full->is_final) newest_final = full;
  }
  if (newest_final != nullptr) {
    EXPECT_FALSE(deleted.contains(newest_final->path))
        << newest_final->path << " is the newest final, yet deleted";
  }
  if (fulls.empty()) {
    EXPECT_TRUE(deleted.empty()) << "no full snapshot, yet " << deleted.size() << " deleted";
    return !::testing::Test::HasFailure();
  }
  const StoredSnapshot& newest = *fulls.back();
  // (a) The newest full stays.
  EXPECT_FALSE(deleted.contains(newest.path)) << "the newest full " << newest.path << " was deleted";
  // (b) Every delta continuing it stays, and all else after it.
  bool after_newest = false;
  const int64_t now_ns = generated.now_seconds * 1'000'000'000 + generated.now_nanoseconds;
  const int64_t cutoff_ns = now_ns - generated.options.delta_retention.count() * 1'000'000'000;
  for (const StoredSnapshot* snapshot : ordered) {
    if (snapshot->kind == "Incr" && snapshot->start_revision > newest.last_revision) {
      EXPECT_FALSE(deleted.contains(snapshot->path)) << snapshot->path << " continues " << newest.path;
    }
    if (after_newest) {
      EXPECT_FALSE(deleted.contains(snapshot->path)) << snapshot->path << " is after " << newest.path;
    } else if (snapshot->kind == "Incr") {
      // The delta rule, exactly: deleted when made before now - retention.
      tally.deltas_judged++;
      EXPECT_EQ(deleted.contains(snapshot->path), snapshot->created_on * 1'000'000'000 < cutoff_ns)
          << snapshot->path << " against the retention period";
    }
    if (snapshot == &newest) after_newest = true;
  }

  if (generated.options.policy == GarbageCollectionPolicy::kLimitBased &&
      generated.options.schedule.empty()) {
    // (c) The newest max_backups fulls stay, every older one goes unless the newest final.
    tally.limit_based++;
    const size_t kept = static_cast<size_t>(
        std::min<int64_t>(generated.options.max_backups, static_cast<int64_t>(fulls.size())));
    for (size_t index = 0; index < fulls.size(); ++index) {
      const bool newest_kept = index >= fulls.size() - kept;
      EXPECT_EQ(deleted.contains(fulls[index]->path), !newest_kept && fulls[index] != newest_final)
          << fulls[index]->path << " with max " << generated.options.max_backups;
    }
  } else if (generated.options.policy == GarbageCollectionPolicy::kLimitBased) {
    // (c') Hourly schedule: the newest full of each of the newest max_backups
    // clock hours that hold fulls stays, every other one goes unless the newest final.
    tally.limit_based_periods++;
    std::map<int64_t, const StoredSnapshot*> newest_of_hour;
    for (const StoredSnapshot* full : fulls) newest_of_hour[FloorDiv(full->created_on, kHour)] = full;
    std::set<const StoredSnapshot*> stays;
    int64_t hours_left = generated.options.max_backups;
    for (auto it = newest_of_hour.rbegin(); it != newest_of_hour.rend() && hours_left > 0; ++it, --hours_left)
      stays.insert(it->second);
    for (const StoredSnapshot* full : fulls) {
      EXPECT_EQ(deleted.contains(full->path), !stays.contains(full) && full != newest_final)
          << full->path << " with max " << generated.options.max_backups << " hourly";
    }
  } else {
    // (d) As RunGarbageCollector walks them (the generated times grow with
    // the revisions): every full of the current hour of today stays; of each
    // other hour of today, of each of the 7 days before, and of each 7-day
    // window ending at yesterday's end, the newest full stays (a window
    // reaching 35 days back only when its newest lies within 34) and, apart
    // from the newest full and the finals, no other; older ones go.
    const int64_t today = FloorDiv(generated.now_seconds, kDay) * kDay;
    const int64_t yesterday_end = today - 1;
    const int64_t current_hour = (generated.now_seconds - today) / kHour;
    std::map<std::pair<char, int64_t>, int64_t> kept_in_window;
    std::map<std::pair<char, int64_t>, const StoredSnapshot*> newest_in_window;
    for (const StoredSnapshot* full : fulls) {
      const int64_t created = full->created_on;
      std::pair<char, int64_t> window;
      if (created >= today) {
        window = {(created - today) / kHour == current_hour ? 'c' : 'h', (created - today) / kHour};
      } else if (created >= today - 7 * kDay) {
        window = {'d', FloorDiv(created, kDay)};
      } else if (created >= today - 35 * kDay) {
        window = {'w', (yesterday_end - created) / (7 * kDay)};
      } else {
        window = {'o', 0};
      }
      const bool kept = !deleted.contains(full->path);
      if (window.first == 'c') {
        tally.current_hour++;
        EXPECT_TRUE(kept) << full->path << " is of the current hour, yet deleted";
      } else if (window.first == 'o') {
        tally.older++;
        EXPECT_TRUE(!kept || full == &newest || full == newest_final)
            << full->path << " is older than 35 days, yet kept";
      } else {
        newest_in_window[window] = full;
        if (kept && full != &newest && full != newest_final) kept_in_window[window]++;
      }
    }
    for (const auto& [window, count] : kept_in_window) {
      EXPECT_LE(count, 1) << count << " fulls kept in window " << window.first << window.second;
    }
    for (const auto& [window, full] : newest_in_window) {
      if (window.first == 'w' && full->created_on < today - 34 * kDay) continue;
      (window.first == 'h' ? tally.hours : window.first == 'd' ? tally.days : tally.weeks)++;
      EXPECT_FALSE(deleted.contains(full->path))
          << full->path << " is the newest of window " << window.first << window.second << ", yet deleted";
    }
  }
  return !::testing::Test::HasFailure();
}

TEST(BackupRetention, InvariantsHoldOverGeneratedListings) {
  const auto started = std::chrono::steady_clock::now();
  Tally tally;
  for (uint64_t seed : {1u, 2u, 3u, 20260724u}) {
    std::mt19937_64 random(seed);
    for (int i = 0; i < 1000; ++i) {
      const GeneratedCase generated = Generate(random);
      if (!CheckInvariants(generated, tally)) {
        FAIL() << "seed " << seed << ", listing " << i << " of " << generated.listing.size() << " snapshots, "
               << GarbageCollectionPolicyName(generated.options.policy) << " max "
               << generated.options.max_backups << ", retention " << generated.options.delta_retention.count()
               << " s, now " << generated.now_seconds;
      }
    }
  }
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
  // Not vacuous: every rule had work.
  EXPECT_EQ(tally.listings, 4000);
  EXPECT_GT(tally.deleted, tally.snapshots / 10);
  EXPECT_GT(tally.current_hour, 1500);
  EXPECT_GT(tally.hours, 1000);
  EXPECT_GT(tally.days, 2000);
  EXPECT_GT(tally.weeks, 1300);
  EXPECT_GT(tally.older, 10000);
  EXPECT_GT(tally.limit_based, 700);
  EXPECT_GT(tally.limit_based_periods, 700);
  EXPECT_GT(tally.deltas_judged, 100000);
  std::printf(
      "%lld listings, %lld snapshots, %lld deleted, %lld deltas judged; Exponential: %lld fulls of the "
      "current "
      "hour, newest of %lld hours, %lld days, %lld weeks, %lld fulls older than 35 days; %lld ms\n",
      static_cast<long long>(tally.listings), static_cast<long long>(tally.snapshots),
      static_cast<long long>(tally.deleted), static_cast<long long>(tally.deltas_judged),
      static_cast<long long>(tally.current_hour), static_cast<long long>(tally.hours),
      static_cast<long long>(tally.days), static_cast<long long>(tally.weeks),
      static_cast<long long>(tally.older), static_cast<long long>(elapsed.count()));
}

}  // namespace
}  // namespace ruleplane
