// Runs the tests written inside a rule file (spec.tests): each test's snapshot
// is planned against the file alone and compared with what the test expects.
// File access stays with the caller, through SnapshotReader.
#pragma once

#include <functional>
#include <string>

#include "engine/common/error.h"
#include "engine/match/compiled_rule_set.h"
#include "engine/rule_file/action_catalogue.h"
#include "engine/verify/test_coverage.h"

namespace ruleplane {

struct RuleTestOutcome {
  std::string name;
  bool passed = false;
  std::string failure;  // what differed, when !passed
};

// Returns the text of a snapshotFile (a path relative to the rule file).
using SnapshotReader = std::function<Result<std::string>(const std::string& snapshot_file)>;

// With `coverage`, the test's evaluation is also recorded there (traced).
RuleTestOutcome RunRuleTest(const std::shared_ptr<const CompiledRuleSet>& compiled, const RuleTest& test,
                            const ActionCatalogue* catalogue, const SnapshotReader& read_snapshot,
                            TestCoverage* coverage = nullptr);

}  // namespace ruleplane
