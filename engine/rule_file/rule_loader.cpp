#include "engine/rule_file/rule_loader.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "engine/common/semver.h"
#include "engine/common/sha256.h"
#include "engine/common/time_util.h"
#include "engine/expr/budget.h"
#include "engine/rule_file/cell_parser.h"
#include "engine/rule_file/lexical.h"
#include "engine/rule_file/verification_model.h"
#include "engine/rule_file/yaml_reader.h"
#include "engine/rule_file/yaml_value.h"

namespace ruleplane {
namespace {

constexpr std::string_view kApiVersion = "ruleplane.dev/v1";
constexpr std::string_view kKind = "DecisionTable";

constexpr std::string_view kReservedNames[] = {
    "snapshot", "now",      "true",      "false",  "null",     "in",   "as",     "break",
    "const",    "continue", "else",      "for",    "function", "if",   "import", "let",
    "loop",     "package",  "namespace", "return", "var",      "void", "while",
};

bool IsReserved(std::string_view name) {
  return std::find(std::begin(kReservedNames), std::end(kReservedNames), name) != std::end(kReservedNames);
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The trimmed part of `text` in [begin, end), with its offset.
CellPart Trimmed(std::string_view text, size_t begin = 0, size_t end = std::string_view::npos) {
  end = std::min(end, text.size());
  while (begin < end && IsSpace(text[begin])) ++begin;
  while (end > begin && IsSpace(text[end - 1])) --end;
  return CellPart{std::string(text.substr(begin, end - begin)), begin};
}

// Splits `part` at commas outside brackets and string literals.
std::vector<CellPart> SplitTopLevel(const CellPart& part) {
  std::vector<CellPart> pieces;
  const std::string& text = part.text;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '(' || c == '{') {
      ++depth;
    } else if (c == ']' || c == ')' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      CellPart piece = Trimmed(text, start, i);
      pieces.push_back({piece.text, part.offset + piece.offset});
      start = i + 1;
    }
  }
  CellPart piece = Trimmed(text, start);
  pieces.push_back({piece.text, part.offset + piece.offset});
  return pieces;
}

// Offset within `text` of a 1-based line/column.
size_t OffsetOf(std::string_view text, int line, int column) {
  size_t offset = 0;
  for (int current = 1; current < line; ++current) {
    size_t newline = text.find('\n', offset);
    if (newline == std::string_view::npos) return text.size();
    offset = newline + 1;
  }
  return std::min(offset + static_cast<size_t>(std::max(column, 1) - 1), text.size());
}

std::optional<ParamType> ParseParamType(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, ParamType>, 6> kTypes = {{
      {"bool", ParamType::kBool},
      {"int", ParamType::kInt},
      {"double", ParamType::kDouble},
      {"string", ParamType::kString},
      {"duration", ParamType::kDuration},
      {"timestamp", ParamType::kTimestamp},
  }};
  for (const auto& [type_name, type] : kTypes) {
    if (type_name == name) return type;
  }
  return std::nullopt;
}

std::optional<double> ParseDouble(std::string_view text) {
  std::optional<double> value = ParseDecimalFloat(text);
  if (!value || !std::isfinite(*value)) return std::nullopt;
  return value;
}

// A scalar's text as a value of a param type; the error says what was expected.
Result<Value> ConvertParamText(std::string_view text, ParamType type) {
  auto fail = [&](std::string expected) {
    return Error{ErrorCode::kInvalidRuleFile, "'" + std::string(text) + "' is not " + expected, {}};
  };
  switch (type) {
    case ParamType::kBool:
      if (std::optional<bool> b = ParseYamlBool(text)) return Value::Bool(*b);
      return fail("a bool (true or false)");
    case ParamType::kInt:
      if (std::optional<int64_t> i = ParseYamlInt(text)) return Value::Int(*i);
      return fail("an int");
    case ParamType::kDouble:
      if (std::optional<double> d = ParseDouble(text)) return Value::Double(*d);
      return fail("a double");
    case ParamType::kString:
      return Value::String(std::string(text));
    case ParamType::kDuration:
      if (Result<Duration> d = ParseDuration(text)) return Value::MakeDuration(*d);
      return fail("a duration (e.g. 5m, 1h30m, 10s)");
    case ParamType::kTimestamp:
      if (Result<Timestamp> t = ParseRfc3339(text)) return Value::MakeTimestamp(*t);
      return fail("an RFC 3339 timestamp (e.g. 2024-05-01T10:00:00Z)");
  }
  return fail("valid");
}

class RuleFileLoader {
 public:
  RuleFileLoader(std::string_view text, const std::string& file, const ActionCatalogue* catalogue)
      : reader_(text, file, &diagnostics_), catalogue_(catalogue) {
    rule_set_.file = file;
    rule_set_.digest = "sha256:" + Sha256Hex(text);
  }

  RuleLoadResult Load() {
    LoadYamlDocument(reader_, [this](const YAML::Node& root) { LoadDocument(root); });
    if (!HasErrors(diagnostics_)) {
      VerificationModel model = AnalyzeForVerification(rule_set_);
      if (model.opted_in) {
        for (Diagnostic& problem : model.problems) diagnostics_.push_back(std::move(problem));
      }
    }
    std::stable_sort(diagnostics_.begin(), diagnostics_.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return std::pair(a.position.line, a.position.column) < std::pair(b.position.line, b.position.column);
    });
    RuleLoadResult result;
    if (!HasErrors(diagnostics_)) result.rule_set = std::make_shared<const RuleSet>(std::move(rule_set_));
    result.diagnostics = std::move(diagnostics_);
    return result;
  }

