// Executor: runs a Plan's steps through adapters, journaling the intent
// before each step acts and the outcome after.
//
//   AdapterSet adapters;  adapters.Add(&etcd);  adapters.Add(&local);
//   Executor executor(adapters, journal.get(), options);
//   ExecutionReport report = executor.Run(plan, snapshot, rule_sets, evaluation);
//
// Before anything runs, the whole plan is checked: every rule set planned
// without error, every invariant of its rule sets holds for it, and the gate
// allows every step (a disruptive step only with allow_disruptive or when the
// gate allows it). A plan that fails a check is refused and nothing is sent.
// A step that no adapter of this process executes is refused on its own: the
// steps that do not depend on it still run, and the plan then ends "failed",
// naming it.
//
// Steps run in dependsOn order, one at a time. A step is skipped only when
// the adapter finds it done in the real state (also a step that a gate holds
// back: nothing is sent for it), never because the journal says
// an earlier run succeeded: after several interrupted runs, a later step of
// one may have undone an earlier one's effect (issue 23, hazard 13). The
// journal says what was intended; the world says what holds. Retryable
// failures (engine/common/error.h, IsRetryable) are retried with bounded,
// jittered exponential backoff until the step's deadline, checking the real
// state before each new attempt; any other failure stops the plan, and later
// steps do not run.
//
// No step waits for the world in place: a step that only waits (the
// adapter's PollInterval, e.g. WaitForPodsDeleted) and is not done yet pauses
// the plan before it, with `requeue_after` saying when to observe again; the
// next plan, made from a fresh observation, goes on from there. `cancelled`
// stops a plan between steps and between retries.
//
// A dry run checks the real state until the first step that would act, and
// shows every later step as it would run.
//
// Failure points (platform/failure_point.h): `before:<Action>` once the step is
// journaled as running, `after:<Action>` once the adapter succeeded and before
// the journal records it.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actions/adapter.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/plan/plan.h"
#include "execution/journal.h"

namespace ruleplane {

class AdapterSet {
 public:
  void Add(Adapter* adapter) { adapters_[std::string(adapter->kind())] = adapter; }
  Adapter* Find(std::string_view kind) const;
  std::vector<std::string> kinds() const;

 private:
  std::map<std::string, Adapter*, std::less<>> adapters_;
};

struct RetryPolicy {
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{5000};
  std::chrono::milliseconds step_deadline{std::chrono::minutes(2)};
};

// What a gate says about one step, beyond the flags.
struct GateDecision {
  bool refuse = false;             // never run it (and so refuse the plan)
  bool allows_disruptive = false;  // run it although it is disruptive and allow_disruptive is off
  std::string reason;              // why, for the report and the journal
  bool wait = false;               // not now: the plan pauses before it (it runs when a later plan has it)
};

struct StepReport {
  std::string step_id;
  std::string action;
  std::string target;
  StepState state = StepState::kPending;  // kPending: not run (a dry run, or an earlier step failed)
  int attempts = 0;
  std::string message;  // why skipped, refused or failed; "dry run" when only recorded
  std::vector<Request> requests;
};

struct ExecutorOptions {
  bool dry_run = false;
  bool allow_disruptive = false;
  std::function<GateDecision(const PlanStep&)> gate;
  RetryPolicy retry;
  std::string command;  // journaled: "member-init", "backup full", ...
  std::string subject;  // journaled: what the plan acts on; resuming looks up its last run
  // A controller's reconcile: at most one disruptive step is performed (not
  // found done); the plan pauses before a second one, which waits for the
  // next observation. The plan ends "paused".
  bool one_disruptive_step = false;
  // Called right before a disruptive step, or one `recheck_also` names,
  // acts (not when it is found done, not in a dry run): an error stops the
  // plan there. A controller re-reads the state the step was decided on and
  // checks that it still holds.
  std::function<Status(const PlanStep&)> recheck;
  std::function<bool(const PlanStep&)> recheck_also;
  // Called as each step ends (done, skipped, failed, or the one a pause
  // stopped before), while the plan goes on: logs and Events in real time.
  std::function<void(const PlanStep&, const StepReport&)> on_step;
  // Polled before each step and each retry: true stops the plan ("failed",
  // kFailedPrecondition), e.g. once the leadership it acts under is lost.
  std::function<bool()> cancelled;
};

struct ExecutionReport {
  int64_t plan_id = 0;        // in the journal; 0 without one
  std::string state;          // "succeeded", "paused", "failed", "refused"
  std::string paused_before;  // the step a paused plan stopped before
  // A plan paused before a step that waits for the world: observe again after
  // this long (0 otherwise: the next event or resync decides).
  std::chrono::milliseconds requeue_after{0};
  std::optional<Error> error;  // the failure or refusal
  std::vector<StepReport> steps;

  bool ok() const { return !error.has_value(); }
};

class Executor {
 public:
  Executor(const AdapterSet& adapters, Journal* journal, ExecutorOptions options);

  ExecutionReport Run(const Plan& plan, const Snapshot& snapshot,
                      const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                      const EvaluationOptions& evaluation);

 private:
  std::optional<Error> CheckPlan(const Plan& plan, const Snapshot& snapshot,
                                 const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                                 const EvaluationOptions& evaluation, ExecutionReport& report);
  Status RunStep(const PlanStep& step, const StepRecord* interrupted, StepReport& report);
  // Records the run in the journal (once): the evaluation, the plan, and the
  // outcome of each step that has one in `report` so far.
  Status Record(const ExecutionReport& report);

  const AdapterSet& adapters_;
  Journal* journal_;
  ExecutorOptions options_;
  int64_t plan_id_ = 0;  // the run's plan in the journal; 0 while not recorded
  // While Run runs: what Record records.
  const Plan* plan_ = nullptr;
  const Snapshot* snapshot_ = nullptr;
  std::vector<std::pair<std::string, std::string>> rule_set_digests_;
  const ExecutionReport* report_ = nullptr;
  std::vector<GateDecision> gates_;                   // per step of the plan being run
  bool dry_run_acted_ = false;                        // a dry run recorded a step that would change the state
  std::optional<std::chrono::milliseconds> waiting_;  // the step just run waits for the world, not done yet
};

// The report as text, one line per step: "done", "skipped: already done",
// "refused: ...", "failed: ...", "not run", and with `requests` every request.
std::string FormatExecutionReport(const ExecutionReport& report, bool requests);
Value ExecutionReportToValue(const ExecutionReport& report);
// One step as JSON (apply's and history's -o json): id, action, target,
// state, attempts, the `timing` entries (history's startedAt, finishedAt),
// message and requests.
Value StepReportToValue(const StepReport& step, Value::Map timing = {});

}  // namespace ruleplane
