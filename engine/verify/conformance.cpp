#include "engine/verify/conformance.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "engine/expr/access_tree.h"
#include "engine/plan/snapshot_projection.h"

namespace ruleplane {
namespace {

class ShapeParser {
 public:
  explicit ShapeParser(std::string_view text) : text_(text) {}

  Result<ObservedShape> ParseAll() {
    auto shape = Shape();
    if (!shape.ok()) return shape;
    SkipSpace();
    if (at_ != text_.size()) return Expected("the end");
    return shape;
  }

 private:
  Result<ObservedShape> Shape() {
    SkipSpace();
    ObservedShape shape;
    if (Take('*')) {
      shape.open = true;
      return shape;
    }
    if (Take('[')) {
      auto element = Shape();
      if (!element.ok()) return element;
      SkipSpace();
      if (!Take(']')) return Expected("']'");
      shape.element = std::make_shared<const ObservedShape>(std::move(*element));
      return shape;
    }
    if (!Take('{')) return Expected("'*', '[' or '{'");
    SkipSpace();
    if (Take('}')) return shape;
    while (true) {
      SkipSpace();
      const size_t start = at_;
      while (at_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_'))
        ++at_;
      if (at_ == start) return Expected("a field name");
      const std::string name(text_.substr(start, at_ - start));
      const bool optional = Take('?');
      SkipSpace();
      ObservedShape field;
      if (Take(':')) {
        auto nested = Shape();
        if (!nested.ok()) return nested;
        field = std::move(*nested);
      }
      field.optional = optional;
      shape.fields.emplace(name, std::move(field));
      SkipSpace();
      if (Take('}')) return shape;
      if (!Take(',')) return Expected("',' or '}'");
    }
  }

  void SkipSpace() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool Take(char c) {
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  Error Expected(const std::string& what) const {
    return Error{
        ErrorCode::kParse, "observed shape, offset " + std::to_string(at_) + ": expected " + what, {}};
  }

  std::string_view text_;
  size_t at_ = 0;
};

// The paths read below `read` that `shape` does not have: "snapshot.a.b".
void MissingPaths(const expr::AccessTree& read, const ObservedShape& shape, const std::string& path,
                  std::vector<std::pair<std::string, std::string>>& missing) {
  if (shape.open) return;
  for (const auto& [name, child] : read.fields) {
    if (path == "snapshot" && name == "params") continue;  // the command line's, not the observer's
    const auto found = shape.fields.find(name);
    if (found == shape.fields.end()) {
      missing.emplace_back(path + "." + name, name);
      continue;
    }
    MissingPaths(child, found->second, path + "." + name, missing);
  }
  if (read.element && shape.element) MissingPaths(*read.element, *shape.element, path + "[]", missing);
}

void Mismatches(const Value& value, const ObservedShape& shape, const std::string& path,
                std::vector<std::string>& out) {
  if (shape.open || value.is_null()) return;
  if (value.is_list()) {
    if (!shape.element) {
      out.push_back(path + " is a list, declared as no list");
      return;
    }
    for (const Value& item : value.list_value()) Mismatches(item, *shape.element, path + "[]", out);
    return;
  }
  if (!value.is_map()) {
    if (shape.element || !shape.fields.empty()) out.push_back(path + " is a scalar, declared as more");
    return;
  }
  for (const auto& [key, child] : value.map_value()) {
    const std::string name = key.is_string() ? key.string_value() : key.DebugString();
    const auto found = shape.fields.find(name);
    if (found == shape.fields.end()) {
      out.push_back(path + "." + name + " is written but not declared");
    } else {
      Mismatches(child, found->second, path + "." + name, out);
    }
  }
  for (const auto& [name, field] : shape.fields) {
    if (!field.optional && value.Find(name) == nullptr)
      out.push_back(path + "." + name + " is declared but not written");
  }
}

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Where `expression` names `key` (as a field or a quoted key), or nothing.
std::optional<SourcePosition> Naming(const Expression& expression, const std::string& key) {
  for (size_t at = expression.text.find(key); at != std::string::npos;
       at = expression.text.find(key, at + 1)) {
    const bool starts = at == 0 || !IsIdentifierChar(expression.text[at - 1]);
    const size_t end = at + key.size();
    const bool ends = end == expression.text.size() || !IsIdentifierChar(expression.text[end]);
    if (!starts || !ends) continue;
    SourcePosition position = expression.position;
    for (size_t i = 0; i < at; ++i) {
      if (expression.text[i] == '\n') {
        ++position.line;
        position.column = 1;
      } else {
        ++position.column;
      }
    }
    return position;
  }
  return std::nullopt;
}

// The first expression of the rule set, in file order of its sections, that names `key`.
SourcePosition FirstNaming(const RuleSet& rules, const std::string& key) {
  std::vector<const Expression*> expressions;
  auto add = [&](const std::optional<Expression>& expression) {
    if (expression) expressions.push_back(&*expression);
  };
  for (const Fact& fact : rules.facts) {
    expressions.push_back(&fact.expression);
    add(fact.domain.low);
    add(fact.domain.high);
  }
  for (const Rule& rule : rules.rules) {
    for (const Cell& cell : rule.cells) {
      add(cell.operand);
      add(cell.low);
      add(cell.high);
    }
    add(rule.condition);
    for (const ActionSpec& spec : rule.then) {
      add(spec.for_each);
      add(spec.target);
      for (const ActionParam& param : spec.params) expressions.push_back(&param.value);
    }
  }
  for (const Expression& expression : rules.constraints) expressions.push_back(&expression);
  for (const Expression& expression : rules.invariants) expressions.push_back(&expression);
  for (const Expression* expression : expressions) {
    if (auto position = Naming(*expression, key)) return *position;
  }
  return {rules.file, 1, 1};
}

std::string JoinKinds(const std::vector<std::string>& kinds) {
  std::string text;
  for (const std::string& kind : kinds) text += (text.empty() ? "" : ", ") + kind;
  return text.empty() ? "none" : text;
}

}  // namespace

Result<ObservedShape> ParseObservedShape(std::string_view text) { return ShapeParser(text).ParseAll(); }

std::vector<std::string> ShapeMismatches(const Value& document, const ObservedShape& shape) {
  std::vector<std::string> mismatches;
  Mismatches(document, shape, "snapshot", mismatches);
  // A list's elements are checked one by one: say each mismatch once.
  std::sort(mismatches.begin(), mismatches.end());
  mismatches.erase(std::unique(mismatches.begin(), mismatches.end()), mismatches.end());
  return mismatches;
}

std::vector<ConformanceFinding> CheckConformance(const CompiledRuleSet& compiled,
                                                 const ActionCatalogue& catalogue,
                                                 const ProcessProfile& profile) {
  const RuleSet& rules = compiled.rule_set();
  std::vector<ConformanceFinding> findings;
  if (rules.subject != profile.subject) return findings;

  std::set<std::string> reported;
  for (const Rule& rule : rules.rules) {
    for (const ActionSpec& spec : rule.then) {
      const ActionDefinition* action = catalogue.Find(spec.action);
      if (action == nullptr || !reported.insert(spec.action).second) continue;
      if (std::find(profile.adapter_kinds.begin(), profile.adapter_kinds.end(), action->adapter) !=
          profile.adapter_kinds.end())
        continue;
      findings.push_back({spec.position, rules.id() + " plans " + spec.action + " (rule " + rule.id +
                                             "), which needs the " + action->adapter + " adapter; " +
                                             profile.name + " executes only with " +
                                             JoinKinds(profile.adapter_kinds)});
    }
  }

  std::vector<std::pair<std::string, std::string>> missing;
  MissingPaths(*SnapshotReads(compiled), profile.observed, "snapshot", missing);
  for (const auto& [path, key] : missing) {
    findings.push_back({FirstNaming(rules, key), rules.id() + " reads " + path + ", which " + profile.name +
                                                     "'s observer does not write"});
  }
  return findings;
}

}  // namespace ruleplane
