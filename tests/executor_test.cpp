// The executor's own logic (order, checks before acting, retries, refusals,
// resuming from the journal), through an adapter that records what it is
// asked to do; the real adapters are tested against real etcd in tests/etcd/.
#include "execution/executor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "engine/common/snapshot.h"
#include "engine/rule_file/rule_loader.h"
#include "run_ruleplane.h"

namespace ruleplane {
namespace {

constexpr const char* kCatalogue = R"(apiVersion: ruleplane.dev/v1
kind: ActionCatalogue
actions:
  - {name: Prepare, adapter: local, disruptive: false, description: d, idempotency: i}
  - {name: Wipe, adapter: local, disruptive: true, description: d, idempotency: i}
  - {name: Finish, adapter: local, disruptive: false, description: d, idempotency: i}
)";

constexpr const char* kRules = R"(apiVersion: ruleplane.dev/v1
kind: DecisionTable
metadata: {name: steps, version: 1.0.0}
spec:
  subject: EtcdMemberInit
  hitPolicy: FIRST
  facts:
    - {name: wipe, expr: snapshot.wipe, domain: bool}
  invariants:
    - '!("Wipe" in actions) || wipe'
  rules:
    - id: all
      when: {wipe: true}
      then:
        - {action: Prepare, target: '"m0"'}
        - {action: Wipe, target: '"m0"'}
        - {action: Finish, target: '"m0"'}
    - id: gentle
      then:
        - {action: Prepare, target: '"m0"'}
        - {action: Finish, target: '"m0"'}
)";

// Records what it performs; `done` steps are found done; `failures` lists, per
// action, the errors its next attempts return.
class RecordingAdapter : public Adapter {
 public:
  std::string_view kind() const override { return "local"; }
  Result<bool> IsDone(const PlanStep& step, RequestLog&) override {
    ++checks[step.action];
    return done.count(step.action) > 0;
  }
  Status Perform(const PlanStep& step, RequestLog& log) override {
    if (log.Record(Request{Request::Kind::kFile, "touch", step.action, {}, "", true}))
      performed.push_back(step.action);
    auto& queue = failures[step.action];
    if (!queue.empty()) {
      Error error = queue.front();
      queue.erase(queue.begin());
      return error;
    }
    if (log.dry_run()) return {};
    done.insert(step.action);
    return {};
  }
  std::optional<std::chrono::milliseconds> PollInterval(const PlanStep& step) const override {
    if (waits.count(step.action) == 0) return std::nullopt;
    return std::chrono::milliseconds(5000);
  }
  std::set<std::string> done;
  std::set<std::string> waits;  // actions that only wait for the world
  std::vector<std::string> performed;
  std::map<std::string, int> checks;
  std::map<std::string, std::vector<Error>> failures;
};

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    catalogue_ = LoadActionCatalogue(kCatalogue, "catalogue.yaml").catalogue;
    ASSERT_TRUE(catalogue_);
    auto loaded = LoadRuleFile(kRules, "steps.yaml", catalogue_.get());
    ASSERT_TRUE(loaded.rule_set) << loaded.diagnostics.size();
    auto compiled = CompiledRuleSet::Compile(loaded.rule_set);
    ASSERT_TRUE(compiled.ok());
    rule_sets_ = {*compiled};
    adapters_.Add(&adapter_);
  }

  Snapshot Observe(bool wipe) {
    auto snapshot =
        ParseSnapshot(std::string(R"({"apiVersion": "ruleplane.dev/v1", "kind": "EtcdMemberInitSnapshot",
        "observedAt": "2024-05-01T10:00:00Z", "wipe": )") +
                      (wipe ? "true" : "false") + "}");
    EXPECT_TRUE(snapshot.ok());
    return *snapshot;
  }

  ExecutionReport Run(const Snapshot& snapshot, ExecutorOptions options, Journal* journal = nullptr,
                      const Plan* forged = nullptr) {
    auto plan = MakePlan(rule_sets_, snapshot, {}, catalogue_.get());
    EXPECT_TRUE(plan.ok());
    options.retry = {std::chrono::milliseconds(1), std::chrono::milliseconds(4), std::chrono::seconds(2)};
    options.subject = "m0";
    Executor executor(adapters_, journal, options);
    return executor.Run(forged ? *forged : *plan, snapshot, rule_sets_, {});
  }

  std::shared_ptr<const ActionCatalogue> catalogue_;
  std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets_;
  RecordingAdapter adapter_;
  AdapterSet adapters_;
};

