#include "engine/plan/plan.h"

#include <algorithm>
#include <string>
#include <utility>

#include "engine/common/json_value.h"
#include "engine/common/sha256.h"
#include "engine/common/time_util.h"

namespace ruleplane {
namespace {

std::string PositionText(const SourcePosition& position) {
  return position.file + ":" + std::to_string(position.line) + ":" + std::to_string(position.column);
}

Error StepError(const Rule& rule, const SourcePosition& position, const std::string& what,
                const std::string& message) {
  return Error{ErrorCode::kEvaluation,
               "rule '" + rule.id + "' (" + PositionText(position) + "): " + what + ": " + message, position};
}

// The loop values of a forEach: a list's elements, a map's keys.
Result<std::vector<Value>> LoopValues(const Value& collection) {
  if (collection.is_list()) return collection.list_value();
  if (collection.is_map()) {
    std::vector<Value> keys;
    for (const auto& [key, value] : collection.map_value()) keys.push_back(key);
    return keys;
  }
  if (collection.is_error()) return Error{ErrorCode::kEvaluation, collection.error_message(), {}};
  return Error{
      ErrorCode::kEvaluation, std::string("forEach needs a list or a map, not ") + collection.TypeName(), {}};
}

std::string TargetText(const Value& target) {
  if (target.is_string()) return target.string_value();
  if (target.is_null()) return "";
  return FormatJson(target);
}

// Builds the steps of one selected rule into `steps`.
class StepBuilder {
 public:
  StepBuilder(const CompiledRuleSet& compiled, const ActionCatalogue* catalogue, expr::Frame& frame,
              expr::Budget& budget, std::vector<PlanStep>& steps)
      : compiled_(compiled), catalogue_(catalogue), frame_(frame), budget_(budget), steps_(steps) {}

  std::optional<Error> AddRule(const Rule& rule) {
    int number = 0;
    for (const ActionSpec& spec : rule.then) {
      std::vector<Value> loop = {Value()};
      if (spec.for_each) {
        auto values = LoopValues(spec.for_each->program->Evaluate(frame_, &budget_));
        if (!values.ok()) return StepError(rule, spec.for_each->position, "forEach", values.error().message);
        loop = std::move(*values);
      }
      for (const Value& item : loop) {
        if (spec.for_each) {
          const size_t slot = compiled_.layout().fixed_slots();
          if (frame_.size() <= slot) frame_.resize(slot + 1);
          frame_[slot] = item;
        }
        auto step = Build(rule, spec, ++number);
        if (!step.ok()) return step.error();
        steps_.push_back(std::move(*step));
      }
    }
    return std::nullopt;
  }

