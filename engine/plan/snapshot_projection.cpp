#include "engine/plan/snapshot_projection.h"

#include <simdjson.h>

#include <string>
#include <utility>

#include "engine/common/sha256.h"
#include "engine/expr/access_tree.h"

namespace ruleplane {
namespace {

using expr::AccessAnalysis;
using expr::AccessSet;
using expr::AccessTree;

// Deeper documents go to ParseSnapshot, which refuses nesting beyond 512.
constexpr size_t kMaxDepth = 500;

void ReadWhole(AccessAnalysis& analysis, const std::optional<Expression>& expression) {
  if (expression) AccessAnalysis::ReadWhole(analysis.Visit(*expression->program));
}

// Records in `document` what evaluating and planning `compiled` can read of
// the snapshot: the same expressions, in the same frame slots, as
// appliesWhen, DeriveFacts, Match and MakePlan evaluate them.
void Analyze(const CompiledRuleSet& compiled, AccessTree& document) {
  const RuleSet& rules = compiled.rule_set();
  const FrameLayout& layout = compiled.layout();
  AccessAnalysis analysis;
  analysis.Bind(layout.snapshot_slot(), {&document});
  ReadWhole(analysis, rules.applies_when);
  std::vector<AccessSet> facts(rules.facts.size());
  for (size_t f = 0; f < rules.facts.size(); ++f) {
    const Fact& fact = rules.facts[f];
    facts[f] = analysis.Visit(*fact.expression.program);
    analysis.Bind(layout.fact_slot(static_cast<int>(f)), facts[f]);
    if (fact.domain.kind != Domain::Kind::kNone) AccessAnalysis::ReadWhole(facts[f]);
    ReadWhole(analysis, fact.domain.low);
    ReadWhole(analysis, fact.domain.high);
  }
  for (const Rule& rule : rules.rules) {
    for (const Cell& cell : rule.cells) {
      AccessAnalysis::ReadWhole(facts[cell.fact]);
      ReadWhole(analysis, cell.operand);
      ReadWhole(analysis, cell.low);
      ReadWhole(analysis, cell.high);
    }
    ReadWhole(analysis, rule.condition);
    for (const ActionSpec& spec : rule.then) {
      if (spec.for_each) {
        analysis.Bind(layout.fixed_slots(),
                      AccessAnalysis::Elements(analysis.Visit(*spec.for_each->program)));
      }
      ReadWhole(analysis, spec.target);
      for (const ActionParam& param : spec.params)
        AccessAnalysis::ReadWhole(analysis.Visit(*param.value.program));
      analysis.Bind(layout.fixed_slots(), {});
    }
  }
  for (const Expression& constraint : rules.constraints) ReadWhole(analysis, constraint);
  for (const Expression& invariant : rules.invariants) ReadWhole(analysis, invariant);
  analysis.Finish();
}

// The element, of a type its element_type() says it is.
simdjson::dom::object AsObject(simdjson::dom::element element) {
  simdjson::dom::object object;
  [[maybe_unused]] const auto error = element.get(object);
  return object;
}
simdjson::dom::array AsArray(simdjson::dom::element element) {
  simdjson::dom::array array;
  [[maybe_unused]] const auto error = element.get(array);
  return array;
}

// Builds Values from simdjson's DOM. Duplicate keys: the last value wins, at
// the first one's place, as ParseJson has it.
class ValueBuilder {
 public:
  Value Whole(simdjson::dom::element element) {
    switch (element.type()) {
      case simdjson::dom::element_type::OBJECT: {
        const simdjson::dom::object object = AsObject(element);
        Value::Map entries;
        entries.reserve(object.size());
        for (auto field : object) Add(entries, Value::String(std::string(field.key)), Whole(field.value));
        return Value::MakeMap(std::move(entries));
      }
      case simdjson::dom::element_type::ARRAY: {
        const simdjson::dom::array array = AsArray(element);
        Value::List items;
        items.reserve(array.size());
        for (auto item : array) items.push_back(Whole(item));
        return Value::MakeList(std::move(items));
      }
      default:
        return Scalar(element);
    }
  }

  // Only what `tree` says may be read; containers nothing reads become empty
  // ones of the same kind, scalars are always whole.
  Value Project(simdjson::dom::element element, const AccessTree* tree) {
    if (tree != nullptr && tree->whole) return Whole(element);
    switch (element.type()) {
      case simdjson::dom::element_type::OBJECT: {
        if (tree == nullptr) return empty_map_;
        const simdjson::dom::object object = AsObject(element);
        Value::Map entries;
        entries.reserve(tree->every_key ? object.size() : tree->fields.size());
        for (auto field : object) {
          if (const AccessTree* named = Named(*tree, field.key)) {
            Add(entries, named->name, Project(field.value, named));
          } else if (tree->element || tree->every_key) {
            Add(entries, Value::String(std::string(field.key)), Project(field.value, tree->element.get()));
          }
        }
        return Value::MakeMap(std::move(entries));
      }
      case simdjson::dom::element_type::ARRAY: {
        if (tree == nullptr) return empty_list_;
        Value::List items;
        const simdjson::dom::array array = AsArray(element);
        items.reserve(array.size());
        for (auto item : array) items.push_back(Project(item, tree->element.get()));
        return Value::MakeList(std::move(items));
      }
      default:
        return Scalar(element);
    }
  }