 private:
  void LoadDocument(const YAML::Node& root) {
    auto top = reader_.ReadMapping(root, "the rule file", {"apiVersion", "kind", "metadata", "spec"});
    if (!top) return;
    reader_.RequireConstant(*top, "apiVersion", kApiVersion);
    reader_.RequireConstant(*top, "kind", kKind);
    if (const MappingField* field = reader_.Require(*top, "metadata")) LoadMetadata(*field);
    if (const MappingField* field = reader_.Require(*top, "spec")) LoadSpec(*field);
  }

  void LoadMetadata(const MappingField& field) {
    auto metadata = reader_.ReadMapping(field.value, "metadata", {"name", "version", "source"});
    if (!metadata) return;
    if (const MappingField* name = reader_.Require(*metadata, "name")) {
      if (std::optional<std::string> text = reader_.ReadString(*name)) {
        rule_set_.name = *text;
        if (!IsDnsLabel(*text)) {
          reader_.Error(name->value, "invalid name '" + *text +
                                         "': use lower-case letters, digits and '-', at most 63 characters, "
                                         "starting and ending with a letter or digit");
        }
      }
    }
    if (const MappingField* version = reader_.Require(*metadata, "version")) {
      if (std::optional<std::string> text = reader_.ReadString(*version)) {
        rule_set_.version = *text;
        rule_set_.version_position = reader_.PositionOf(version->value);
        if (!IsValidSemver(*text)) {
          reader_.Error(version->value, "invalid version '" + *text +
                                            "': expected a semantic version MAJOR.MINOR.PATCH such as 1.0.0");
        }
      }
    }
    if (const MappingField* source = metadata->Find("source")) {
      rule_set_.source = reader_.ReadString(*source).value_or("");
    }
  }

  void LoadSpec(const MappingField& field) {
    auto spec = reader_.ReadMapping(field.value, "spec",
                                    {"subject", "hitPolicy", "params", "facts", "constraints", "invariants",
                                     "allowGaps", "appliesWhen", "rules", "tests"});
    if (!spec) return;
    if (const MappingField* subject = reader_.Require(*spec, "subject")) {
      if (std::optional<std::string> text = reader_.ReadString(*subject)) {
        rule_set_.subject = *text;
        if (!IsUpperCamel(*text)) {
          reader_.Error(subject->value,
                        "invalid subject '" + *text +
                            "': expected a snapshot kind without 'Snapshot', such as EtcdCluster");
        }
      }
    }
    if (const MappingField* hit_policy = spec->Find("hitPolicy")) LoadHitPolicy(*hit_policy);
    if (const MappingField* params = spec->Find("params")) LoadParams(*params);
    std::vector<Mapping> fact_bodies;
    if (const MappingField* facts = spec->Find("facts")) fact_bodies = DeclareFacts(*facts);
    layout_ =
        FrameLayout{static_cast<int>(rule_set_.facts.size()), static_cast<int>(rule_set_.params.size())};
    for (size_t i = 0; i < fact_bodies.size(); ++i) LoadFactBody(static_cast<int>(i), fact_bodies[i]);
    if (const MappingField* applies_when = spec->Find("appliesWhen")) {
      rule_set_.applies_when = CompileField(*applies_when, Environment(0, true));
    }
    if (const MappingField* constraints = spec->Find("constraints")) {
      rule_set_.constraints = LoadExpressionList(*constraints, "constraint", FullEnvironment());
    }
    if (const MappingField* invariants = spec->Find("invariants")) {
      rule_set_.invariants = LoadExpressionList(*invariants, "invariant", InvariantEnvironment());
    }
    if (const MappingField* allow_gaps = spec->Find("allowGaps")) {
      rule_set_.allow_gaps = reader_.ReadBool(*allow_gaps).value_or(false);
    }
    if (const MappingField* rules = reader_.Require(*spec, "rules")) LoadRules(*rules);
    if (const MappingField* tests = spec->Find("tests")) LoadTests(*tests);
  }

  void LoadHitPolicy(const MappingField& field) {
    static constexpr std::array<std::pair<std::string_view, HitPolicy>, 6> kPolicies = {{
        {"UNIQUE", HitPolicy::kUnique},
        {"ANY", HitPolicy::kAny},
        {"FIRST", HitPolicy::kFirst},
        {"PRIORITY", HitPolicy::kPriority},
        {"RULE_ORDER", HitPolicy::kRuleOrder},
        {"COLLECT", HitPolicy::kCollect},
    }};
    std::optional<std::string> text = reader_.ReadString(field);
    if (!text) return;
    for (const auto& [name, policy] : kPolicies) {
      if (name == *text) {
        rule_set_.hit_policy = policy;
        return;
      }
    }
    reader_.Error(field.value, "unknown hitPolicy '" + *text +
                                   "'; valid policies: UNIQUE, ANY, FIRST, PRIORITY, RULE_ORDER, COLLECT");
  }

  // ---- names ----