TEST_F(ExecutorTest, RunsStepsInOrderAndSkipsWhatIsDone) {
  adapter_.done.insert("Prepare");
  ExecutorOptions options;
  options.allow_disruptive = true;
  ExecutionReport report = Run(Observe(true), options);
  ASSERT_TRUE(report.ok()) << report.error->message;
  EXPECT_EQ(adapter_.performed, (std::vector<std::string>{"Wipe", "Finish"}));
  EXPECT_EQ(report.steps[0].state, StepState::kSkipped);
  EXPECT_EQ(report.steps[1].state, StepState::kSucceeded);
}

// `--param` overrides are for the rule sets that declare them: the invariant
// check of one that does not (this one declares none) is not an error.
TEST_F(ExecutorTest, ParamOverridesReachOnlyTheRuleSetsThatDeclareThem) {
  const Snapshot snapshot = Observe(true);
  EvaluationOptions evaluation;
  evaluation.param_overrides = {{"notReadyGracePeriod", Value::String("10s")}};
  auto plan = MakePlan(rule_sets_, snapshot, evaluation, catalogue_.get());
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ExecutorOptions options;
  options.allow_disruptive = true;
  Executor executor(adapters_, nullptr, options);
  ExecutionReport report = executor.Run(*plan, snapshot, rule_sets_, evaluation);
  ASSERT_TRUE(report.ok()) << report.error->message;
  EXPECT_EQ(adapter_.performed, (std::vector<std::string>{"Prepare", "Wipe", "Finish"}));
}

TEST_F(ExecutorTest, AGateThatSaysWaitPausesThePlanBeforeTheStepAfterRunningTheOnesBefore) {
  ExecutorOptions options;
  std::vector<std::string> ended;
  options.gate = [](const PlanStep& step) {
    GateDecision decision;
    decision.wait = step.action == "Wipe";
    decision.reason = "not yet";
    return decision;
  };
  options.on_step = [&](const PlanStep& step, const StepReport& report) {
    ended.push_back(step.action + ":" + std::string(StepStateName(report.state)));
  };
  ExecutionReport report = Run(Observe(true), options);
  ASSERT_TRUE(report.ok()) << report.error->message;
  EXPECT_EQ(report.state, "paused");
  EXPECT_EQ(report.paused_before, "steps/all/2");
  EXPECT_EQ(adapter_.performed, (std::vector<std::string>{"Prepare"}))
      << "a waiting disruptive step needs no --allow-disruptive, and nothing after it runs";
  EXPECT_EQ(report.steps[1].message, "waiting: not yet");
  EXPECT_EQ(ended, (std::vector<std::string>{"Prepare:succeeded", "Wipe:pending"}));
}

// A step that only waits for the world is never waited for in place: while
// it is not done the plan pauses before it and says when to look again.
TEST_F(ExecutorTest, AStepThatOnlyWaitsPausesThePlanWhileItIsNotDoneAndSaysWhenToLookAgain) {
  adapter_.waits.insert("Finish");
  ExecutorOptions options;
  const auto started = std::chrono::steady_clock::now();
  ExecutionReport report = Run(Observe(false), options);
  ASSERT_TRUE(report.ok()) << report.error->message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1)) << "nothing waited in place";
  EXPECT_EQ(report.state, "paused");
  EXPECT_EQ(report.paused_before, "steps/gentle/2");
  EXPECT_EQ(report.requeue_after, std::chrono::milliseconds(5000));
  EXPECT_EQ(adapter_.performed, (std::vector<std::string>{"Prepare"})) << "the waiting step sends nothing";
  EXPECT_EQ(report.steps[1].message.rfind("waiting: Finish m0 is not done yet", 0), 0u)
      << report.steps[1].message;

  adapter_.done.insert("Finish");  // the world got there: the next plan goes on
  report = Run(Observe(false), options);
  ASSERT_TRUE(report.ok()) << report.error->message;
  EXPECT_EQ(report.state, "succeeded");
  EXPECT_EQ(report.requeue_after, std::chrono::milliseconds(0));
  EXPECT_EQ(report.steps[1].state, StepState::kSkipped);
}

// A step a gate holds back but that has taken effect already (the scale of a
// plan that went on waiting) sends nothing: it does not stop the plan again.
TEST_F(ExecutorTest, AStepAGateHoldsBackIsSkippedWhenItHasTakenEffectAlready) {
  ExecutorOptions options;
  options.gate = [](const PlanStep& step) {
    GateDecision decision;
    decision.wait = step.action == "Wipe";
    decision.reason = "the minimum interval";
    return decision;
  };
  adapter_.done.insert("Wipe");
  ExecutionReport report = Run(Observe(true), options);
  ASSERT_TRUE(report.ok()) << report.error->message;
  EXPECT_EQ(report.state, "succeeded");
  EXPECT_EQ(report.steps[1].state, StepState::kSkipped);
  EXPECT_EQ(adapter_.performed, (std::vector<std::string>{"Prepare", "Finish"}));
}

