#include "execution/executor.h"

#include <algorithm>
#include <random>
#include <thread>
#include <unordered_map>

#include "engine/plan/plan_invariants.h"
#include "platform/failure_point.h"

namespace ruleplane {
namespace {

using Clock = std::chrono::steady_clock;

Error Refusal(std::string message) { return Error{ErrorCode::kRefused, std::move(message), {}}; }

// Plan order, with each step after the steps it depends on (Kahn's
// algorithm, taking the earliest ready step first). Nullopt on a cycle or an
// unknown dependency.
std::optional<std::vector<const PlanStep*>> DependencyOrder(const std::vector<PlanStep>& steps) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < steps.size(); ++i) index[steps[i].id] = i;
  std::vector<int> waiting(steps.size(), 0);
  std::vector<std::vector<size_t>> dependents(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    for (const std::string& dependency : steps[i].depends_on) {
      auto found = index.find(dependency);
      if (found == index.end()) return std::nullopt;
      dependents[found->second].push_back(i);
      ++waiting[i];
    }
  }
  std::vector<const PlanStep*> order;
  std::vector<bool> placed(steps.size(), false);
  while (order.size() < steps.size()) {
    size_t next = steps.size();
    for (size_t i = 0; i < steps.size(); ++i) {
      if (!placed[i] && waiting[i] == 0) {
        next = i;
        break;
      }
    }
    if (next == steps.size()) return std::nullopt;
    placed[next] = true;
    order.push_back(&steps[next]);
    for (size_t dependent : dependents[next]) --waiting[dependent];
  }
  return order;
}

std::chrono::milliseconds Backoff(const RetryPolicy& policy, int attempt, std::mt19937_64& random) {
  const int64_t base = policy.initial_backoff.count() << std::min(attempt - 1, 20);
  const int64_t capped = std::min<int64_t>(base, policy.max_backoff.count());
  // Full jitter over the upper half: retries of several processes spread out.
  std::uniform_int_distribution<int64_t> jitter(capped / 2, std::max<int64_t>(capped / 2, capped));
  return std::chrono::milliseconds(jitter(random));
}

}  // namespace

Adapter* AdapterSet::Find(std::string_view kind) const {
  auto found = adapters_.find(kind);
  return found == adapters_.end() ? nullptr : found->second;
}

std::vector<std::string> AdapterSet::kinds() const {
  std::vector<std::string> kinds;
  for (const auto& entry : adapters_) kinds.push_back(entry.first);
  return kinds;
}

Executor::Executor(const AdapterSet& adapters, Journal* journal, ExecutorOptions options)
    : adapters_(adapters), journal_(journal), options_(std::move(options)) {}

std::optional<Error> Executor::CheckPlan(const Plan& plan, const Snapshot& snapshot,
                                         const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                                         const EvaluationOptions& evaluation, ExecutionReport& report) {
  for (const PlannedRuleSet& planned : plan.rule_sets) {
    const std::optional<Error>& problem = planned.error ? planned.error : planned.violation;
    if (problem) {
      return Refusal("rule set " + planned.name + "@" + planned.version +
                     " did not decide: " + problem->message);
    }
  }
  for (const auto& compiled : rule_sets) {
    auto violations = CheckPlanInvariants(*compiled, snapshot, plan, evaluation);
    if (!violations.ok()) return violations.error();
    if (!violations->empty()) {
      const InvariantViolation& first = violations->front();
      std::string message = "the plan breaks an invariant of " + first.rule_set + " (" + first.position.file +
                            ":" + std::to_string(first.position.line) + "): " + first.invariant;
      if (!first.error.empty()) message += " (" + first.error + ")";
      return Refusal(message);
    }
  }
  std::optional<Error> refusal;
  gates_.assign(plan.steps.size(), GateDecision{});
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    StepReport& step_report = report.steps[i];
    std::string reason;
    if (adapters_.Find(step.adapter) == nullptr) {
      // Not a reason to hold back the rest: reported for this step alone,
      // and the steps that depend on it do not run (Run).
      step_report.state = StepState::kRefused;
      step_report.message = "no adapter of kind '" + step.adapter + "' is configured for " + step.action;
      continue;
    } else {
      const GateDecision& gate = gates_[i] = options_.gate ? options_.gate(step) : GateDecision{};
      if (gate.refuse) {
        reason = gate.reason;
      } else if (gate.wait) {
        continue;
      } else if (step.disruptive && !options_.allow_disruptive && !gate.allows_disruptive) {
        reason =
            step.action + " is disruptive: it runs only with --allow-disruptive or a gate that allows it";
      }
    }
    if (reason.empty()) continue;
    step_report.state = StepState::kRefused;
    step_report.message = reason;
    if (!refusal)
      refusal = Refusal("step " + step.id + " (" + step.action + " " + step.target + ") refused: " + reason);
  }
  return refusal;
}

