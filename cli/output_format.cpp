#include "cli/output_format.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "engine/common/json_value.h"
#include "engine/common/time_util.h"

namespace ruleplane::cli {
namespace {

// Whether a plain YAML scalar with this text would be read as something
// other than this string.
bool NeedsQuotes(const std::string& text) {
  if (text.empty()) return true;
  static const char* const kSpecial[] = {"null", "Null",  "NULL",  "~",     "true", "True",
                                         "TRUE", "false", "False", "FALSE", "yes",  "Yes",
                                         "no",   "No",    "on",    "On",    "off",  "Off"};
  for (const char* special : kSpecial) {
    if (text == special) return true;
  }
  const char first = text.front();
  return (first >= '0' && first <= '9') || first == '-' || first == '+' || first == '.';
}

void Emit(YAML::Emitter& emitter, const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kNull:
      emitter << YAML::Null;
      break;
    case Value::Kind::kBool:
      emitter << value.bool_value();
      break;
    case Value::Kind::kInt:
      emitter << value.int_value();
      break;
    case Value::Kind::kDouble:
      emitter << value.double_value();
      break;
    case Value::Kind::kString:
      if (NeedsQuotes(value.string_value())) emitter << YAML::DoubleQuoted;
      emitter << value.string_value();
      break;
    case Value::Kind::kList:
      emitter << YAML::BeginSeq;
      for (const Value& item : value.list_value()) Emit(emitter, item);
      emitter << YAML::EndSeq;
      break;
    case Value::Kind::kMap:
      emitter << YAML::BeginMap;
      for (const auto& [key, item] : value.map_value()) {
        emitter << YAML::Key;
        Emit(emitter, key.is_string() ? key : Value::String(key.DebugString()));
        emitter << YAML::Value;
        Emit(emitter, item);
      }
      emitter << YAML::EndMap;
      break;
    default:
      // Timestamps, durations and errors: their JSON text form.
      Emit(emitter, ValueFromJson(ValueToJson(value)));
      break;
  }
}

// Columns padded to their widest cell, every cell made Printable.
std::string Columns(std::vector<std::vector<std::string>> rows) {
  for (auto& row : rows) {
    for (std::string& cell : row) cell = Printable(cell);
  }
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::ostringstream out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << line << "\n";
  }
  return out.str();
}

std::string ParamsText(const Value& params) {
  std::string text;
  for (const auto& [key, value] : params.map_value()) {
    if (!text.empty()) text += " ";
    text += (key.is_string() ? key.string_value() : key.DebugString()) + "=";
    text += value.is_string() ? value.string_value() : FormatJson(value);
  }
  return text;
}

}  // namespace

std::string Printable(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatYaml(const Value& value) {
  YAML::Emitter emitter;
  Emit(emitter, value);
  return std::string(emitter.c_str()) + "\n";
}

std::string FormatPlanTable(const Plan& plan) {
  std::ostringstream out;
  out << "Plan for " << Printable(plan.snapshot_kind) << " observed at " << FormatRfc3339(plan.observed_at)
      << " (" << plan.snapshot_digest.substr(0, 19) << ")\n\n";
  std::vector<std::vector<std::string>> rule_sets = {{"RULE SET", "HIT POLICY", "DECISION"}};
  for (const PlannedRuleSet& planned : plan.rule_sets) {
    std::string decision;
    for (const std::string& rule : planned.matched_rules) decision += (decision.empty() ? "" : ", ") + rule;
    if (planned.violation) decision = "VIOLATION: " + planned.violation->message;
    if (planned.error) decision = "ERROR: " + planned.error->message;
    if (decision.empty()) decision = "(no rule matched)";
    rule_sets.push_back({planned.name + "@" + planned.version, planned.hit_policy, decision});
  }
  out << Columns(rule_sets) << "\n";
  if (plan.steps.empty()) {
    out << "No steps: nothing to do.\n";
    return out.str();
  }
  std::vector<std::vector<std::string>> steps = {{"#", "RULE", "ACTION", "TARGET", "PARAMS", "DISRUPTIVE"}};
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    steps.push_back({std::to_string(i + 1), step.rule, step.action, step.target.empty() ? "-" : step.target,
                     ParamsText(step.params), step.disruptive ? "yes" : "no"});
  }
  out << Columns(steps);
  return out.str();
}

}  // namespace ruleplane::cli