TEST_F(ExecutorTest, ACancelledPlanStopsBeforeTheNextStepAndDuringRetries) {
  ExecutorOptions options;
  int steps = 0;
  options.on_step = [&](const PlanStep&, const StepReport&) { ++steps; };
  options.cancelled = [&] { return steps >= 1; };  // lost after the first step
  ExecutionReport report = Run(Observe(false), options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error->code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(adapter_.performed, (std::vector<std::string>{"Prepare"}));

  // Lost while a transient failure waits for its retry: no second attempt.
  adapter_.performed.clear();
  adapter_.done.clear();
  adapter_.failures["Prepare"] = {Error{ErrorCode::kUnavailable, "503", {}}};
  ExecutorOptions retrying;
  retrying.retry = {std::chrono::seconds(30), std::chrono::seconds(30), std::chrono::minutes(5)};
  retrying.cancelled = [&] { return !adapter_.performed.empty(); };  // lost once the first attempt failed
  auto plan = MakePlan(rule_sets_, Observe(false), {}, catalogue_.get());
  ASSERT_TRUE(plan.ok());
  Executor executor(adapters_, nullptr, retrying);
  const auto started = std::chrono::steady_clock::now();
  report = executor.Run(*plan, Observe(false), rule_sets_, {});
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error->code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(adapter_.performed, (std::vector<std::string>{"Prepare"})) << "no second attempt";
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10))
      << "the backoff (30 s) does not outlast the cancellation";
}

TEST_F(ExecutorTest, ADisruptiveStepIsReCheckedRightBeforeItActsAndAFailedCheckStopsThePlan) {
  ExecutorOptions options;
  options.allow_disruptive = true;
  std::vector<std::string> rechecked;
  options.recheck = [&](const PlanStep& step) -> Status {
    rechecked.push_back(step.action);
    return Error{ErrorCode::kConflict, "no longer planned", {}};
  };
  ExecutionReport report = Run(Observe(true), options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error->code, ErrorCode::kConflict);
  EXPECT_EQ(rechecked, (std::vector<std::string>{"Wipe"})) << "only disruptive steps are re-checked";
  EXPECT_EQ(adapter_.performed, (std::vector<std::string>{"Prepare"}));
  EXPECT_EQ(report.steps[1].state, StepState::kFailed);

  adapter_.performed.clear();
  adapter_.done.insert("Wipe");
  rechecked.clear();
  report = Run(Observe(true), options);
  ASSERT_TRUE(report.ok()) << report.error->message;
  EXPECT_TRUE(rechecked.empty()) << "a step found done is not re-checked";
}

TEST_F(ExecutorTest, AStepThatIsNotDisruptiveIsReCheckedWhenTheOptionsNameIt) {
  ExecutorOptions options;
  options.allow_disruptive = true;
  std::vector<std::string> rechecked;
  options.recheck = [&](const PlanStep& step) -> Status {
    rechecked.push_back(step.action);
    return step.action == "Prepare" ? Status(Error{ErrorCode::kConflict, "no longer planned", {}}) : Status();
  };
  options.recheck_also = [](const PlanStep& step) { return step.action == "Prepare"; };
  ExecutionReport report = Run(Observe(true), options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error->code, ErrorCode::kConflict);
  EXPECT_EQ(rechecked, (std::vector<std::string>{"Prepare"}));
  EXPECT_TRUE(adapter_.performed.empty()) << "nothing acted on a check that failed";
}

TEST_F(ExecutorTest, RefusesADisruptiveStepWithoutPermissionAndSendsNothing) {
  ExecutionReport report = Run(Observe(true), {});
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.state, "refused");
  EXPECT_EQ(report.error->code, ErrorCode::kRefused);
  EXPECT_NE(report.error->message.find("Wipe"), std::string::npos) << report.error->message;
  EXPECT_TRUE(adapter_.performed.empty());
  EXPECT_EQ(report.steps[1].state, StepState::kRefused);
}