ExecutionReport Executor::Run(const Plan& plan, const Snapshot& snapshot,
                              const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                              const EvaluationOptions& evaluation) {
  ExecutionReport report;
  dry_run_acted_ = false;
  plan_id_ = 0;
  plan_ = &plan;
  snapshot_ = &snapshot;
  report_ = &report;
  rule_set_digests_.clear();
  for (const auto& compiled : rule_sets)
    rule_set_digests_.emplace_back(compiled->rule_set().id(), compiled->rule_set().digest);
  for (const PlanStep& step : plan.steps) {
    StepReport step_report;
    step_report.step_id = step.id;
    step_report.action = step.action;
    step_report.target = step.target;
    report.steps.push_back(std::move(step_report));
  }

  // The same plan decided again (a resync, a plan waiting for an approval) is
  // recorded only when its run acts or ends otherwise than the last one.
  std::optional<PlanRecord> latest;
  auto finish = [&](const std::string& state, const std::string& error) -> Status {
    if (journal_ == nullptr) return {};
    if (plan_id_ == 0) {
      const bool repeated =
          latest && latest->state == state &&
          latest->error.substr(0, latest->error.find(':')) == error.substr(0, error.find(':'));
      if (repeated) return {};
      if (Status recorded = Record(report); !recorded.ok()) return recorded;
    }
    report.plan_id = plan_id_;
    return journal_->FinishPlan(plan_id_, state, error);
  };
  auto fail = [&](std::string state, Error error) -> ExecutionReport& {
    report.state = std::move(state);
    latest.reset();  // a failure is always recorded
    (void)finish(report.state, error.message);
    report.error = std::move(error);
    return report;
  };

  std::vector<StepRecord> interrupted;
  if (journal_ != nullptr) {
    if (!options_.dry_run) {
      auto unfinished = journal_->UnfinishedSteps(options_.subject);
      if (!unfinished.ok()) return fail("failed", unfinished.error());
      interrupted = std::move(*unfinished);
    }
    auto found = journal_->LatestPlan(options_.subject, options_.dry_run);
    if (!found.ok()) return fail("failed", found.error());
    if (*found && (*found)->digest == PlanDigest(plan)) {
      latest = std::move(*found);
    } else if (Status recorded = Record(report); !recorded.ok()) {
      return fail("failed", recorded.error());
    }
  }

  if (auto refusal = CheckPlan(plan, snapshot, rule_sets, evaluation, report)) {
    if (journal_ != nullptr && plan_id_ != 0) {
      for (size_t i = 0; i < plan.steps.size(); ++i) {
        if (report.steps[i].state == StepState::kRefused) {
          (void)journal_->StepFinished(plan_id_, plan.steps[i].id, StepState::kRefused, {},
                                       report.steps[i].message);
        }
      }
    }
    return fail("refused", *refusal);
  }
  auto order = DependencyOrder(plan.steps);
  if (!order) return fail("refused", Refusal("the plan's dependsOn has a cycle or names an unknown step"));

  auto pause_before = [&](const PlanStep& step, StepReport& step_report,
                          const std::string& why) -> ExecutionReport& {
    report.state = "paused";
    report.paused_before = step.id;
    step_report.state = StepState::kPending;
    step_report.message = "waiting: " + why;
    if (options_.on_step) options_.on_step(step, step_report);
    if (Status finished = finish("paused", "before " + step.id + ": " + why); !finished.ok())
      report.error = finished.error();
    return report;
  };
  bool disruptive_performed = false;
  // Steps that cannot be executed here, and those that depend on one: "id: why".
  std::map<std::string, std::string> not_run;
  for (const PlanStep* step : *order) {
    const size_t index = static_cast<size_t>(step - plan.steps.data());
    StepReport& step_report = report.steps[index];
    const auto blocker = std::find_if(step->depends_on.begin(), step->depends_on.end(),
                                      [&](const std::string& id) { return not_run.count(id) > 0; });
    if (step_report.state == StepState::kRefused || blocker != step->depends_on.end()) {
      if (step_report.state != StepState::kRefused)
        step_report.message = "not run: it depends on " + *blocker;
      not_run[step->id] = step_report.message;
      if (journal_ != nullptr && plan_id_ != 0 && step_report.state == StepState::kRefused) {
        if (Status recorded =
                journal_->StepFinished(plan_id_, step->id, StepState::kRefused, {}, step_report.message);
            !recorded.ok())
          return fail("failed", recorded.error());
      }
      if (options_.on_step) options_.on_step(*step, step_report);
      continue;
    }
    if (options_.cancelled && options_.cancelled()) {
      return fail("failed",
                  Error{ErrorCode::kFailedPrecondition,
                        "cancelled before step " + step->id + " (" + step->action + " " + step->target + ")",
                        {}});
    }
    std::string pause;
    if (gates_[index].wait) {
      pause = gates_[index].reason;
    } else if (options_.one_disruptive_step && !options_.dry_run && step->disruptive &&
               disruptive_performed) {
      pause = "it would be a second disruptive step in this reconcile";
    }
    if (!pause.empty()) {
      // Held back, unless it has taken effect already: then nothing would be
      // sent, and the plan goes on (after a step that waited, say).
      RequestLog reads(options_.dry_run);
      auto done = dry_run_acted_ ? Result<bool>(false) : adapters_.Find(step->adapter)->IsDone(*step, reads);
      if (!done.ok()) {
        Error error = done.error();
        error.message = "step " + step->id + " (" + step->action + " " + step->target +
                        "): checking whether it is done: " + error.message;
        return fail("failed", error);
      }
      if (!*done) return pause_before(*step, step_report, pause);
      step_report.state = StepState::kSkipped;
      step_report.message = "already done";
      step_report.requests = reads.requests();
      if (journal_ != nullptr && plan_id_ != 0) {
        Status recorded = journal_->StepFinished(plan_id_, step->id, step_report.state, step_report.requests,
                                                 step_report.message);
        if (!recorded.ok()) return fail("failed", recorded.error());
      }
      if (options_.on_step) options_.on_step(*step, step_report);
      continue;
    }
    const StepRecord* previous = nullptr;
    for (const StepRecord& record : interrupted) {
      if (record.idempotency_key == step->idempotency_key) previous = &record;
    }
    waiting_.reset();
    Status status = RunStep(*step, previous, step_report);
    if (status.ok() && waiting_) {
      report.requeue_after = *waiting_;
      return pause_before(*step, step_report,
                          step->action + " " + step->target + " is not done yet; observed again in " +
                              std::to_string(waiting_->count()) + " ms");
    }
    if (journal_ != nullptr && plan_id_ != 0 && (status.ok() || step_report.state == StepState::kFailed)) {
      Status recorded = journal_->StepFinished(plan_id_, step->id, step_report.state, step_report.requests,
                                               step_report.message);
      if (status.ok() && !recorded.ok()) status = recorded.error();
    }
    if (options_.on_step) options_.on_step(*step, step_report);
    if (!status.ok()) {
      Error error = status.error();
      error.message =
          "step " + step->id + " (" + step->action + " " + step->target + ") failed: " + error.message;
      return fail("failed", error);
    }
    if (step->disruptive && step_report.state == StepState::kSucceeded) disruptive_performed = true;
  }
  if (!not_run.empty()) {
    std::string message = "not executed here:";
    for (const auto& [id, why] : not_run) message += " step " + id + " (" + why + ");";
    message.pop_back();
    return fail("failed", Error{ErrorCode::kFailedPrecondition, message, {}});
  }
  report.state = "succeeded";
  if (Status finished = finish(options_.dry_run ? "dry-run" : "succeeded", ""); !finished.ok())
    report.error = finished.error();
  return report;
}