  // Checks a param or fact name (identifier, not reserved, not yet declared)
  // and records it.
  bool DeclareName(const MappingField& field, const std::string& name, std::string_view kind) {
    if (!IsIdentifier(name)) {
      reader_.Error(field.value,
                    "invalid " + std::string(kind) + " name '" + name +
                        "': expected an identifier (letters, digits, '_'; not starting with a digit)");
      return false;
    }
    if (IsReserved(name)) {
      reader_.Error(field.value, "'" + name + "' is reserved and cannot be a " + std::string(kind) + " name");
      return false;
    }
    auto [it, inserted] =
        declared_names_.emplace(name, std::pair(std::string(kind), reader_.PositionOf(field.value)));
    if (!inserted) {
      const auto& [first_kind, first_position] = it->second;
      std::string first_line = std::to_string(first_position.line);
      if (first_kind == kind) {
        reader_.Error(field.value, "duplicate " + std::string(kind) + " name '" + name +
                                       "' (first declared at line " + first_line + ")");
      } else {
        reader_.Error(field.value, std::string(kind) + " name '" + name + "' is already declared as a " +
                                       first_kind + " (line " + first_line + ")");
      }
      return false;
    }
    return true;
  }

  // ---- params ----

  void LoadParams(const MappingField& field) {
    if (!reader_.ExpectSequence(field)) return;
    for (const YAML::Node& node : field.value) {
      auto mapping = reader_.ReadMapping(node, "param", {"name", "type", "default", "description"});
      if (!mapping) continue;
      Param param;
      param.position = reader_.PositionOf(node);
      const MappingField* name = reader_.Require(*mapping, "name");
      std::optional<std::string> name_text = name ? reader_.ReadString(*name) : std::nullopt;
      bool declared = name_text && DeclareName(*name, *name_text, "param");
      if (name_text) param.name = *name_text;
      std::optional<ParamType> type;
      if (const MappingField* type_field = reader_.Require(*mapping, "type")) {
        if (std::optional<std::string> type_text = reader_.ReadString(*type_field)) {
          type = ParseParamType(*type_text);
          if (!type) {
            reader_.Error(type_field->value,
                          "unknown type '" + *type_text + "' for param '" + param.name +
                              "'; valid types: bool, int, double, string, duration, timestamp");
          }
        }
      }
      if (const MappingField* default_field = reader_.Require(*mapping, "default"); default_field && type) {
        param.type = *type;
        std::optional<std::string> text = reader_.ScalarText(default_field->value);
        if (!default_field->value.IsScalar()) {
          reader_.Error(reader_.PositionOf(*default_field),
                        "expected a scalar for 'default', got " + reader_.Describe(default_field->value));
        } else if (Result<Value> value = ConvertParamText(*text, *type)) {
          param.default_value = *value;
        } else {
          reader_.Error(default_field->value,
                        "invalid default for param '" + param.name + "': " + value.error().message);
        }
      }
      if (const MappingField* description = mapping->Find("description")) {
        param.description = reader_.ReadString(*description).value_or("");
      }
      // Declared even with a bad default, so that its uses are not errors too.
      if (declared && type) rule_set_.params.push_back(std::move(param));
    }
  }

  // ---- facts ----

  // First pass: names (so that the frame layout is known); returns the
  // mappings of the declared facts, in order, for LoadFactBody.
  std::vector<Mapping> DeclareFacts(const MappingField& field) {
    std::vector<Mapping> bodies;
    if (!reader_.ExpectSequence(field)) return bodies;
    for (const YAML::Node& node : field.value) {
      auto mapping =
          reader_.ReadMapping(node, "fact", {"name", "expr", "domain", "outsideDomain", "description"});
      if (!mapping) continue;
      const MappingField* name = reader_.Require(*mapping, "name");
      reader_.Require(*mapping, "expr");
      std::optional<std::string> name_text = name ? reader_.ReadString(*name) : std::nullopt;
      if (!name_text || !DeclareName(*name, *name_text, "fact")) continue;
      Fact fact;
      fact.name = *name_text;
      fact.position = reader_.PositionOf(node);
      if (const MappingField* description = mapping->Find("description")) {
        fact.description = reader_.ReadString(*description).value_or("");
      }
      rule_set_.facts.push_back(std::move(fact));
      bodies.push_back(std::move(*mapping));
    }
    return bodies;
  }

  void LoadFactBody(int index, const Mapping& mapping) {
    Fact& fact = rule_set_.facts[index];
    if (const MappingField* expr_field = mapping.Find("expr")) {
      if (auto expression = CompileField(*expr_field, Environment(index, true))) {
        fact.expression = std::move(*expression);
      }
    }
    if (const MappingField* domain = mapping.Find("domain")) LoadDomain(index, *domain);
    if (const MappingField* outside = mapping.Find("outsideDomain")) {
      const std::optional<std::string> text = reader_.ReadString(*outside);
      if (!mapping.Find("domain")) {
        reader_.Error(outside->key_node, "outsideDomain needs a domain");
      } else if (text && (*text == "error" || *text == "plan")) {
        fact.plan_outside_domain = *text == "plan";
      } else if (text) {
        reader_.Error(outside->value, "invalid outsideDomain '" + *text + "'; expected error or plan");
      }
    }
  }

