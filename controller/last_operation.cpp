#include "controller/last_operation.h"

#include <cctype>
#include <optional>

#include "engine/common/time_util.h"

namespace ruleplane {
namespace {

Value String(std::string text) { return Value::String(std::move(text)); }

// `value` (a map) without the entries named `skipped`.
Value Without(const Value& value, std::string_view skipped) {
  if (!value.is_map()) return value;
  Value::Map kept;
  for (const auto& [key, entry] : value.map_value()) {
    if (!(key.is_string() && key.string_value() == skipped)) kept.emplace_back(key, entry);
  }
  return Value::MakeMap(std::move(kept));
}

Value WithoutInList(const Value& list, std::string_view skipped) {
  Value::List kept;
  if (list.is_list()) {
    for (const Value& entry : list.list_value()) kept.push_back(Without(entry, skipped));
  }
  return Value::MakeList(std::move(kept));
}

std::string ErrorCodeText(ErrorCode code) {
  std::string text = "ERR_";
  const std::string name = ErrorCodeName(code);
  for (size_t i = 0; i < name.size(); ++i) {
    if (i > 0 && std::isupper(static_cast<unsigned char>(name[i]))) text += '_';
    text += static_cast<char>(std::toupper(static_cast<unsigned char>(name[i])));
  }
  return text;
}

// When the lastOperation `operation` says its last disruptive step began;
// nullopt when it does not say (or not as RFC 3339).
std::optional<Timestamp> DisruptiveStepTimeOf(const Value* operation) {
  const Value* time = operation != nullptr ? ValueAt(*operation, {"lastDisruptiveStepTime"}) : nullptr;
  if (time == nullptr || !time->is_string()) return std::nullopt;
  auto parsed = ParseRfc3339(time->string_value());
  return parsed.ok() ? std::optional<Timestamp>(*parsed) : std::nullopt;
}

}  // namespace

Value LastOperationStatus(const Value& etcd, const Plan& plan, const std::string& digest,
                          const ExecutionReport& report, const DataLossBound& bound, Timestamp now,
                          const Value& intent, const std::string& run_id) {
  const std::string time = FormatRfc3339(now);
  const PlanStep* paused_before = nullptr;
  bool recovery = false, disruptive_done = false;
  int64_t done = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    const StepState state = i < report.steps.size() ? report.steps[i].state : StepState::kPending;
    if (step.id == report.paused_before) paused_before = &step;
    recovery |= IsQuorumLossRecovery(step, etcd);
    done += state == StepState::kSucceeded || state == StepState::kSkipped;
    disruptive_done |= step.disruptive && state == StepState::kSucceeded;
  }

  std::string state = kOperationSucceeded, description = plan.steps.empty() ? "nothing to do" : "done";
  if (report.error) {
    state = kOperationError;
    description = report.error->message;
  } else if (paused_before != nullptr) {
    state = IsQuorumLossRecovery(*paused_before, etcd) ? kOperationAwaitingApproval : kOperationProcessing;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (&plan.steps[i] == paused_before && i < report.steps.size()) description = report.steps[i].message;
    }
  }
  Value::List rule_sets;
  for (const PlannedRuleSet& rule_set : plan.rule_sets)
    rule_sets.push_back(String(rule_set.name + "@" + rule_set.version));
  Value::Map steps = {{String("total"), Value::Int(static_cast<int64_t>(plan.steps.size()))},
                      {String("done"), Value::Int(done)}};
  if (paused_before != nullptr) steps.emplace_back(String("next"), String(paused_before->id));

  const Value* previous = ValueAt(etcd, {"status", "lastOperation"});
  Value::Map operation = {{String("type"), String("Reconcile")},
                          {String("state"), String(state)},
                          {String("description"), String(description)},
                          {String("planDigest"), String(digest)},
                          {String("ruleSets"), Value::MakeList(std::move(rule_sets))},
                          {String("steps"), Value::MakeMap(std::move(steps))}};
  if (recovery) operation.emplace_back(String("dataLossBound"), bound.ToValue());
  // The last disruptive step: the later of what this run's intent recorded
  // and what the status says (a step of another run may have begun since
  // this run observed it); one done without an intent began now.
  const Value* begun = intent.is_map() ? ValueAt(intent, {"lastOperation"}) : nullptr;
  const Value* latest = DisruptiveStepTimeOf(previous) > DisruptiveStepTimeOf(begun) ? previous : begun;
  if (latest == nullptr) latest = previous;
  for (const char* field : {"lastDisruptiveStepTime", "lastDisruptiveStep"}) {
    const Value* kept = latest != nullptr ? ValueAt(*latest, {field}) : nullptr;
    if (disruptive_done && begun == nullptr && std::string_view(field) == "lastDisruptiveStepTime") {
      operation.emplace_back(String(field), String(time));
    } else if (kept != nullptr) {
      operation.emplace_back(String(field), *kept);
    }
  }
  Value::List errors;
  if (report.error) {
    errors.push_back(Value::MakeMap({{String("code"), String(ErrorCodeText(report.error->code))},
                                     {String("description"), String(report.error->message)},
                                     {String("observedAt"), String(time)}}));
  }
  const Value* previous_errors = ValueAt(etcd, {"status", "lastErrors"});
  const Value new_errors = Value::MakeList(std::move(errors));
  if (previous != nullptr &&
      Without(Without(*previous, "lastUpdateTime"), "runID") == Value::MakeMap(operation) &&
      WithoutInList(previous_errors != nullptr ? *previous_errors : Value::MakeList({}), "observedAt") ==
          WithoutInList(new_errors, "observedAt")) {
    return Value();
  }
  operation.emplace_back(String("lastUpdateTime"), String(time));
  if (!run_id.empty()) operation.emplace_back(String("runID"), String(run_id));
  return Value::MakeMap(
      {{String("lastOperation"), Value::MakeMap(std::move(operation))}, {String("lastErrors"), new_errors}});
}

Value DisruptiveStepIntent(const PlanStep& step, const Plan& plan, const std::string& digest, Timestamp now) {
  const std::string time = FormatRfc3339(now);
  Value::Map recorded = {{String("id"), String(step.id)},
                         {String("action"), String(step.action)},
                         {String("target"), String(step.target)},
                         {String("planDigest"), String(digest)}};
  for (const PlanStep& later : plan.steps) {
    const Value* revision = later.params.is_map() ? later.params.Find("backupRevision") : nullptr;
    if (later.action == "MarkRebootstrap" && revision != nullptr)
      recorded.emplace_back(String("backupRevision"), *revision);
  }
  return Value::MakeMap(
      {{String("lastOperation"),
        Value::MakeMap({{String("state"), String(kOperationProcessing)},
                        {String("description"),
                         String("performing " + step.action + " " + step.target + " (step " + step.id + ")")},
                        {String("lastDisruptiveStepTime"), String(time)},
                        {String("lastDisruptiveStep"), Value::MakeMap(std::move(recorded))},
                        {String("lastUpdateTime"), String(time)}})}});
}

}  // namespace ruleplane
