// What `plan` and `explain` share: their arguments, and the way they load the
// snapshot, the rule sets for its subject and the param overrides.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/rule_library.h"
#include "engine/common/snapshot.h"
#include "engine/expr/budget.h"
#include "engine/match/compiled_rule_set.h"

namespace ruleplane::cli {

struct EvaluationArgs {
  std::vector<std::string> rules;                           // --rules (repeatable)
  std::vector<std::pair<std::string, std::string>> params;  // --param K=V (repeatable)
  std::string snapshot_path;                                // positional, "-" for stdin
  std::string output = "table";                             // -o (plan)
  std::string rule;                                         // --rule (explain)
  std::string fact;                                         // --fact (explain)
  int64_t budget = expr::Budget::kDefaultLimit;             // --budget, per rule set
  std::string cluster;                                      // --cluster NS/NAME (plan): observed, not read
  std::string kubeconfig, context;                          // --kubeconfig, --context (with --cluster)
};

// Reads the value of --budget (a positive count); false after writing why to `err`.
bool ParseBudget(const std::string& text, int64_t& budget, std::ostream& err);

// --rules, --param and --budget, and the flags in `extra` ("-o", "--rule",
// "--fact", "--cluster"), each taking a value.
std::vector<FlagSpec> EvaluationFlags(const std::vector<std::string>& extra);
// Reads and checks those flags' values into `parsed`; false after writing why to `err`.
bool ReadEvaluationFlags(const Flags& flags, EvaluationArgs& parsed, std::ostream& err);

// Parses the arguments: EvaluationFlags(extra) and one snapshot file or
// --cluster. Returns nullopt after writing a usage error to `err`.
std::optional<EvaluationArgs> ParseEvaluationArgs(const Args& args, const std::vector<std::string>& extra,
                                                  std::string_view usage, std::ostream& err);

struct EvaluationInput {
  Snapshot snapshot;
  std::unique_ptr<RuleLibrary> library;
  std::vector<std::shared_ptr<const CompiledRuleSet>> rule_sets;  // those for the snapshot's subject
  ParamOverrides overrides;
};

// Loads everything; on failure writes the problem and sets `exit_code`.
std::optional<EvaluationInput> LoadEvaluationInput(const EvaluationArgs& args, std::istream& in,
                                                   std::ostream& err, int& exit_code);

}  // namespace ruleplane::cli