  void LoadDomain(int index, const MappingField& field) {
    Domain& domain = rule_set_.facts[index].domain;
    std::optional<std::string> text = reader_.ReadString(field);
    if (!text) return;
    domain.text = *text;
    domain.position = reader_.PositionOf(field.value);
    CellPart whole = Trimmed(*text);
    size_t word_end = 0;
    while (word_end < whole.text.size() && !IsSpace(whole.text[word_end]) && whole.text[word_end] != '[') {
      ++word_end;
    }
    std::string word = whole.text.substr(0, word_end);
    CellPart rest = Trimmed(*text, whole.offset + word_end);
    if (word == "bool" && rest.text.empty()) {
      domain.kind = Domain::Kind::kBool;
    } else if (word == "enum") {
      LoadEnumDomain(field, rest, domain);
    } else if (word == "int") {
      LoadIntDomain(index, field, rest, domain);
    } else {
      reader_.Error(field.value,
                    "invalid domain '" + *text + "'; expected bool, enum [\"a\", \"b\"] or int [low, high]");
    }
  }

  void LoadEnumDomain(const MappingField& field, const CellPart& list, Domain& domain) {
    if (list.text.empty() || list.text[0] != '[') {
      reader_.Error(reader_.LocateInScalar(field.value, list.offset),
                    "enum domain needs a list of constants, e.g. enum [\"a\", \"b\"]");
      return;
    }
    expr::Environment no_names;
    auto expression = CompilePart(field.value, list, no_names);
    if (!expression) return;
    const std::optional<Value>& constant = expression->program->constant();
    if (!constant || !constant->is_list() || constant->list_value().empty()) {
      reader_.Error(expression->position, "enum domain needs a non-empty list of constants");
      return;
    }
    for (const Value& value : constant->list_value()) {
      if (!value.is_bool() && !value.is_int() && !value.is_double() && !value.is_string()) {
        reader_.Error(expression->position,
                      "enum values must be bools, numbers or strings, got " + value.DebugString());
        return;
      }
      if (std::find(domain.enum_values.begin(), domain.enum_values.end(), value) !=
          domain.enum_values.end()) {
        reader_.Error(expression->position, "duplicate enum value " + value.DebugString());
        return;
      }
      domain.enum_values.push_back(value);
    }
    domain.kind = Domain::Kind::kEnum;
  }

  void LoadIntDomain(int index, const MappingField& field, const CellPart& bounds, Domain& domain) {
    if (bounds.text.size() < 2 || bounds.text.front() != '[' || bounds.text.back() != ']') {
      reader_.Error(reader_.LocateInScalar(field.value, bounds.offset),
                    "int domain needs inclusive bounds, e.g. int [0, 7]");
      return;
    }
    CellPart inner = Trimmed(bounds.text, 1, bounds.text.size() - 1);
    inner.offset += bounds.offset;
    std::vector<CellPart> parts = SplitTopLevel(inner);
    if (parts.size() != 2 || parts[0].text.empty() || parts[1].text.empty()) {
      reader_.Error(reader_.LocateInScalar(field.value, bounds.offset),
                    "int domain needs exactly two bounds, e.g. int [0, 7]");
      return;
    }
    expr::Environment env = Environment(index, false);
    auto low = CompilePart(field.value, parts[0], env);
    auto high = CompilePart(field.value, parts[1], env);
    if (!low || !high) return;
    for (const Expression* bound : {&*low, &*high}) {
      const std::optional<Value>& constant = bound->program->constant();
      if (constant && !constant->is_int()) {
        reader_.Error(bound->position, "domain bound must be an int, got " + constant->DebugString());
        return;
      }
    }
    const std::optional<Value>& low_value = low->program->constant();
    const std::optional<Value>& high_value = high->program->constant();
    if (low_value && high_value && low_value->int_value() > high_value->int_value()) {
      reader_.Error(low->position, "empty domain: lower bound " + low_value->DebugString() +
                                       " is greater than upper bound " + high_value->DebugString());
      return;
    }
    domain.kind = Domain::Kind::kInt;
    domain.low = std::move(low);
    domain.high = std::move(high);
  }

  // ---- expressions ----

  // Facts [0, visible_facts), params, and `snapshot` / `now` when asked.
  expr::Environment Environment(int visible_facts, bool with_snapshot) const {
    expr::Environment env;
    for (int i = 0; i < visible_facts; ++i) env.Declare(rule_set_.facts[i].name, layout_.fact_slot(i));
    for (size_t i = 0; i < rule_set_.params.size(); ++i) {
      env.Declare(rule_set_.params[i].name, layout_.param_slot(static_cast<int>(i)));
    }
    if (with_snapshot) {
      env.Declare("snapshot", layout_.snapshot_slot());
      env.Declare("now", layout_.now_slot());
    }
    env.set_first_free_slot(layout_.fixed_slots());
    return env;
  }

  expr::Environment FullEnvironment() const {
    return Environment(static_cast<int>(rule_set_.facts.size()), true);
  }

  // Everything, and the decision: `rules`, `actions`, `steps`. Declared first,
  // so that a fact or param of the same name shadows them.
  expr::Environment InvariantEnvironment() const {
    expr::Environment env;
    env.Declare("rules", layout_.decision_rules_slot());
    env.Declare("actions", layout_.decision_actions_slot());
    env.Declare("steps", layout_.decision_steps_slot());
    const expr::Environment full = FullEnvironment();
    for (const auto& [name, slot] : full.names()) env.Declare(name, slot);
    env.set_first_free_slot(layout_.invariant_fixed_slots());
    return env;
  }

