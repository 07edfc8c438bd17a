// ruleplane explain: why each rule matched or did not, cell by cell.
#include <algorithm>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_format.h"
#include "cli/snapshot_input.h"
#include "engine/common/json_value.h"
#include "engine/expr/budget.h"
#include "engine/plan/plan.h"

namespace ruleplane::cli {
namespace {

constexpr const char* kExplainUsage =
    R"(usage: ruleplane explain [--rules PATH|NAME@VERSION]... [--param NAME=VALUE]... [--budget N] SNAPSHOT.json
                         [--rule ID | --fact NAME] [-o table|json|yaml]

Evaluates the snapshot ("-" reads standard input) against every rule file whose
spec.subject matches its kind, as plan does, and prints for each rule file its
params, its facts and every rule with its cells: the value each cell saw and
whether it passed. Changes nothing.

In the table (the default), each value takes one line: a list of objects shows
as its count and names ([3 objects: etcd-main-0, etcd-main-1, etcd-main-2];
metadata.name, name or type), a map as its keys, a long string cut with "...".

  --rule ID     only that rule's cells (the params and facts are still listed)
  --fact NAME   only that fact's whole value, as JSON (YAML with -o yaml); a
                fact that several rule files declare must have one value in
                all of them, else choose the file with --rules
  -o json|yaml  everything, each value whole:
                  snapshot: {kind, observedAt}
                  ruleSets: - {name, version, file, hitPolicy, params: {NAME: value},
                               facts: {NAME: value}, selected: [rule ids],
                               violation: "<message>" (only on a UNIQUE/ANY violation),
                               rules: - {id, line, description,
                                         status: selected | matched | not matched,
                                         cells: - {fact, cell, value, passed, error}
                                                - {condition, passed, error}}}
                ("error" only where a cell could not be evaluated)

Exit codes: 0 explained, 1 rule files with errors or an evaluation error,
2 bad usage (an unknown rule or fact), an unreadable or malformed snapshot.
)";

// About the width of a line of the table.
constexpr size_t kLineWidth = 120;

bool Continuation(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

// `text` in at most `width` bytes: cut with "..." when longer, never inside a UTF-8 character.
std::string Cut(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  size_t end = width > 3 ? width - 3 : 0;
  while (end > 0 && Continuation(text[end])) --end;
  return text.substr(0, end) + "...";
}

// What a Kubernetes object, a member entry or a condition is called:
// metadata.name, else name, else type.
std::string ObjectName(const Value& object) {
  if (const Value* metadata = object.Find("metadata")) {
    if (const Value* name = metadata->Find("name"); name != nullptr && name->is_string())
      return name->string_value();
  }
  for (const char* key : {"name", "type"}) {
    if (const Value* name = object.Find(key); name != nullptr && name->is_string())
      return name->string_value();
  }
  return "";
}

// `head`, then as many of `items` as fit in `width` (", "-separated, "..." for the rest), then `close`.
std::string Listing(const std::string& head, const std::vector<std::string>& items, const std::string& close,
                    size_t width) {
  std::string text = head;
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string next = (i > 0 ? ", " : "") + items[i];
    const size_t room_for_more = i + 1 < items.size() ? 5 : 0;
    if (text.size() + next.size() + room_for_more + close.size() > width) {
      text += i > 0 ? ", ..." : "...";
      break;
    }
    text += next;
  }
  return text + close;
}

// A value in one line of about `width` bytes.
std::string Summary(const Value& value, size_t width) {
  std::string whole = value.DebugString();
  if (whole.size() <= width) return whole;
  if (value.is_list()) {
    const Value::List& items = value.list_value();
    const std::string count = std::to_string(items.size());
    if (std::all_of(items.begin(), items.end(), [](const Value& item) { return item.is_map(); })) {
      std::vector<std::string> names;
      bool named = false;
      for (const Value& item : items) {
        names.push_back(ObjectName(item));
        named = named || !names.back().empty();
        if (names.back().empty()) names.back() = "?";
      }
      const std::string head = "[" + count + (items.size() == 1 ? " object" : " objects");
      return named ? Listing(head + ": ", names, "]", width) : head + "]";
    }
    std::vector<std::string> texts;
    for (const Value& item : items) {
      texts.push_back(Cut(item.DebugString(), width));
      if (texts.size() * 2 > width) break;  // more than can be shown
    }
    return Listing("[" + count + " items: ", texts, "]", width);
  }
  if (value.is_map()) {
    std::vector<std::string> keys;
    for (const auto& [key, item] : value.map_value())
      keys.push_back(key.is_string() ? key.string_value() : key.DebugString());
    return Listing("{" + std::to_string(keys.size()) + (keys.size() == 1 ? " key: " : " keys: "), keys, "}",
                   width);
  }
  return Cut(whole, width);
}

// `name = value` in a line of about kLineWidth, after `indent`.
std::string NamedSummary(const std::string& indent, const std::string& name, const Value& value) {
  const size_t used = indent.size() + name.size() + 3;
  return indent + name + " = " + Summary(value, used + 40 < kLineWidth ? kLineWidth - used : 40) + "\n";
}

// One rule set's facts and decision over the snapshot.
struct Explained {
  const CompiledRuleSet* compiled = nullptr;
  expr::Frame frame;
  Decision decision;
};

bool Selected(const Decision& decision, int rule) {
  return std::find(decision.selected.begin(), decision.selected.end(), rule) != decision.selected.end();
}

void ExplainAsTable(const Explained& explained, const std::string& only_rule, std::ostream& out) {
  const RuleSet& rule_set = explained.compiled->rule_set();
  const FrameLayout& layout = explained.compiled->layout();
  const Decision& decision = explained.decision;
  out << rule_set.id() << " (" << rule_set.file << "), hit policy " << HitPolicyName(rule_set.hit_policy)
      << "\n";
  if (!decision.applies) {
    out << "  does not apply: appliesWhen " << rule_set.applies_when->text << " is false\n";
    return;
  }
  out << "  params:\n";
  for (size_t i = 0; i < rule_set.params.size(); ++i)
    out << NamedSummary("    ", rule_set.params[i].name, explained.frame[layout.param_slot(i)]);
  out << "  facts:\n";
  for (size_t i = 0; i < rule_set.facts.size(); ++i)
    out << NamedSummary("    ", rule_set.facts[i].name, explained.frame[layout.fact_slot(i)]);
  if (decision.violation) out << "  VIOLATION: " << decision.violation->message << "\n";
  for (const RuleTrace& trace : decision.trace) {
    const Rule& rule = rule_set.rules[trace.rule];
    if (!only_rule.empty() && rule.id != only_rule) continue;
    out << "\n  rule " << rule.id << " (line " << rule.position.line << "): "
        << (Selected(decision, trace.rule) ? "SELECTED"
            : trace.matched                ? "matched, not selected by the hit policy"
                                           : "not matched")
        << "\n";
    if (!rule.description.empty()) out << "    " << rule.description << "\n";
    for (const CellTrace& cell : trace.cells) {
      out << "    " << (cell.passed ? "pass " : "FAIL ");
      if (cell.fact >= 0) {
        const std::string& fact = rule_set.facts[cell.fact].name;
        out << fact << ": " << cell.text << "   (" << fact << " = " << Summary(cell.fact_value, 60) << ")";
      } else {
        out << "condition: " << cell.text;
      }
      if (!cell.error.empty()) out << "   error: " << cell.error;
      out << "\n";
    }
    if (trace.cells.empty()) out << "    (no cells: matches every snapshot)\n";
  }
}

Value Key(const char* key) { return Value::String(key); }

Value ExplainAsValue(const Explained& explained, const std::string& only_rule) {
  const RuleSet& rule_set = explained.compiled->rule_set();
  const FrameLayout& layout = explained.compiled->layout();
  const Decision& decision = explained.decision;
  if (!decision.applies) {
    return Value::MakeMap({{Key("name"), Value::String(rule_set.name)},
                           {Key("version"), Value::String(rule_set.version)},
                           {Key("file"), Value::String(rule_set.file)},
                           {Key("applies"), Value::Bool(false)},
                           {Key("appliesWhen"), Value::String(rule_set.applies_when->text)}});
  }
  Value::Map params, facts;
  for (size_t i = 0; i < rule_set.params.size(); ++i)
    params.emplace_back(Value::String(rule_set.params[i].name), explained.frame[layout.param_slot(i)]);
  for (size_t i = 0; i < rule_set.facts.size(); ++i)
    facts.emplace_back(Value::String(rule_set.facts[i].name), explained.frame[layout.fact_slot(i)]);
  Value::List selected, rules;
  for (const int rule : decision.selected) selected.push_back(Value::String(rule_set.rules[rule].id));
  for (const RuleTrace& trace : decision.trace) {
    const Rule& rule = rule_set.rules[trace.rule];
    if (!only_rule.empty() && rule.id != only_rule) continue;
    Value::List cells;
    for (const CellTrace& cell : trace.cells) {
      Value::Map entry;
      if (cell.fact >= 0) {
        entry.emplace_back(Key("fact"), Value::String(rule_set.facts[cell.fact].name));
        entry.emplace_back(Key("cell"), Value::String(cell.text));
        entry.emplace_back(Key("value"), cell.fact_value);
      } else {
        entry.emplace_back(Key("condition"), Value::String(cell.text));
      }
      entry.emplace_back(Key("passed"), Value::Bool(cell.passed));
      if (!cell.error.empty()) entry.emplace_back(Key("error"), Value::String(cell.error));
      cells.push_back(Value::MakeMap(std::move(entry)));
    }
    Value::Map entry = {{Key("id"), Value::String(rule.id)}, {Key("line"), Value::Int(rule.position.line)}};
    if (!rule.description.empty()) entry.emplace_back(Key("description"), Value::String(rule.description));
    entry.emplace_back(Key("status"), Value::String(Selected(decision, trace.rule) ? "selected"
                                                    : trace.matched                ? "matched"
                                                                                   : "not matched"));
    entry.emplace_back(Key("cells"), Value::MakeList(std::move(cells)));
    rules.push_back(Value::MakeMap(std::move(entry)));
  }
  Value::Map result = {{Key("name"), Value::String(rule_set.name)},
                       {Key("version"), Value::String(rule_set.version)},
                       {Key("file"), Value::String(rule_set.file)},
                       {Key("hitPolicy"), Value::String(HitPolicyName(rule_set.hit_policy))},
                       {Key("params"), Value::MakeMap(std::move(params))},
                       {Key("facts"), Value::MakeMap(std::move(facts))},
                       {Key("selected"), Value::MakeList(std::move(selected))}};
  if (decision.violation) result.emplace_back(Key("violation"), Value::String(decision.violation->message));
  result.emplace_back(Key("rules"), Value::MakeList(std::move(rules)));
  return Value::MakeMap(std::move(result));
}

std::string RuleSetIds(const std::vector<const CompiledRuleSet*>& rule_sets) {
  std::string ids;
  for (const CompiledRuleSet* compiled : rule_sets)
    ids += (ids.empty() ? "" : ", ") + compiled->rule_set().id();
  return ids;
}

}  // namespace

