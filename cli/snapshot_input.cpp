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

std::optional<EvaluationArgs> ParseEvaluationArgs(const Args& args, const std::vector<std::string>& extra,
                                                  const char* usage, std::ostream& err) {
  EvaluationArgs parsed;
  bool have_snapshot = false;
  auto accepts = [&](const std::string& option) {
    return std::find(extra.begin(), extra.end(), option) != extra.end();
  };
  bool options_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!options_ended && arg == "--") {
      options_ended = true;
      continue;
    }
    const bool is_option = !options_ended && arg.starts_with("-") && arg != "-";
    const bool takes_value =
        is_option && (arg == "--rules" || arg == "--param" || arg == "--budget" || accepts(arg));
    if (takes_value && i + 1 >= args.size()) {
      err << "ruleplane: " << arg << " needs a value\n" << usage;
      return std::nullopt;
    }
    if (!is_option) {
      if (have_snapshot) {
        err << "ruleplane: only one snapshot, got '" << parsed.snapshot_path << "' and '" << arg << "'\n"
            << usage;
        return std::nullopt;
      }
      parsed.snapshot_path = arg;
      have_snapshot = true;
    } else if (arg == "--rules") {
      parsed.rules.push_back(args[++i]);
    } else if (arg == "--budget") {
      if (!ParseBudget(args[++i], parsed.budget, err)) return std::nullopt;
    } else if (arg == "--param") {
      const std::string& assignment = args[++i];
      const auto equals = assignment.find('=');
      if (equals == std::string::npos || equals == 0) {
        err << "ruleplane: --param expects NAME=VALUE, got '" << assignment << "'\n";
        return std::nullopt;
      }
      parsed.params.emplace_back(assignment.substr(0, equals), assignment.substr(equals + 1));
    } else if (arg == "-o" && accepts(arg)) {
      parsed.output = args[++i];
      if (parsed.output != "table" && parsed.output != "json" && parsed.output != "yaml") {
        err << "ruleplane: -o must be table, json or yaml, not '" << parsed.output << "'\n";
        return std::nullopt;
      }
    } else if (arg == "--rule" && accepts(arg)) {
      parsed.rule = args[++i];
    } else if (arg == "--fact" && accepts(arg)) {
      parsed.fact = args[++i];
    } else if (arg == "--cluster" && accepts(arg)) {
      parsed.cluster = args[++i];
    } else if (arg == "--kubeconfig" && accepts(arg)) {
      parsed.kubeconfig = args[++i];
    } else if (arg == "--context" && accepts(arg)) {
      parsed.context = args[++i];
    } else {
      err << "ruleplane: unknown option '" << arg << "'\n" << usage;
      return std::nullopt;
    }
  }
  if (have_snapshot == !parsed.cluster.empty()) {
    if (have_snapshot) err << "ruleplane: a snapshot file or --cluster, not both\n";
    err << usage;
    return std::nullopt;
  }
  if (!parsed.cluster.empty()) parsed.snapshot_path = "cluster " + parsed.cluster;
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