 private:
  Result<PlanStep> Build(const Rule& rule, const ActionSpec& spec, int number) {
    const RuleSet& rule_set = compiled_.rule_set();
    PlanStep step;
    step.rule_set = rule_set.id();
    step.rule = rule.id;
    step.action = spec.action;
    step.id = rule_set.name + "/" + rule.id + "/" + std::to_string(number);
    if (spec.target) {
      Value target = spec.target->program->Evaluate(frame_, &budget_);
      if (target.is_error()) return StepError(rule, spec.target->position, "target", target.error_message());
      step.target = TargetText(target);
    }
    const ActionDefinition* definition = catalogue_ ? catalogue_->Find(spec.action) : nullptr;
    if (catalogue_ != nullptr && definition == nullptr) {
      return StepError(rule, spec.position, "action", "unknown action '" + spec.action + "'");
    }
    Value::Map params;
    for (const ActionParam& param : spec.params) {
      Value value = param.value.program->Evaluate(frame_, &budget_);
      if (value.is_error())
        return StepError(rule, param.value.position, "param '" + param.name + "'", value.error_message());
      if (definition != nullptr) {
        const ActionParamSpec* param_spec = definition->FindParam(param.name);
        if (param_spec != nullptr && !ValueHasParamType(value, param_spec->type)) {
          return StepError(
              rule, param.value.position, "param '" + param.name + "'",
              "expected " + param_spec->type + ", got " + value.TypeName() + " " + value.DebugString());
        }
      }
      params.emplace_back(Value::String(param.name), std::move(value));
    }
    step.params = Value::MakeMap(std::move(params));
    if (definition != nullptr) {
      step.disruptive = definition->disruptive;
      step.adapter = definition->adapter;
    }
    if (!steps_.empty() && steps_.back().rule_set == step.rule_set)
      step.depends_on.push_back(steps_.back().id);
    // Canonical JSON (sorted keys) of what the step does, so that the same
    // step decided again from a later snapshot has the same key.
    nlohmann::json identity = {{"ruleSet", rule_set.name},
                               {"action", step.action},
                               {"target", step.target},
                               {"params", ValueToJson(step.params)}};
    step.idempotency_key =
        "sha256:" + Sha256Hex(identity.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return step;
  }

  const CompiledRuleSet& compiled_;
  const ActionCatalogue* catalogue_;
  expr::Frame& frame_;
  expr::Budget& budget_;
  std::vector<PlanStep>& steps_;
};

// Plans one rule set into `planned` and `steps`; an error of the whole plan
// (a param override of the wrong type) is returned.
std::optional<Error> PlanRuleSet(const CompiledRuleSet& compiled, const Snapshot& snapshot,
                                 const EvaluationOptions& options, const ActionCatalogue* catalogue,
                                 PlannedRuleSet& planned, std::vector<PlanStep>& steps) {
  const RuleSet& rule_set = compiled.rule_set();
  expr::Budget budget(options.budget);
  const ParamOverrides overrides = OverridesDeclaredBy(rule_set, options.param_overrides);
  auto applies = compiled.AppliesTo(snapshot, overrides, &budget);
  if (!applies.ok() && applies.error().code == ErrorCode::kInvalidArgument) return applies.error();
  if (!applies.ok()) {
    planned.error = applies.error();
    return std::nullopt;
  }
  planned.applies = *applies;
  if (!planned.applies) return std::nullopt;
  auto frame = compiled.DeriveFacts(snapshot, overrides, &budget);
  if (!frame.ok() && frame.error().code == ErrorCode::kInvalidArgument) return frame.error();
  if (!frame.ok()) {
    planned.error = frame.error();
    return std::nullopt;
  }
  auto decision = compiled.Match(*frame, false, &budget);
  if (!decision.ok()) {
    planned.error = decision.error();
    return std::nullopt;
  }
  planned.violation = decision->violation;
  const size_t first_step = steps.size();
  StepBuilder builder(compiled, catalogue, *frame, budget, steps);
  for (int rule_index : decision->selected) {
    const Rule& rule = rule_set.rules[rule_index];
    planned.matched_rules.push_back(rule.id);
    if (auto error = builder.AddRule(rule)) {
      planned.error = std::move(error);
      planned.matched_rules.clear();
      steps.resize(first_step);
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

ParamOverrides OverridesDeclaredBy(const RuleSet& rule_set, const ParamOverrides& overrides) {
  ParamOverrides declared;
  for (const auto& [name, value] : overrides) {
    if (rule_set.FindParam(name) >= 0) declared.emplace_back(name, value);
  }
  return declared;
}

bool Plan::has_violation() const {
  return std::any_of(rule_sets.begin(), rule_sets.end(), [](const PlannedRuleSet& r) { return r.violation; });
}

bool Plan::has_error() const {
  return std::any_of(rule_sets.begin(), rule_sets.end(), [](const PlannedRuleSet& r) { return r.error; });
}

Result<Plan> MakePlan(const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                      const Snapshot& snapshot, const EvaluationOptions& options,
                      const ActionCatalogue* catalogue) {
  Plan plan;
  plan.snapshot_kind = snapshot.kind;
  plan.snapshot_digest = snapshot.digest;
  plan.observed_at = snapshot.observed_at;
  for (const auto& compiled : rule_sets) {
    const RuleSet& rule_set = compiled->rule_set();
    PlannedRuleSet& planned = plan.rule_sets.emplace_back(PlannedRuleSet{rule_set.name,
                                                                         rule_set.version,
                                                                         rule_set.digest,
                                                                         HitPolicyName(rule_set.hit_policy),
                                                                         {},
                                                                         {},
                                                                         {},
                                                                         true});
    if (auto error = PlanRuleSet(*compiled, snapshot, options, catalogue, planned, plan.steps)) return *error;
  }
  return plan;
}

std::string PlanDigest(const Plan& plan) {
  std::string identity;
  for (const PlannedRuleSet& rule_set : plan.rule_sets)
    identity += rule_set.name + "@" + rule_set.version + " " + rule_set.digest + "\n";
  for (const PlanStep& step : plan.steps) identity += step.idempotency_key + "\n";
  return "sha256:" + Sha256Hex(identity);
}

Value PlanToValue(const Plan& plan) {
  auto string = [](const std::string& s) { return Value::String(s); };
  auto strings = [&](const std::vector<std::string>& items) {
    Value::List list;
    for (const auto& item : items) list.push_back(string(item));
    return Value::MakeList(std::move(list));
  };
  Value::List rule_sets;
  for (const PlannedRuleSet& planned : plan.rule_sets) {
    Value::Map entry = {{string("name"), string(planned.name)},
                        {string("version"), string(planned.version)},
                        {string("digest"), string(planned.digest)},
                        {string("hitPolicy"), string(planned.hit_policy)},
                        {string("matchedRules"), strings(planned.matched_rules)}};
    if (!planned.applies) entry.emplace_back(string("applies"), Value::Bool(false));
    if (planned.violation) entry.emplace_back(string("violation"), string(planned.violation->message));
    if (planned.error) entry.emplace_back(string("error"), string(planned.error->message));
    rule_sets.push_back(Value::MakeMap(std::move(entry)));
  }
  Value::List steps;
  for (const PlanStep& step : plan.steps) {
    steps.push_back(Value::MakeMap({{string("id"), string(step.id)},
                                    {string("ruleSet"), string(step.rule_set)},
                                    {string("rule"), string(step.rule)},
                                    {string("action"), string(step.action)},
                                    {string("target"), string(step.target)},
                                    {string("params"), step.params},
                                    {string("disruptive"), Value::Bool(step.disruptive)},
                                    {string("adapter"), string(step.adapter)},
                                    {string("dependsOn"), strings(step.depends_on)},
                                    {string("idempotencyKey"), string(step.idempotency_key)}}));
  }
  return Value::MakeMap({
      {string("apiVersion"), string("ruleplane.dev/v1")},
      {string("kind"), string("Plan")},
      {string("digest"), string(PlanDigest(plan))},
      {string("snapshot"), Value::MakeMap({{string("kind"), string(plan.snapshot_kind)},
                                           {string("digest"), string(plan.snapshot_digest)},
                                           {string("observedAt"), string(FormatRfc3339(plan.observed_at))}})},
      {string("ruleSets"), Value::MakeList(std::move(rule_sets))},
      {string("steps"), Value::MakeList(std::move(steps))},
  });
}

}  // namespace ruleplane
