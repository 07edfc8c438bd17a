// ruleplane: lint, test, plan and explain decision tables over snapshots.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

constexpr const char* kUsage = R"(usage: ruleplane <command> [arguments]

Commands:
  plan [--rules PATH|NAME@VERSION]... [--param K=V]... SNAPSHOT.json [-o table|json|yaml]
                     the plan of steps the rules decide for a snapshot ("-" reads standard input)
  explain [--rules PATH|NAME@VERSION]... [--param K=V]... SNAPSHOT.json [--rule ID]
                     why each rule matched or did not, cell by cell
  lint PATH...       check rule files; every problem with file:line:column
  test [--coverage] [--min-coverage P] PATH...
                     run the tests written inside rule files (and report what they exercised)
  verify [--param K=V]... PATH...
                     check every state of the declared domains: gaps, conflicts, dead and
                     masked rules, invariants
  diff [--param K=V]... [--snapshots DIR] OLD NEW
                     the states (and snapshots) two versions of a rule set decide differently
  eval EXPR [--input FILE.json]
                     evaluate one expression against a JSON document's top-level keys
  version            print the version

Without --rules, plan and explain use the bundled default selection (rules/defaults.txt:
the 1.x rule sets, DEP-01 as proposed); lint, test and verify check every bundled rule file.
Exit codes: 0 success, 1 a finding (lint error, failed test, evaluation error), 2 bad usage or unreadable input.
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace ruleplane::cli;
  if (argc < 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string command = argv[1];
  const Args args(argv + 2, argv + argc);
  if (command == "plan") return RunPlan(args, std::cin, std::cout, std::cerr);
  if (command == "explain") return RunExplain(args, std::cin, std::cout, std::cerr);
  if (command == "lint") return RunLint(args, std::cout, std::cerr);
  if (command == "test") return RunTest(args, std::cout, std::cerr);
  if (command == "verify") return RunVerify(args, std::cout, std::cerr);
  if (command == "diff") return RunDiff(args, std::cout, std::cerr);
  if (command == "eval") return RunEval(args, std::cout, std::cerr);
  if (command == "version" || command == "--version") {
    std::cout << "ruleplane " << RULEPLANE_VERSION << "\n";
    return kExitOk;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return kExitOk;
  }
  std::cerr << "ruleplane: unknown command '" << command << "'\n" << kUsage;
  return kExitUsage;
}
