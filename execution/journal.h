// Journal: what ruleplane observed, decided and did, in SQLite (WAL mode,
// synchronous=FULL), so that a run killed half-way resumes from the truth:
//
//   evaluations  the observed snapshot a plan was made from: its digest, the
//                snapshot itself (zlib-compressed canonical JSON), the rule
//                sets' ids and digests
//   plans        one per recorded execution: command, subject, dry run, the
//                plan's digest, state (running / paused / succeeded / failed /
//                refused / dry-run), error, times
//   steps        one per plan step: state (pending / running / succeeded /
//                failed / skipped / refused), attempts, times, the requests
//                sent (JSON), the error or why skipped
//
// The executor writes the intent (StepStarted: running) before a step acts
// and the outcome (StepFinished) after. A plan whose state is still
// `running` was interrupted; UnfinishedSteps returns its steps (or a failed
// plan's) for the next run's report; what is done is read from the real
// state, never from the journal. Several processes may open one journal
// (SQLite locking, a busy timeout).
//
// Bounded: each BeginPlan removes the plans beyond `max_plans` and those
// older than `max_age` (with their steps and evaluations), except each
// subject's latest plan.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "adapters/request.h"
#include "engine/common/error.h"
#include "engine/common/snapshot.h"
#include "engine/plan/plan.h"

namespace ruleplane {

enum class StepState { kPending, kRunning, kSucceeded, kFailed, kSkipped, kRefused };
std::string_view StepStateName(StepState state);  // "pending", "running", ...

struct StepRecord {
  int64_t plan_id = 0;
  std::string step_id;
  std::string action;
  std::string target;
  std::string idempotency_key;
  bool disruptive = false;
  StepState state = StepState::kPending;
  int attempts = 0;
  std::string started_at;   // RFC 3339 with milliseconds, "" when never started
  std::string finished_at;  // "" when not finished
  std::vector<Request> requests;
  std::string message;
};

struct PlanRecord {
  int64_t id = 0;
  int64_t evaluation_id = 0;
  std::string command;
  std::string subject;
  bool dry_run = false;
  std::string digest;  // PlanDigest
  std::string state;   // "running" (in progress, or interrupted), "succeeded", "failed", "refused", "dry-run"
  std::string error;
  std::string started_at;
  std::string finished_at;
  std::vector<std::string> matched_rules;  // "<rule set>/<rule>"
  std::vector<StepRecord> steps;           // in plan order
};

struct EvaluationRecord {
  int64_t id = 0;
  std::string recorded_at;
  std::string snapshot_digest;
  Snapshot snapshot;                                           // decompressed and parsed again
  std::vector<std::pair<std::string, std::string>> rule_sets;  // id ("name@version"), digest
};

struct JournalLimits {
  int64_t max_plans = 2000;
  std::chrono::hours max_age{24 * 7};
  std::chrono::milliseconds busy_timeout{10000};  // waiting for another process's write lock
};

class Journal {
 public:
  // Creates the file and its schema when missing (and upgrades a journal of
  // an earlier schema). kIo naming the path.
  static Result<std::unique_ptr<Journal>> Open(const std::string& path, JournalLimits limits = {});
  // For reading only (history, diff): opened read-only, nothing created or
  // changed; a file that is not a ruleplane journal is kInvalidArgument.
  static Result<std::unique_ptr<Journal>> OpenForReading(const std::string& path);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::string& path() const { return path_; }

  // In one transaction: the evaluation (`snapshot`, the rule sets' ids and
  // digests), the plan and all its steps (pending), state "running"; then
  // the records beyond the limits go.
  Result<int64_t> BeginPlan(const Snapshot& snapshot,
                            const std::vector<std::pair<std::string, std::string>>& rule_set_digests,
                            const Plan& plan, const std::string& command, const std::string& subject,
                            bool dry_run);
  // The intent: the step is about to act (attempt n); committed before it returns.
  Status StepStarted(int64_t plan_id, const PlanStep& step, int attempt);
  // The outcome.
  Status StepFinished(int64_t plan_id, const std::string& step_id, StepState state,
                      const std::vector<Request>& requests, const std::string& message);
  Status FinishPlan(int64_t plan_id, const std::string& state, const std::string& error);

  // The steps of the subject's latest plan that is not a dry run, when that
  // plan is still `running` (it was interrupted) or `failed`: the run that
  // the next one resumes. Empty otherwise.
  Result<std::vector<StepRecord>> UnfinishedSteps(const std::string& subject);

  // The subject's latest plan (dry runs or not), without its steps.
  Result<std::optional<PlanRecord>> LatestPlan(const std::string& subject, bool dry_run);

  // The latest plans first, with their steps; limit 0 = all.
  Result<std::vector<PlanRecord>> Plans(int limit);
  // The latest evaluations first; limit 0 = all.
  Result<std::vector<EvaluationRecord>> Evaluations(int limit);

 private:
  Journal(std::string path, JournalLimits limits);
  Status Prune();

  std::string path_;
  JournalLimits limits_;
  std::string plan_columns_;  // what Plans and LatestPlan select (schema 1 had no plan_digest)
  void* db_ = nullptr;        // sqlite3*
};

}  // namespace ruleplane
