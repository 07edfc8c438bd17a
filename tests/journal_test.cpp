// The journal's bounds and its schema: records beyond the count or older
// than the age go (each subject's latest plan stays, with its evaluation), a
// journal of the previous schema opens and keeps its plans, and a write lock
// held by another process past the busy timeout is an error that names it,
// with nothing half recorded.
#include "execution/journal.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <thread>

#include "run_ruleplane.h"

namespace ruleplane {
namespace {

Snapshot Observed(int i) {
  auto snapshot = ParseSnapshot(R"({"apiVersion": "ruleplane.dev/v1", "kind": "EtcdMemberInitSnapshot",
      "observedAt": "2024-05-01T10:00:00Z", "i": )" +
                                std::to_string(i) + "}");
  EXPECT_TRUE(snapshot.ok());
  return *snapshot;
}

Plan OneStep(const std::string& target) {
  Plan plan;
  PlanStep step;
  step.id = "steps@1.0.0/all/0";
  step.action = "Prepare";
  step.target = target;
  step.params = Value::MakeMap({});
  plan.steps.push_back(step);
  return plan;
}

std::string FreshPath(const std::string& name) {
  const std::string path = testing_support::TempPath(name);
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  return path;
}

int64_t Count(const std::string& path, const std::string& table) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* statement = nullptr;
  sqlite3_prepare_v2(db, ("SELECT COUNT(*) FROM " + table).c_str(), -1, &statement, nullptr);
  const int64_t count = sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : -1;
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return count;
}

TEST(JournalTest, RecordsBeyondTheCountGoButEachSubjectsLatestPlanStays) {
  const std::string path = FreshPath("journal-count.db");
  auto journal = Journal::Open(path, JournalLimits{.max_plans = 5});
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  auto kept = (*journal)->BeginPlan(Observed(0), {}, OneStep("m1"), "member-init", "m1", false);
  ASSERT_TRUE(kept.ok());
  for (int i = 1; i <= 20; ++i) {
    auto id = (*journal)->BeginPlan(Observed(i), {}, OneStep("m0"), "member-init", "m0", false);
    ASSERT_TRUE(id.ok()) << id.error().message;
    ASSERT_TRUE((*journal)->FinishPlan(*id, "succeeded", "").ok());
  }
  auto plans = (*journal)->Plans(0);
  ASSERT_TRUE(plans.ok());
  ASSERT_EQ(plans->size(), 6u) << "the 5 newest and m1's only plan";
  EXPECT_EQ(plans->back().id, *kept);
  EXPECT_EQ(plans->back().state, "running") << "an interrupted plan that a resume reads is kept";
  EXPECT_EQ(plans->front().digest, PlanDigest(OneStep("m0")));
  EXPECT_EQ(Count(path, "evaluations"), 6);
  EXPECT_EQ(Count(path, "steps"), 6);
}

TEST(JournalTest, RecordsOlderThanTheAgeGo) {
  const std::string path = FreshPath("journal-age.db");
  auto journal = Journal::Open(path, JournalLimits{.max_age = std::chrono::hours(0)});
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  for (int i = 0; i < 5; ++i) {
    // Records of an earlier millisecond than the last ones' prune (its cutoff is now - 0 h).
    if (i == 4) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE((*journal)->BeginPlan(Observed(i), {}, OneStep("m0"), "member-init", "m0", false).ok());
    ASSERT_TRUE((*journal)->BeginPlan(Observed(i), {}, OneStep("m0"), "member-init", "m0", true).ok());
  }
  auto plans = (*journal)->Plans(0);
  ASSERT_TRUE(plans.ok());
  ASSERT_EQ(plans->size(), 2u) << "only the latest plan and the latest dry run are younger than 0 h";
  EXPECT_TRUE(plans->at(0).dry_run);
  EXPECT_FALSE(plans->at(1).dry_run);
  EXPECT_EQ(Count(path, "evaluations"), 2);
}

