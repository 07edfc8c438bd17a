#include "engine/match/hit_policy.h"

#include <map>
#include <string>

namespace ruleplane {
namespace {

// A text that is equal for two rules exactly when their actions are.
std::string ActionSignature(const Rule& rule) {
  std::string signature;
  auto add = [&](const std::string& part) {
    signature += std::to_string(part.size());
    signature += ':';
    signature += part;
  };
  for (const ActionSpec& action : rule.then) {
    add(action.action);
    add(action.for_each ? "forEach=" + action.for_each->text : "");
    add(action.as);
    add(action.target ? "target=" + action.target->text : "");
    for (const ActionParam& param : action.params) {
      add(param.name);
      add(param.value.text);
    }
    signature += ';';
  }
  return signature;
}

std::string QuotedIds(const RuleSet& rule_set, const std::vector<int>& rules) {
  std::string text;
  for (const int rule : rules) {
    if (!text.empty()) text += ", ";
    text += "'" + rule_set.rules[rule].id + "'";
  }
  return text;
}

}  // namespace

HitPolicySelector::HitPolicySelector(const RuleSet& rule_set) : rule_set_(&rule_set) {
  std::map<std::string, int> classes;
  for (const Rule& rule : rule_set.rules) {
    const auto [it, inserted] = classes.emplace(ActionSignature(rule), static_cast<int>(classes.size()));
    action_class_.push_back(it->second);
  }
}

void HitPolicySelector::Select(const std::vector<int>& matched, std::vector<int>& selected,
                               std::optional<Error>& violation) const {
  selected.clear();
  violation.reset();
  if (matched.empty()) return;
  const RuleSet& rules = *rule_set_;
  auto violate = [&](int offending_rule, std::string message) {
    violation =
        Error{ErrorCode::kHitPolicyViolation, std::move(message), rules.rules[offending_rule].position};
    if (violation->position.file.empty()) violation->position.file = rules.file;
  };
  switch (rules.hit_policy) {
    case HitPolicy::kUnique:
      if (matched.size() > 1) {
        violate(matched[1], "hit policy UNIQUE violated: " + std::to_string(matched.size()) +
                                " rules match (" + QuotedIds(rules, matched) + "), at most one may");
        return;
      }
      selected.push_back(matched[0]);
      return;
    case HitPolicy::kAny:
      for (const int rule : matched) {
        if (action_class_[rule] != action_class_[matched[0]]) {
          violate(rule, "hit policy ANY violated: rules '" + rules.rules[matched[0]].id + "' and '" +
                            rules.rules[rule].id + "' both match but their actions differ (matching: " +
                            QuotedIds(rules, matched) + ")");
          return;
        }
      }
      selected.push_back(matched[0]);
      return;
    case HitPolicy::kFirst:
      selected.push_back(matched[0]);
      return;
    case HitPolicy::kPriority: {
      int best = matched[0];
      for (const int rule : matched) {
        if (rules.rules[rule].priority > rules.rules[best].priority) best = rule;
      }
      selected.push_back(best);
      return;
    }
    case HitPolicy::kRuleOrder:
    case HitPolicy::kCollect:
      selected = matched;
      return;
  }
}

}  // namespace ruleplane