int RunExplain(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kExplainUsage, out);
  auto parsed = ParseEvaluationArgs(args, {"--rule", "--fact", "-o"}, kExplainUsage, err);
  if (!parsed) return kExitUsage;
  if (!parsed->rule.empty() && !parsed->fact.empty()) {
    err << "ruleplane: --rule and --fact do not go together\n" << kExplainUsage;
    return kExitUsage;
  }
  int exit_code = kExitOk;
  auto input = LoadEvaluationInput(*parsed, in, err, exit_code);
  if (!input) return exit_code;

  // An unknown rule or fact is bad usage, found before anything is printed.
  std::vector<const CompiledRuleSet*> selected;
  for (const auto& compiled : input->rule_sets) {
    const RuleSet& rule_set = compiled->rule_set();
    const bool has_rule = std::any_of(rule_set.rules.begin(), rule_set.rules.end(),
                                      [&](const Rule& rule) { return rule.id == parsed->rule; });
    if (!parsed->fact.empty() ? rule_set.FindFact(parsed->fact) >= 0 : parsed->rule.empty() || has_rule)
      selected.push_back(compiled.get());
  }
  if (selected.empty()) {
    std::vector<const CompiledRuleSet*> all;
    for (const auto& compiled : input->rule_sets) all.push_back(compiled.get());
    err << "ruleplane: no " << (parsed->fact.empty() ? "rule '" + parsed->rule : "fact '" + parsed->fact)
        << "' in the rule files for " << input->snapshot.kind << " (" << RuleSetIds(all) << ")\n";
    return kExitUsage;
  }

  std::vector<Explained> explained;
  for (const CompiledRuleSet* compiled : selected) {
    expr::Budget budget(parsed->budget);
    const ParamOverrides overrides = OverridesDeclaredBy(compiled->rule_set(), input->overrides);
    auto applies = compiled->AppliesTo(input->snapshot, overrides, &budget);
    if (!applies.ok()) {
      err << "ruleplane: " << parsed->snapshot_path << ": " << applies.error().message << "\n";
      return kExitUsage;
    }
    if (!*applies) {
      if (!parsed->fact.empty()) {
        err << "ruleplane: " << parsed->snapshot_path << ": " << compiled->rule_set().id()
            << " does not apply to this snapshot (appliesWhen " << compiled->rule_set().applies_when->text
            << "): it derives no facts\n";
        return kExitUsage;
      }
      Explained skipped{compiled, {}, {}};
      skipped.decision.applies = false;
      explained.push_back(std::move(skipped));
      continue;
    }
    auto frame = compiled->DeriveFacts(input->snapshot, overrides, &budget);
    if (!frame.ok()) {
      err << "ruleplane: " << parsed->snapshot_path << ": " << frame.error().message << "\n";
      return kExitUsage;
    }
    Explained one{compiled, std::move(*frame), {}};
    if (parsed->fact.empty()) {
      auto decision = compiled->Match(one.frame, /*trace=*/true, &budget);
      if (!decision.ok()) {
        err << "ruleplane: " << parsed->snapshot_path << ": " << compiled->rule_set().id() << ": "
            << decision.error().message << "\n";
        return kExitFinding;
      }
      one.decision = std::move(*decision);
    }
    explained.push_back(std::move(one));
  }

  if (!parsed->fact.empty()) {
    const int fact = selected.front()->rule_set().FindFact(parsed->fact);
    const Value& value = explained.front().frame[selected.front()->layout().fact_slot(fact)];
    for (const Explained& other : explained) {
      const int other_fact = other.compiled->rule_set().FindFact(parsed->fact);
      if (Value::Compare(other.frame[other.compiled->layout().fact_slot(other_fact)], value) != 0) {
        err << "ruleplane: fact '" << parsed->fact << "' has different values in " << RuleSetIds(selected)
            << "; choose one rule file with --rules\n";
        return kExitUsage;
      }
    }
    out << (parsed->output == "yaml" ? FormatYaml(value) : FormatJson(value, 2) + "\n");
    return kExitOk;
  }
  if (parsed->output == "table") {
    std::ostringstream text;
    for (const Explained& one : explained) {
      ExplainAsTable(one, parsed->rule, text);
      text << "\n";
    }
    out << text.str();
    return kExitOk;
  }
  Value::List rule_sets;
  for (const Explained& one : explained) rule_sets.push_back(ExplainAsValue(one, parsed->rule));
  const Value document = Value::MakeMap(
      {{Key("snapshot"),
        Value::MakeMap({{Key("kind"), Value::String(input->snapshot.kind)},
                        {Key("observedAt"), Value::MakeTimestamp(input->snapshot.observed_at)}})},
       {Key("ruleSets"), Value::MakeList(std::move(rule_sets))}});
  out << (parsed->output == "yaml" ? FormatYaml(document) : FormatJson(document, 2) + "\n");
  return kExitOk;
}

}  // namespace ruleplane::cli