  // Compiles `part` of the scalar `node`; errors point into the file.
  std::optional<Expression> CompilePart(const YAML::Node& node, const CellPart& part,
                                        const expr::Environment& env) {
    Expression expression{part.text, reader_.LocateInScalar(node, part.offset), nullptr};
    if (part.text.empty()) {
      reader_.Error(expression.position, "expected an expression");
      return std::nullopt;
    }
    Result<std::shared_ptr<const expr::Program>> program = expr::Compile(part.text, env, {}, &fold_budget_);
    if (!program) {
      const Error& error = program.error();
      SourcePosition position = expression.position;
      if (error.position.known()) {
        size_t offset = OffsetOf(part.text, error.position.line, error.position.column);
        position = reader_.LocateInScalar(node, part.offset + offset);
      }
      reader_.Error(position, error.message);
      return std::nullopt;
    }
    expression.program = std::move(program).value();
    return expression;
  }

  // A whole scalar (trimmed) as an expression.
  std::optional<Expression> CompileNode(const YAML::Node& node, const SourcePosition& position,
                                        const expr::Environment& env) {
    if (!node.IsScalar()) {
      reader_.Error(position, "expected an expression, got " + reader_.Describe(node));
      return std::nullopt;
    }
    return CompilePart(node, Trimmed(node.Scalar()), env);
  }

  std::optional<Expression> CompileField(const MappingField& field, const expr::Environment& env) {
    if (!field.value.IsScalar()) {
      reader_.Error(reader_.PositionOf(field),
                    "expected an expression for '" + field.key + "', got " + reader_.Describe(field.value));
      return std::nullopt;
    }
    return CompilePart(field.value, Trimmed(field.value.Scalar()), env);
  }

  std::vector<Expression> LoadExpressionList(const MappingField& field, std::string_view what,
                                             const expr::Environment& env) {
    std::vector<Expression> expressions;
    if (!reader_.ExpectSequence(field)) return expressions;
    for (const YAML::Node& node : field.value) {
      if (!node.IsScalar()) {
        reader_.Error(node, "expected a " + std::string(what) + " expression, got " + reader_.Describe(node));
        continue;
      }
      if (auto expression = CompileNode(node, reader_.PositionOf(node), env)) {
        expressions.push_back(std::move(*expression));
      }
    }
    return expressions;
  }

  // ---- rules ----

  void LoadRules(const MappingField& field) {
    if (!reader_.ExpectSequence(field)) return;
    std::map<std::string, int> first_line;
    for (const YAML::Node& node : field.value) {
      auto mapping = reader_.ReadMapping(
          node, "rule", {"id", "description", "source", "priority", "when", "condition", "then"});
      if (!mapping) continue;
      Rule rule;
      rule.position = reader_.PositionOf(node);
      if (const MappingField* id = reader_.Require(*mapping, "id")) {
        if (std::optional<std::string> text = reader_.ReadString(*id)) {
          rule.id = *text;
          if (!IsDnsLabel(*text)) {
            reader_.Error(id->value, "invalid rule id '" + *text +
                                         "': use lower-case letters, digits and '-', e.g. quorum-lost");
          }
          auto [it, inserted] = first_line.emplace(*text, reader_.PositionOf(id->value).line);
          if (!inserted) {
            reader_.Error(id->value, "duplicate rule id '" + *text + "' (first at line " +
                                         std::to_string(it->second) + ")");
          }
          rule_ids_.push_back(*text);
        }
      }
      if (const MappingField* description = mapping->Find("description")) {
        rule.description = reader_.ReadString(*description).value_or("");
      }
      if (const MappingField* source = mapping->Find("source")) {
        rule.source = reader_.ReadString(*source).value_or("");
      }
      if (const MappingField* priority = mapping->Find("priority")) {
        if (std::optional<int64_t> value = reader_.ReadInt(*priority)) {
          if (*value < std::numeric_limits<int>::min() || *value > std::numeric_limits<int>::max()) {
            reader_.Error(priority->value, "priority " + std::to_string(*value) + " is out of range");
          } else {
            rule.priority = static_cast<int>(*value);
          }
        }
      }
      if (const MappingField* when = mapping->Find("when")) LoadWhen(*when, rule);
      if (const MappingField* condition = mapping->Find("condition")) {
        rule.condition = CompileField(*condition, FullEnvironment());
      }
      if (const MappingField* then = mapping->Find("then")) {
        if (reader_.ExpectSequence(*then)) {
          for (const YAML::Node& action : then->value) {
            if (auto spec = LoadAction(action)) rule.then.push_back(std::move(*spec));
          }
        }
      }
      rule_set_.rules.push_back(std::move(rule));
    }
  }

  void LoadWhen(const MappingField& field, Rule& rule) {
    auto when = reader_.ReadOpenMapping(field.value, "when");
    if (!when) return;
    for (const MappingField& column : when->fields) {
      int fact = rule_set_.FindFact(column.key);
      if (fact < 0) {
        std::string message;
        if (rule_set_.FindParam(column.key) >= 0) {
          message = "'" + column.key + "' is a param, not a fact; test params in 'condition'";
        } else {
          message = "unknown fact '" + column.key + "'";
          std::vector<std::string> names;
          for (const Fact& f : rule_set_.facts) names.push_back(f.name);
          std::string closest = ClosestName(column.key, names);
          if (!closest.empty()) message += " (did you mean '" + closest + "'?)";
        }
        reader_.Error(column.key_node, message);
        continue;
      }
      if (auto cell = LoadCell(fact, column); cell && cell->kind != Cell::Kind::kAny) {
        rule.cells.push_back(std::move(*cell));
      }
    }
  }