 private:
  // A linear search: a tree names a few fields, and most keys differ in length.
  static const AccessTree* Named(const AccessTree& tree, std::string_view key) {
    for (const auto& [name, child] : tree.fields) {
      if (name.size() == key.size() && name == key) return &child;
    }
    return nullptr;
  }

  static Value Scalar(simdjson::dom::element element) {
    switch (element.type()) {
      case simdjson::dom::element_type::INT64:
        return Value::Int(element.get_int64().value_unsafe());
      case simdjson::dom::element_type::UINT64:  // above INT64_MAX, as ParseJson
        return Value::Double(static_cast<double>(element.get_uint64().value_unsafe()));
      case simdjson::dom::element_type::DOUBLE:
        return Value::Double(element.get_double().value_unsafe());
      case simdjson::dom::element_type::STRING:
        return Value::String(std::string(element.get_string().value_unsafe()));
      case simdjson::dom::element_type::BOOL:
        return Value::Bool(element.get_bool().value_unsafe());
      default:
        return Value::Null();
    }
  }

  static void Add(Value::Map& entries, Value key, Value value) {
    for (auto& [existing, existing_value] : entries) {
      if (existing.string_value() == key.string_value()) {
        existing_value = std::move(value);
        return;
      }
    }
    entries.emplace_back(std::move(key), std::move(value));
  }

  const Value empty_map_ = Value::MakeMap({});
  const Value empty_list_ = Value::MakeList({});
};

std::string TreeText(const AccessTree& tree) {
  if (tree.whole) return "*";
  std::string text;
  for (const auto& [name, child] : tree.fields) {
    text += (text.empty() ? "" : ", ") + name;
    const std::string inner = TreeText(child);
    if (!inner.empty()) text += ": " + inner;
  }
  if (tree.element) text += std::string(text.empty() ? "" : ", ") + "[]: " + TreeText(*tree.element);
  if (tree.every_key) text += std::string(text.empty() ? "" : ", ") + "...";
  return text.empty() ? "" : "{" + text + "}";
}

}  // namespace

SnapshotProjection SnapshotProjection::For(
    const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets) {
  auto document = std::make_shared<AccessTree>();
  for (const char* field : {"apiVersion", "kind", "observedAt", "params"})
    document->Field(field).whole = true;
  for (const auto& compiled : rule_sets) Analyze(*compiled, *document);
  document->Normalize();
  SnapshotProjection projection;
  projection.tree_ = std::move(document);
  return projection;
}

Result<Snapshot> SnapshotProjection::Parse(std::string_view json_text) const {
  thread_local simdjson::dom::parser parser;
  thread_local std::string padded;  // simdjson reads up to SIMDJSON_PADDING bytes past the end
  if (parser.capacity() < json_text.size() &&
      parser.allocate(json_text.size(), kMaxDepth) != simdjson::SUCCESS) {
    return ParseSnapshot(json_text);
  }
  padded.reserve(json_text.size() + simdjson::SIMDJSON_PADDING);
  padded.assign(json_text);
  simdjson::dom::element root;
  if (parser.parse(padded.data(), padded.size(), false).get(root) != simdjson::SUCCESS) {
    return ParseSnapshot(json_text);  // its error names the byte, line and column
  }
  ValueBuilder builder;
  auto snapshot = ValidateSnapshot(tree_ ? builder.Project(root, tree_.get()) : builder.Whole(root));
  if (snapshot.ok()) snapshot->digest = "sha256:" + Sha256Hex(json_text);
  return snapshot;
}

std::unique_ptr<AccessTree> SnapshotReads(const CompiledRuleSet& compiled) {
  auto document = std::make_unique<AccessTree>();
  Analyze(compiled, *document);
  document->Normalize();
  return document;
}

std::string SnapshotProjection::DebugString() const { return TreeText(*tree_); }

Result<Plan> PlanProjected(const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                           const Snapshot& projected, std::string_view json_text,
                           const EvaluationOptions& options, const ActionCatalogue* catalogue) {
  auto plan = MakePlan(rule_sets, projected, options, catalogue);
  if (!plan.ok() || (!plan->has_error() && !plan->has_violation())) return plan;
  auto whole = ParseSnapshot(json_text);
  if (!whole.ok()) return whole.error();
  return MakePlan(rule_sets, *whole, options, catalogue);
}

Result<Plan> PlanText(const SnapshotProjection& projection,
                      const std::vector<std::shared_ptr<const CompiledRuleSet>>& rule_sets,
                      std::string_view json_text, const EvaluationOptions& options,
                      const ActionCatalogue* catalogue) {
  auto projected = projection.Parse(json_text);
  if (!projected.ok()) return projected.error();
  return PlanProjected(rule_sets, *projected, json_text, options, catalogue);
}

}  // namespace ruleplane