TEST_F(ExecutorTest, AGateMayAllowADisruptiveStepOrRefuseAnyStep) {
  ExecutorOptions options;
  options.gate = [](const PlanStep& step) { return GateDecision{false, step.target == "m0", "own member"}; };
  EXPECT_TRUE(Run(Observe(true), options).ok());
  adapter_.performed.clear();
  adapter_.done.clear();
  options.gate = [](const PlanStep& step) {
    return GateDecision{step.action == "Finish", false, "not today"};
  };
  ExecutionReport report = Run(Observe(false), options);
  EXPECT_EQ(report.state, "refused");
  EXPECT_TRUE(adapter_.performed.empty());
}

// A step no adapter here executes is refused alone: a step that does not
// depend on it still runs, one that does is not run, and the plan fails
// naming both, in the journal too.
TEST_F(ExecutorTest, AStepWithoutAnAdapterIsRefusedAloneAndOnlyTheStepsAfterItWait) {
  auto plan = MakePlan(rule_sets_, Observe(false), {}, catalogue_.get());
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->steps.size(), 2u);
  Plan forged = *plan;
  forged.steps[0].adapter = "etcd";
  ExecutionReport dependent = Run(Observe(false), {}, nullptr, &forged);
  EXPECT_EQ(dependent.state, "failed");
  EXPECT_EQ(dependent.steps[0].state, StepState::kRefused);
  EXPECT_EQ(dependent.steps[0].message, "no adapter of kind 'etcd' is configured for Prepare");
  EXPECT_EQ(dependent.steps[1].state, StepState::kPending);
  EXPECT_EQ(dependent.steps[1].message, "not run: it depends on " + forged.steps[0].id);
  EXPECT_TRUE(adapter_.performed.empty());

  forged.steps[1].depends_on.clear();
  const std::string path = testing_support::TempPath("unexecutable.db");
  std::filesystem::remove(path);
  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal.ok());
  ExecutionReport independent = Run(Observe(false), {}, journal->get(), &forged);
  EXPECT_EQ(independent.state, "failed");
  ASSERT_TRUE(independent.error.has_value());
  EXPECT_NE(independent.error->message.find("step " + forged.steps[0].id + " (no adapter of kind 'etcd'"),
            std::string::npos)
      << independent.error->message;
  EXPECT_EQ(adapter_.performed, std::vector<std::string>{"Finish"});
  EXPECT_EQ(independent.steps[1].state, StepState::kSucceeded);
  auto plans = (*journal)->Plans(1);
  ASSERT_TRUE(plans.ok() && plans->size() == 1u);
  EXPECT_EQ(plans->front().state, "failed");
  ASSERT_EQ(plans->front().steps.size(), 2u);
  EXPECT_EQ(plans->front().steps[0].state, StepState::kRefused);
  EXPECT_EQ(plans->front().steps[1].state, StepState::kSucceeded);
  std::filesystem::remove(path);
}

TEST_F(ExecutorTest, APlanThatBreaksAnInvariantIsRefused) {
  // A plan with Wipe on a snapshot where wipe is false: forged, as a bug in a rule could make it.
  Snapshot wiping = Observe(true);
  auto plan = MakePlan(rule_sets_, wiping, {}, catalogue_.get());
  ASSERT_TRUE(plan.ok());
  ExecutorOptions options;
  options.allow_disruptive = true;
  ExecutionReport report = Run(Observe(false), options, nullptr, &*plan);
  EXPECT_EQ(report.state, "refused");
  EXPECT_NE(report.error->message.find("invariant"), std::string::npos) << report.error->message;
  EXPECT_TRUE(adapter_.performed.empty());
}

TEST_F(ExecutorTest, RetriesRetryableFailuresAndStopsOnOthers) {
  adapter_.failures["Prepare"] = {Error{ErrorCode::kUnavailable, "503", {}},
                                  Error{ErrorCode::kDeadlineExceeded, "slow", {}}};
  ExecutionReport report = Run(Observe(false), {});
  ASSERT_TRUE(report.ok()) << report.error->message;
  EXPECT_EQ(report.steps[0].attempts, 3);
  EXPECT_EQ(adapter_.checks["Prepare"], 3) << "the real state is checked before every attempt";

  adapter_.performed.clear();
  adapter_.done.clear();
  adapter_.failures["Prepare"] = {Error{ErrorCode::kFailedPrecondition, "not quorate", {}}};
  report = Run(Observe(false), {});
  EXPECT_EQ(report.state, "failed");
  EXPECT_NE(report.error->message.find("Prepare m0"), std::string::npos) << report.error->message;
  EXPECT_EQ(adapter_.performed, std::vector<std::string>{"Prepare"}) << "later steps do not run";
  EXPECT_EQ(report.steps[1].state, StepState::kPending);
}