  std::optional<Cell> LoadCell(int fact, const MappingField& column) {
    const YAML::Node& node = column.value;
    std::optional<std::string> text = reader_.ScalarText(node);
    if (!text) {
      reader_.Error(node, "expected a cell such as '> 0', '[1..3]' or '-' for fact '" + column.key +
                              "', got " + reader_.Describe(node));
      return std::nullopt;
    }
    Cell cell;
    cell.fact = fact;
    cell.text = *text;
    cell.position = reader_.PositionOf(column);
    Result<CellSyntax> syntax = ParseCellSyntax(*text);
    if (!syntax) {
      SourcePosition position =
          node.IsNull() ? cell.position : reader_.LocateInScalar(node, syntax.error().position.column - 1);
      reader_.Error(position, syntax.error().message);
      return std::nullopt;
    }
    expr::Environment env = FullEnvironment();
    switch (syntax->form) {
      case CellSyntax::Form::kAny:
        cell.kind = Cell::Kind::kAny;
        return cell;
      case CellSyntax::Form::kCompare:
        cell.kind = Cell::Kind::kCompare;
        cell.op = syntax->op;
        cell.operand = CompilePart(node, syntax->operand, env);
        if (!cell.operand) return std::nullopt;
        return cell;
      case CellSyntax::Form::kIn:
        cell.kind = Cell::Kind::kIn;
        cell.operand = CompilePart(node, syntax->operand, env);
        if (!cell.operand) return std::nullopt;
        return cell;
      case CellSyntax::Form::kRange:
        cell.kind = Cell::Kind::kRange;
        cell.low = CompilePart(node, syntax->low, env);
        cell.high = CompilePart(node, syntax->high, env);
        cell.low_inclusive = syntax->low_inclusive;
        cell.high_inclusive = syntax->high_inclusive;
        if (!cell.low || !cell.high) return std::nullopt;
        return cell;
      case CellSyntax::Form::kBare: {
        cell.operand = CompilePart(node, syntax->operand, env);
        if (!cell.operand) return std::nullopt;
        const std::vector<int>& slots = cell.operand->program->referenced_slots();
        bool names_column = std::find(slots.begin(), slots.end(), layout_.fact_slot(fact)) != slots.end();
        cell.kind = names_column ? Cell::Kind::kExpression : Cell::Kind::kCompare;
        cell.op = CompareOp::kEq;
        return cell;
      }
    }
    return std::nullopt;
  }

  // ---- actions ----

  std::optional<ActionSpec> LoadAction(const YAML::Node& node) {
    auto mapping = reader_.ReadMapping(node, "action", {"action", "forEach", "as", "target", "params"});
    if (!mapping) return std::nullopt;
    ActionSpec spec;
    spec.position = reader_.PositionOf(node);
    spec.as = "item";
    bool ok = true;
    const MappingField* action = reader_.Require(*mapping, "action");
    if (std::optional<std::string> name = action ? reader_.ReadString(*action) : std::nullopt) {
      spec.action = *name;
    } else {
      ok = false;
    }
    expr::Environment env = FullEnvironment();
    const MappingField* for_each = mapping->Find("forEach");
    if (for_each) {
      spec.for_each = CompileField(*for_each, env);
      ok = ok && spec.for_each.has_value();
    }
    if (const MappingField* as = mapping->Find("as")) {
      if (!for_each) {
        reader_.Error(as->key_node,
                      "'as' names the loop variable of 'forEach'; this action has no 'forEach'");
        ok = false;
      } else if (std::optional<std::string> name = reader_.ReadString(*as)) {
        spec.as = *name;
        ok = CheckLoopVariable(*name, reader_.PositionOf(as->value)) && ok;
      } else {
        ok = false;
      }
    } else if (for_each) {
      ok = CheckLoopVariable(spec.as, reader_.PositionOf(for_each->key_node)) && ok;
    }
    if (for_each) {
      env.Declare(spec.as, layout_.fixed_slots());
      env.set_first_free_slot(layout_.fixed_slots() + 1);
    }
    if (const MappingField* target = mapping->Find("target")) {
      spec.target = CompileField(*target, env);
      ok = ok && spec.target.has_value();
    }
    std::optional<Mapping> params;
    const MappingField* params_field = mapping->Find("params");
    if (params_field != nullptr) {
      params = reader_.ReadOpenMapping(params_field->value, "action params");
      ok = ok && params.has_value();
      if (params) {
        for (const MappingField& param : params->fields) {
          std::optional<Expression> value = CompileField(param, env);
          if (!value) {
            ok = false;
            continue;
          }
          spec.params.push_back({param.key, std::move(*value)});
        }
      }
    }
    if (catalogue_ != nullptr && action && !spec.action.empty()) {
      ok = CheckAgainstCatalogue(spec, *action, params, params_field) && ok;
    }
    if (!ok) return std::nullopt;
    return spec;
  }

