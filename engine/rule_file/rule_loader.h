// The rule loader: YAML text of one rule file -> RuleSet, plus every problem
// found (not only the first). The only place that sees yaml-cpp nodes.
//
//   auto loaded = LoadRuleFile(text, "rules/etcd-druid/status.yaml", &catalogue);
//   for (const auto& d : loaded.diagnostics) std::cerr << FormatDiagnostic(d, text);
//   if (loaded.rule_set) { ... }
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/rule_file/action_catalogue.h"
#include "engine/rule_file/diagnostics.h"
#include "engine/rule_file/rule_set.h"

namespace ruleplane {

struct RuleLoadResult {
  std::shared_ptr<const RuleSet> rule_set;  // null when diagnostics has errors
  Diagnostics diagnostics;
};

// `catalogue` may be null: then action names and parameters are not checked.
RuleLoadResult LoadRuleFile(std::string_view yaml_text, const std::string& file_name,
                            const ActionCatalogue* catalogue);

}  // namespace ruleplane
