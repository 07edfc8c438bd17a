// Fuzzes planning as `ruleplane plan SNAPSHOT.json` does it: the input is a
// snapshot's JSON text, planned against the bundled default rule sets of its
// subject, and the plan rendered. Any input must give a plan or an error,
// never a crash or a hang.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/output_format.h"
#include "cli/rule_library.h"
#include "engine/common/json_value.h"
#include "engine/common/snapshot.h"
#include "engine/plan/plan.h"

namespace {

using RuleSets = std::vector<std::shared_ptr<const ruleplane::CompiledRuleSet>>;

struct DefaultRules {
  std::unique_ptr<ruleplane::cli::RuleLibrary> library;
  std::map<std::string, RuleSets> by_subject;
};

// Loads and compiles the default selection, once: what `plan` selects for a
// snapshot is then a lookup by its subject.
DefaultRules LoadDefaultRules() {
  std::ostringstream err;
  DefaultRules rules;
  rules.library = ruleplane::cli::LoadRuleLibrary(ruleplane::cli::DefaultRuleReferences(), err);
  if (!rules.library || ruleplane::cli::PrintDiagnostics(*rules.library, err) > 0) std::abort();
  for (auto& compiled : ruleplane::cli::SelectForSubject(*rules.library, "", err)) {
    rules.by_subject[compiled->rule_set().subject].push_back(compiled);
  }
  if (rules.by_subject.empty() || !err.str().empty()) std::abort();
  return rules;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ruleplane;
  static const DefaultRules rules = LoadDefaultRules();
  auto snapshot = ParseSnapshot(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!snapshot.ok()) return 0;
  const auto selected = rules.by_subject.find(snapshot->subject());
  if (selected == rules.by_subject.end()) return 0;

  auto plan = MakePlan(selected->second, *snapshot, EvaluationOptions{}, rules.library->catalogue.get());
  if (!plan.ok()) return 0;
  // The three renderings of `plan -o json|yaml|table`.
  const Value document = PlanToValue(*plan);
  (void)FormatJson(document, 2);
  (void)cli::FormatYaml(document);
  (void)cli::FormatPlanTable(*plan);
  return 0;
}