TEST_F(ExecutorTest, DryRunRecordsEveryStepAndPerformsNothing) {
  ExecutorOptions options;
  options.dry_run = true;
  options.allow_disruptive = true;
  ExecutionReport report = Run(Observe(true), options);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(adapter_.performed.empty());
  ASSERT_EQ(report.steps.size(), 3u);
  for (const StepReport& step : report.steps) EXPECT_EQ(step.requests.size(), 1u);
}

// Issue 23, hazard 13: a resumed run trusted "succeeded in the interrupted
// run"; after two interruptions a later step of one run had undone an earlier
// step of another, which was skipped, and a restore ended with the full
// snapshot only. A step is skipped only when the world shows it done.
TEST_F(ExecutorTest, AResumedRunSkipsOnlyWhatTheRealStateShowsDone) {
  const std::string path = testing_support::TempPath("executor-journal.db");
  std::filesystem::remove(path);
  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  ExecutorOptions options;
  options.allow_disruptive = true;
  // The first run fails at Wipe: Prepare took effect.
  adapter_.failures["Wipe"] = {Error{ErrorCode::kIo, "disk", {}}};
  EXPECT_EQ(Run(Observe(true), options, journal->get()).state, "failed");
  // Prepare's effect is gone from the real state (undone since): the journal's
  // "succeeded" does not skip it, it runs again.
  adapter_.done.clear();
  adapter_.performed.clear();
  ExecutionReport report = Run(Observe(true), options, journal->get());
  ASSERT_TRUE(report.ok()) << report.error->message;
  EXPECT_EQ(adapter_.performed, (std::vector<std::string>{"Prepare", "Wipe", "Finish"}));
  EXPECT_EQ(report.steps[0].state, StepState::kSucceeded);
  // Where the real state shows a step done, it is skipped.
  adapter_.performed.clear();
  adapter_.done = {"Prepare"};
  report = Run(Observe(true), options, journal->get());
  ASSERT_TRUE(report.ok()) << report.error->message;
  EXPECT_EQ(report.steps[0].state, StepState::kSkipped);
  EXPECT_EQ(adapter_.performed, (std::vector<std::string>{"Wipe", "Finish"}));
}

// Issue 23, hazard 11: every resync of a controller, and every reconcile of a
// plan waiting for an approval, recorded the same evaluation and plan again.
// A plan decided again is recorded only when its run acts or ends otherwise.
TEST_F(ExecutorTest, ThePlanDecidedAgainIsRecordedOnlyWhenItsRunActsOrEndsOtherwise) {
  const std::string path = testing_support::TempPath("executor-repeated.db");
  std::filesystem::remove(path);
  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal.ok()) << journal.error().message;
  auto recorded = [&] {
    auto plans = (*journal)->Plans(0);
    EXPECT_TRUE(plans.ok());
    return plans.ok() ? plans->size() : 0u;
  };
  ExecutorOptions options;
  ASSERT_TRUE(Run(Observe(false), options, journal->get()).ok());
  EXPECT_EQ(recorded(), 1u);
  ExecutionReport again = Run(Observe(false), options, journal->get());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.steps[0].state, StepState::kSkipped);
  EXPECT_EQ(again.plan_id, 0) << "found done, as the recorded run left it: not recorded again";
  EXPECT_EQ(recorded(), 1u);
  adapter_.done.clear();
  ASSERT_TRUE(Run(Observe(false), options, journal->get()).ok());
  EXPECT_EQ(recorded(), 2u) << "it acted";
  auto plans = (*journal)->Plans(1);
  ASSERT_TRUE(plans.ok());
  EXPECT_EQ(plans->front().steps[0].state, StepState::kSucceeded);

  options.gate = [](const PlanStep& step) {
    GateDecision decision;
    decision.wait = step.action == "Finish";
    decision.reason = "an approval";
    return decision;
  };
  adapter_.done.clear();
  EXPECT_EQ(Run(Observe(false), options, journal->get()).state, "paused");
  EXPECT_EQ(Run(Observe(false), options, journal->get()).state, "paused");
  EXPECT_EQ(Run(Observe(false), options, journal->get()).state, "paused");
  EXPECT_EQ(recorded(), 3u) << "the first pause acted (Prepare); the two after it are the same";
  plans = (*journal)->Plans(1);
  ASSERT_TRUE(plans.ok());
  EXPECT_EQ(plans->front().state, "paused");
  EXPECT_EQ(plans->front().steps[0].state, StepState::kSucceeded);
}

}  // namespace
}  // namespace ruleplane