TEST(JournalTest, AJournalOfThePreviousSchemaOpensWithItsPlans) {
  const std::string path = FreshPath("journal-v1.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const char* v1 = R"(
    CREATE TABLE evaluations (id INTEGER PRIMARY KEY, recorded_at TEXT NOT NULL, snapshot_kind TEXT NOT NULL,
      snapshot_digest TEXT NOT NULL, snapshot_zlib BLOB NOT NULL, snapshot_bytes INTEGER NOT NULL,
      rule_sets TEXT NOT NULL);
    CREATE TABLE plans (id INTEGER PRIMARY KEY, evaluation_id INTEGER NOT NULL REFERENCES evaluations(id),
      command TEXT NOT NULL, subject TEXT NOT NULL, dry_run INTEGER NOT NULL, state TEXT NOT NULL,
      error TEXT NOT NULL DEFAULT '', started_at TEXT NOT NULL, finished_at TEXT NOT NULL DEFAULT '',
      matched_rules TEXT NOT NULL);
    CREATE TABLE steps (plan_id INTEGER NOT NULL REFERENCES plans(id), position INTEGER NOT NULL,
      step_id TEXT NOT NULL, action TEXT NOT NULL, target TEXT NOT NULL, params TEXT NOT NULL,
      adapter TEXT NOT NULL, disruptive INTEGER NOT NULL, depends_on TEXT NOT NULL,
      idempotency_key TEXT NOT NULL, state TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
      started_at TEXT NOT NULL DEFAULT '', finished_at TEXT NOT NULL DEFAULT '',
      requests TEXT NOT NULL DEFAULT '[]', message TEXT NOT NULL DEFAULT '', PRIMARY KEY (plan_id, step_id));
    INSERT INTO evaluations VALUES (1, '2026-11-01T00:00:00.000Z', 'EtcdMemberInitSnapshot', 'sha256:0', x'', 0, '[]');
    INSERT INTO plans VALUES (1, 1, 'member-init', 'm0', 0, 'succeeded', '', '2099-01-01T00:00:00.000Z', '', '[]');
    PRAGMA user_version = 1;)";
  ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);

  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  auto latest = (*journal)->LatestPlan("m0", false);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->state, "succeeded");
  EXPECT_EQ((*latest)->digest, "");
  ASSERT_TRUE((*journal)->BeginPlan(Observed(1), {}, OneStep("m0"), "member-init", "m0", false).ok());
  auto plans = (*journal)->Plans(0);
  ASSERT_TRUE(plans.ok());
  EXPECT_EQ(plans->size(), 2u);
}

TEST(JournalTest, AWriteLockHeldElsewhereIsAnErrorAndNothingIsHalfRecorded) {
  const std::string path = FreshPath("journal-locked.db");
  auto journal = Journal::Open(path, JournalLimits{.busy_timeout = std::chrono::milliseconds(200)});
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto id = (*journal)->BeginPlan(Observed(0), {}, OneStep("m0"), "member-init", "m0", false);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, ErrorCode::kIo);
  EXPECT_NE(id.error().message.find("write lock"), std::string::npos) << id.error().message;
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_EQ(Count(path, "plans"), 0);
  EXPECT_EQ(Count(path, "evaluations"), 0);
  EXPECT_TRUE((*journal)->BeginPlan(Observed(0), {}, OneStep("m0"), "member-init", "m0", false).ok())
      << "once the lock is released";
}

// Issue 24, class 7: history and diff --journal created tables, switched WAL
// mode and set user_version on any SQLite file they were given, and failed on
// a read-only journal.
TEST(JournalTest, ReadingChangesNothingAndRefusesWhatIsNotAJournal) {
  const std::string other = FreshPath("not-a-journal.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE accounts (id INTEGER)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const auto before = std::filesystem::last_write_time(other);
  auto refused = Journal::OpenForReading(other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("is not a ruleplane journal"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(Count(other, "sqlite_master WHERE name = 'plans'"), 0) << "no table created";
  EXPECT_EQ(std::filesystem::last_write_time(other), before);

  const std::string path = FreshPath("journal-read-only.db");
  {
    auto journal = Journal::Open(path);
    ASSERT_TRUE(journal.ok());
    ASSERT_TRUE((*journal)->BeginPlan(Observed(0), {}, OneStep("m0"), "member-init", "m0", false).ok());
  }
  std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::group_read);
  auto reader = Journal::OpenForReading(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  auto plans = (*reader)->Plans(0);
  ASSERT_TRUE(plans.ok()) << plans.error().message;
  EXPECT_EQ(plans->size(), 1u);
  auto evaluations = (*reader)->Evaluations(0);
  ASSERT_TRUE(evaluations.ok()) << evaluations.error().message;
  EXPECT_EQ(evaluations->size(), 1u);
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

// Issue 24, class 2 and 9: a stored size was trusted for an allocation; a
// negative one ended in "internal error" without naming the journal.
TEST(JournalTest, AStoredSnapshotSizeIsCheckedBeforeItIsAllocated) {
  const std::string path = FreshPath("journal-size.db");
  {
    auto journal = Journal::Open(path);
    ASSERT_TRUE(journal.ok());
    ASSERT_TRUE((*journal)->BeginPlan(Observed(0), {}, OneStep("m0"), "member-init", "m0", false).ok());
  }
  for (const char* size : {"-1", "9223372036854775807", "68719476736"}) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, (std::string("UPDATE evaluations SET snapshot_bytes = ") + size).c_str(),
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    auto reader = Journal::OpenForReading(path);
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    auto evaluations = (*reader)->Evaluations(0);
    ASSERT_FALSE(evaluations.ok()) << size;
    EXPECT_NE(evaluations.error().message.find("the journal " + path + ": evaluation 1"), std::string::npos)
        << evaluations.error().message;
  }
}

}  // namespace
}  // namespace ruleplane