Status Executor::Record(const ExecutionReport& report) {
  if (plan_id_ != 0) return {};
  auto plan_id = journal_->BeginPlan(*snapshot_, rule_set_digests_, *plan_, options_.command,
                                     options_.subject, options_.dry_run);
  if (!plan_id.ok()) return plan_id.error();
  plan_id_ = *plan_id;
  for (const StepReport& step : report.steps) {
    if (step.state == StepState::kPending || step.state == StepState::kRunning) continue;
    if (Status recorded =
            journal_->StepFinished(plan_id_, step.step_id, step.state, step.requests, step.message);
        !recorded.ok())
      return recorded;
  }
  return {};
}

Status Executor::RunStep(const PlanStep& step, const StepRecord* interrupted, StepReport& report) {
  Adapter& adapter = *adapters_.Find(step.adapter);
  RequestLog log(options_.dry_run);
  std::mt19937_64 random(std::random_device{}());
  const auto deadline = Clock::now() + options_.retry.step_deadline;
  const bool rechecks = step.disruptive || (options_.recheck_also && options_.recheck_also(step));
  bool rechecked = !rechecks || !options_.recheck || options_.dry_run;
  for (int attempt = 1;; ++attempt) {
    // Check before acting, on the first attempt and before every retry: a
    // request that timed out may still have taken effect.
    // In a dry run, once an earlier step was recorded and not sent, the real
    // state is no longer what this step would meet: it is shown as it would run.
    auto done = dry_run_acted_ ? Result<bool>(false) : adapter.IsDone(step, log);
    if (done.ok() && *done) {
      report.state = StepState::kSkipped;
      report.message = interrupted != nullptr && interrupted->state == StepState::kRunning
                           ? "already done (it was running when the previous run stopped)"
                           : "already done";
      report.requests = log.requests();
      return {};
    }
    Status status = done.ok() ? Status() : Status(done.error());
    if (status.ok() && !options_.dry_run) {
      // A step that only waits is not performed: the world is observed again later.
      if (auto interval = adapter.PollInterval(step)) {
        waiting_ = *interval;
        report.requests = log.requests();
        return {};
      }
    }
    if (status.ok() && !rechecked) {
      rechecked = true;
      if (Status holds = options_.recheck(step); !holds.ok()) {
        report.state = StepState::kFailed;
        report.message = holds.error().message;
        return holds;
      }
    }
    if (status.ok()) {
      report.attempts = attempt;
      if (journal_ != nullptr && !options_.dry_run) {
        // The intent, before the step acts: the run is recorded now if it was not.
        if (Status recorded = Record(*report_); !recorded.ok()) return recorded;
        if (Status started = journal_->StepStarted(plan_id_, step, attempt); !started.ok()) return started;
      }
      FailPoint("before:" + step.action);
      status = adapter.Perform(step, log);
      if (status.ok()) FailPoint("after:" + step.action);
    }
    report.requests = log.requests();
    if (status.ok()) {
      dry_run_acted_ =
          dry_run_acted_ || (options_.dry_run && std::any_of(log.requests().begin(), log.requests().end(),
                                                             [](const Request& r) { return r.mutates; }));
      report.state = options_.dry_run ? StepState::kPending : StepState::kSucceeded;
      report.message = options_.dry_run ? "dry run: recorded, not sent" : "";
      return {};
    }
    const auto backoff = Backoff(options_.retry, attempt, random);
    if (!IsRetryable(status.error().code) || Clock::now() + backoff > deadline) {
      report.state = StepState::kFailed;
      report.message = status.error().message;
      if (IsRetryable(status.error().code))
        report.message += " (gave up after " + std::to_string(attempt) + " attempts)";
      return status;
    }
    const auto until = Clock::now() + backoff;
    while (Clock::now() < until) {
      if (options_.cancelled && options_.cancelled()) {
        report.state = StepState::kFailed;
        report.message =
            status.error().message + " (cancelled before attempt " + std::to_string(attempt + 1) + ")";
        return Error{ErrorCode::kFailedPrecondition, report.message, {}};
      }
      std::this_thread::sleep_for(
          std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
    }
  }
}

std::string FormatExecutionReport(const ExecutionReport& report, bool requests) {
  std::string text;
  for (const StepReport& step : report.steps) {
    std::string outcome;
    switch (step.state) {
      case StepState::kSucceeded:
        outcome = "done";
        break;
      case StepState::kSkipped:
        outcome = "skipped: " + step.message;
        break;
      case StepState::kRefused:
        outcome = "refused: " + step.message;
        break;
      case StepState::kFailed:
        outcome = "failed: " + step.message;
        break;
      case StepState::kRunning:
        outcome = "running";
        break;
      case StepState::kPending:
        outcome = step.message.empty() ? "not run" : step.message;
        break;
    }
    text += step.step_id + "  " + step.action + " " + step.target + "  " + outcome;
    if (step.attempts > 1) text += " (" + std::to_string(step.attempts) + " attempts)";
    text += "\n";
    if (!requests) continue;
    for (const Request& request : step.requests) {
      if (request.mutates) text += "    " + DescribeRequest(request) + "\n";
    }
  }
  if (report.error) text += report.state + ": " + report.error->message + "\n";
  return text;
}

Value StepReportToValue(const StepReport& step, Value::Map timing) {
  Value::List requests;
  for (const Request& request : step.requests) requests.push_back(RequestToValue(request));
  Value::Map map = {{Value::String("id"), Value::String(step.step_id)},
                    {Value::String("action"), Value::String(step.action)},
                    {Value::String("target"), Value::String(step.target)},
                    {Value::String("state"), Value::String(std::string(StepStateName(step.state)))},
                    {Value::String("attempts"), Value::Int(step.attempts)}};
  for (auto& entry : timing) map.push_back(std::move(entry));
  map.emplace_back(Value::String("message"), Value::String(step.message));
  map.emplace_back(Value::String("requests"), Value::MakeList(std::move(requests)));
  return Value::MakeMap(std::move(map));
}

Value ExecutionReportToValue(const ExecutionReport& report) {
  Value::List steps;
  for (const StepReport& step : report.steps) steps.push_back(StepReportToValue(step));
  Value::Map map = {{Value::String("planId"), Value::Int(report.plan_id)},
                    {Value::String("state"), Value::String(report.state)}};
  if (report.error) map.emplace_back(Value::String("error"), Value::String(report.error->message));
  map.emplace_back(Value::String("steps"), Value::MakeList(std::move(steps)));
  return Value::MakeMap(std::move(map));
}

}  // namespace ruleplane
