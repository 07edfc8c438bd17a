#include "cli/snapshot_input.h"

#include <algorithm>
#include <charconv>
#include <ostream>

#include "cli/cluster_input.h"
#include "cli/read_file.h"

namespace ruleplane::cli {

bool ParseBudget(const std::string& text, int64_t& budget, std::ostream& err) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), budget);
  if (error == std::errc() && end == text.data() + text.size() && budget > 0) return true;
  err << "ruleplane: --budget expects a positive count of work units, got '" << text << "'\n";
  return false;
}

std::vector<FlagSpec> EvaluationFlags(const std::vector<std::string>& extra) {
  std::vector<FlagSpec> specs = {{"--rules"}, {"--param"}, {"--budget"}};
  for (const std::string& name : extra) specs.push_back({name});
  return specs;
}

bool ReadEvaluationFlags(const Flags& flags, EvaluationArgs& parsed, std::ostream& err) {
  parsed.rules = flags.GetAll("--rules");
  if (flags.Has("--budget") && !ParseBudget(flags.Get("--budget"), parsed.budget, err)) return false;
  for (const std::string& assignment : flags.GetAll("--param")) {
    const auto equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0) {
      err << "ruleplane: --param expects NAME=VALUE, got '" << assignment << "'\n";
      return false;
    }
    parsed.params.emplace_back(assignment.substr(0, equals), assignment.substr(equals + 1));
  }
  parsed.output = flags.Get("-o", parsed.output);
  if (parsed.output != "table" && parsed.output != "json" && parsed.output != "yaml") {
    err << "ruleplane: -o must be table, json or yaml, not '" << parsed.output << "'\n";
    return false;
  }
  parsed.rule = flags.Get("--rule");
  parsed.fact = flags.Get("--fact");
  parsed.cluster = flags.Get("--cluster");
  parsed.kubeconfig = flags.Get("--kubeconfig");
  parsed.context = flags.Get("--context");
  return true;
}

std::optional<EvaluationArgs> ParseEvaluationArgs(const Args& args, const std::vector<std::string>& extra,
                                                  std::string_view usage, std::ostream& err) {
  Flags flags(EvaluationFlags(extra));
  EvaluationArgs parsed;
  if (!flags.Parse(args, err, usage) || !ReadEvaluationFlags(flags, parsed, err)) return std::nullopt;
  if (!flags.RequirePositional(0, 1, "snapshot", err, usage)) return std::nullopt;
  const bool have_snapshot = !flags.positional().empty();
  if (have_snapshot == !parsed.cluster.empty()) {
    if (have_snapshot) err << "ruleplane: a snapshot file or --cluster, not both\n";
    err << usage;
    return std::nullopt;
  }
  parsed.snapshot_path = have_snapshot ? flags.positional()[0] : "cluster " + parsed.cluster;
  return parsed;
}

std::optional<EvaluationInput> LoadEvaluationInput(const EvaluationArgs& args, std::istream& in,
                                                   std::ostream& err, int& exit_code) {
  exit_code = kExitUsage;
  Result<Snapshot> snapshot = Error{ErrorCode::kInternal, "not read", {}};
  if (!args.cluster.empty()) {
    snapshot = ObserveClusterSnapshot({args.kubeconfig, args.context, args.cluster, ""});
    if (!snapshot.ok()) {
      err << "ruleplane: observing " << args.cluster << ": " << snapshot.error().message << "\n";
      if (snapshot.error().code != ErrorCode::kInvalidArgument) exit_code = kExitFinding;
      return std::nullopt;
    }
  } else {
    auto text = ReadInput(args.snapshot_path, in);
    if (!text.ok()) {
      err << "ruleplane: " << text.error().message << "\n";
      return std::nullopt;
    }
    snapshot = ParseSnapshot(*text);
  }
  if (!snapshot.ok()) {
    err << "ruleplane: " << args.snapshot_path << ": " << snapshot.error().message << "\n";
    return std::nullopt;
  }
  const std::vector<std::string> references = args.rules.empty() ? DefaultRuleReferences() : args.rules;
  EvaluationInput input{std::move(*snapshot), LoadRuleLibrary(references, err), {}, {}};
  if (!input.library) return std::nullopt;
  if (PrintDiagnostics(*input.library, err) > 0) {
    exit_code = kExitFinding;
    return std::nullopt;
  }
  const std::string subject = input.snapshot.subject();
  input.rule_sets = SelectForSubject(*input.library, subject, err);
  if (input.rule_sets.empty()) {
    err << "ruleplane: no rule file has subject '" << subject << "' (the snapshot's kind is "
        << input.snapshot.kind << ")\n";
    return std::nullopt;
  }
  for (const auto& [name, value] : args.params) {
    // An init-capture, as clang before 16 cannot capture a structured binding.
    const bool declared = std::any_of(
        input.rule_sets.begin(), input.rule_sets.end(),
        [&name = name](const auto& compiled) { return compiled->rule_set().FindParam(name) >= 0; });
    if (!declared) {
      err << "ruleplane: --param " << name << ": no selected rule file declares a param '" << name << "'\n";
      return std::nullopt;
    }
    input.overrides.emplace_back(name, Value::String(value));
  }
  exit_code = kExitOk;
  return input;
}

}  // namespace ruleplane::cli