  bool CheckLoopVariable(const std::string& name, const SourcePosition& position) {
    std::string shadowed;
    if (!IsIdentifier(name) || IsReserved(name)) {
      if (name != "snapshot" && name != "now") {
        reader_.Error(position, "invalid loop variable name '" + name + "': expected an identifier");
        return false;
      }
      shadowed = "'" + name + "'";
    } else if (rule_set_.FindFact(name) >= 0) {
      shadowed = "fact '" + name + "'";
    } else if (rule_set_.FindParam(name) >= 0) {
      shadowed = "param '" + name + "'";
    }
    if (shadowed.empty()) return true;
    reader_.Error(position,
                  "loop variable '" + name + "' shadows " + shadowed + "; choose another name with 'as'");
    return false;
  }

  // `params` holds every parameter written; spec.params only those that compiled.
  bool CheckAgainstCatalogue(const ActionSpec& spec, const MappingField& action,
                             const std::optional<Mapping>& params, const MappingField* params_field) {
    const ActionDefinition* definition = catalogue_->Find(spec.action);
    if (definition == nullptr) {
      std::string message = "unknown action '" + spec.action + "'";
      std::vector<std::string> names;
      for (const ActionDefinition& known : catalogue_->actions) names.push_back(known.name);
      std::string closest = ClosestName(spec.action, names);
      if (!closest.empty()) message += " (did you mean '" + closest + "'?)";
      reader_.Error(action.value, message);
      return false;
    }
    bool ok = true;
    std::vector<std::string> written;
    for (const MappingField& field : params ? params->fields : std::vector<MappingField>{}) {
      written.push_back(field.key);
      if (definition->FindParam(field.key) != nullptr) continue;
      std::vector<std::string> names;
      for (const ActionParamSpec& known : definition->params) names.push_back(known.name);
      std::string message = "action '" + spec.action + "' has no parameter '" + field.key + "'";
      std::string closest = ClosestName(field.key, names);
      if (!closest.empty()) message += " (did you mean '" + closest + "'?)";
      reader_.Error(field.key_node,
                    message + "; its parameters: " + (names.empty() ? "none" : JoinNames(names)));
      ok = false;
    }
    for (const ActionParam& param : spec.params) {
      const ActionParamSpec* param_spec = definition->FindParam(param.name);
      if (param_spec == nullptr) continue;
      const std::optional<Value>& constant = param.value.program->constant();
      if (constant && !ValueHasParamType(*constant, param_spec->type)) {
        reader_.Error(param.value.position, "parameter '" + param.name + "' of action '" + spec.action +
                                                "' must be " + param_spec->type + ", got " +
                                                constant->TypeName() + " " + constant->DebugString());
        ok = false;
      }
    }
    for (const ActionParamSpec& param_spec : definition->params) {
      if (!param_spec.required) continue;
      if (std::find(written.begin(), written.end(), param_spec.name) == written.end()) {
        reader_.Error(reader_.PositionOf(params_field != nullptr ? params_field->key_node : action.key_node),
                      "action '" + spec.action + "' requires parameter '" + param_spec.name + "'");
        ok = false;
      }
    }
    return ok;
  }

  // ---- tests ----

  void LoadTests(const MappingField& field) {
    if (!reader_.ExpectSequence(field)) return;
    std::map<std::string, int> first_line;
    for (const YAML::Node& node : field.value) {
      auto mapping =
          reader_.ReadMapping(node, "test", {"name", "snapshot", "snapshotFile", "params", "expect"});
      if (!mapping) continue;
      RuleTest test;
      test.position = reader_.PositionOf(node);
      if (const MappingField* name = reader_.Require(*mapping, "name")) {
        if (std::optional<std::string> text = reader_.ReadString(*name)) {
          test.name = *text;
          auto [it, inserted] = first_line.emplace(*text, reader_.PositionOf(name->value).line);
          if (!inserted) {
            reader_.Error(name->value, "duplicate test name '" + *text + "' (first at line " +
                                           std::to_string(it->second) + ")");
          }
        }
      }
      const MappingField* snapshot = mapping->Find("snapshot");
      const MappingField* snapshot_file = mapping->Find("snapshotFile");
      if (snapshot == nullptr && snapshot_file == nullptr) {
        reader_.Error(node, "test '" + test.name + "' needs 'snapshot' (inline) or 'snapshotFile'");
      } else if (snapshot != nullptr && snapshot_file != nullptr) {
        reader_.Error(snapshot_file->key_node,
                      "test '" + test.name + "' has both 'snapshot' and 'snapshotFile'; give only one");
      }
      if (snapshot != nullptr) LoadInlineSnapshot(*snapshot, test);
      if (snapshot_file != nullptr) {
        test.snapshot_file = reader_.ReadString(*snapshot_file).value_or("");
        if (test.snapshot_file.empty() && snapshot_file->value.IsScalar()) {
          reader_.Error(snapshot_file->value, "'snapshotFile' is empty");
        }
      }
      if (const MappingField* params = mapping->Find("params")) LoadTestParams(*params, test);
      if (const MappingField* expect = reader_.Require(*mapping, "expect")) LoadExpect(*expect, test);
      rule_set_.tests.push_back(std::move(test));
    }
  }

