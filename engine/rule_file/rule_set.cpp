#include "engine/rule_file/rule_set.h"

namespace ruleplane {

const char* HitPolicyName(HitPolicy policy) {
  switch (policy) {
    case HitPolicy::kUnique:
      return "UNIQUE";
    case HitPolicy::kAny:
      return "ANY";
    case HitPolicy::kFirst:
      return "FIRST";
    case HitPolicy::kPriority:
      return "PRIORITY";
    case HitPolicy::kRuleOrder:
      return "RULE_ORDER";
    case HitPolicy::kCollect:
      return "COLLECT";
  }
  return "UNKNOWN";
}

const char* ParamTypeName(ParamType type) {
  switch (type) {
    case ParamType::kBool:
      return "bool";
    case ParamType::kInt:
      return "int";
    case ParamType::kDouble:
      return "double";
    case ParamType::kString:
      return "string";
    case ParamType::kDuration:
      return "duration";
    case ParamType::kTimestamp:
      return "timestamp";
  }
  return "unknown";
}

const char* CompareOpText(CompareOp op) {
  switch (op) {
    case CompareOp::kEq:
      return "==";
    case CompareOp::kNe:
      return "!=";
    case CompareOp::kLt:
      return "<";
    case CompareOp::kLe:
      return "<=";
    case CompareOp::kGt:
      return ">";
    case CompareOp::kGe:
      return ">=";
  }
  return "?";
}

int RuleSet::FindFact(std::string_view fact_name) const {
  for (size_t i = 0; i < facts.size(); ++i) {
    if (facts[i].name == fact_name) return static_cast<int>(i);
  }
  return -1;
}

int RuleSet::FindParam(std::string_view param_name) const {
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].name == param_name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace ruleplane