  void LoadInlineSnapshot(const MappingField& field, RuleTest& test) {
    if (!field.value.IsMap()) {
      reader_.Error(
          reader_.PositionOf(field),
          "expected a mapping (a snapshot document) for 'snapshot', got " + reader_.Describe(field.value));
      return;
    }
    Result<Value> value = YamlToValue(field.value, reader_.file(), yaml_expansion_);
    if (!value) {
      reader_.Error(value.error().position, "invalid snapshot: " + value.error().message);
      return;
    }
    test.snapshot = std::move(value).value();
  }

  void LoadTestParams(const MappingField& field, RuleTest& test) {
    auto params = reader_.ReadOpenMapping(field.value, "test params");
    if (!params) return;
    for (const MappingField& param : params->fields) {
      int index = rule_set_.FindParam(param.key);
      if (index < 0) {
        std::vector<std::string> names;
        for (const Param& p : rule_set_.params) names.push_back(p.name);
        std::string message = "unknown param '" + param.key + "'";
        std::string closest = ClosestName(param.key, names);
        if (!closest.empty()) message += " (did you mean '" + closest + "'?)";
        reader_.Error(param.key_node, message);
        continue;
      }
      const Param& declared = rule_set_.params[index];
      if (!param.value.IsScalar()) {
        reader_.Error(reader_.PositionOf(param), "expected a " + std::string(ParamTypeName(declared.type)) +
                                                     " for param '" + param.key + "', got " +
                                                     reader_.Describe(param.value));
        continue;
      }
      Result<Value> value = ConvertParamText(param.value.Scalar(), declared.type);
      if (!value) {
        reader_.Error(param.value, "invalid value for param '" + param.key + "': " + value.error().message);
        continue;
      }
      test.params.emplace_back(param.key, std::move(value).value());
    }
  }

  void LoadExpect(const MappingField& field, RuleTest& test) {
    auto expect = reader_.ReadMapping(field.value, "expect", {"rules", "steps", "error"});
    if (!expect) return;
    if (expect->fields.empty()) {
      reader_.Error(reader_.PositionOf(field), "'expect' needs at least one of 'rules', 'steps', 'error'");
    }
    if (const MappingField* rules = expect->Find("rules"); rules && reader_.ExpectSequence(*rules)) {
      std::vector<std::string> ids;
      for (const YAML::Node& id : rules->value) {
        if (!id.IsScalar()) {
          reader_.Error(id, "expected a rule id, got " + reader_.Describe(id));
          continue;
        }
        if (std::find(rule_ids_.begin(), rule_ids_.end(), id.Scalar()) == rule_ids_.end()) {
          std::string message = "unknown rule '" + id.Scalar() + "' in expect.rules";
          std::string closest = ClosestName(id.Scalar(), rule_ids_);
          if (!closest.empty()) message += " (did you mean '" + closest + "'?)";
          reader_.Error(id, message);
        }
        ids.push_back(id.Scalar());
      }
      test.expect_rules = std::move(ids);
    }
    if (const MappingField* steps = expect->Find("steps"); steps && reader_.ExpectSequence(*steps)) {
      std::vector<ExpectedStep> expected;
      for (const YAML::Node& node : steps->value) {
        if (auto step = LoadExpectedStep(node)) expected.push_back(std::move(*step));
      }
      test.expect_steps = std::move(expected);
    }
    if (const MappingField* error = expect->Find("error")) test.expect_error = reader_.ReadString(*error);
  }

  std::optional<ExpectedStep> LoadExpectedStep(const YAML::Node& node) {
    auto mapping = reader_.ReadMapping(node, "expected step", {"action", "target", "params"});
    if (!mapping) return std::nullopt;
    ExpectedStep step;
    if (const MappingField* action = reader_.Require(*mapping, "action")) {
      step.action = reader_.ReadString(*action).value_or("");
      if (catalogue_ != nullptr && !step.action.empty() && catalogue_->Find(step.action) == nullptr) {
        reader_.Error(action->value, "unknown action '" + step.action + "'");
      }
    }
    if (const MappingField* target = mapping->Find("target")) step.target = reader_.ReadString(*target);
    if (const MappingField* params = mapping->Find("params")) {
      if (!params->value.IsMap()) {
        reader_.Error(reader_.PositionOf(*params),
                      "expected a mapping for 'params', got " + reader_.Describe(params->value));
      } else if (Result<Value> value = YamlToValue(params->value, reader_.file(), yaml_expansion_)) {
        step.params = std::move(value).value();
      } else {
        reader_.Error(value.error().position, "invalid params: " + value.error().message);
      }
    }
    return step;
  }

  Diagnostics diagnostics_;
  YamlReader reader_;
  expr::Budget fold_budget_;      // for folding the constant parts of every expression of the file
  YamlExpansion yaml_expansion_;  // for the YAML data of every test of the file
  const ActionCatalogue* catalogue_;
  RuleSet rule_set_;
  FrameLayout layout_;
  std::map<std::string, std::pair<std::string, SourcePosition>> declared_names_;  // name -> param/fact, where
  std::vector<std::string> rule_ids_;
};

}  // namespace

RuleLoadResult LoadRuleFile(std::string_view yaml_text, const std::string& file_name,
                            const ActionCatalogue* catalogue) {
  return RuleFileLoader(yaml_text, file_name, catalogue).Load();
}

}  // namespace ruleplane
