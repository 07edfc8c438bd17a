// ruleplane: lint, test, plan and explain decision tables over snapshots.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

constexpr const char* kUsage = R"(usage: ruleplane <command> [arguments]

Commands:
  plan [--rules PATH|NAME@VERSION]... [--param K=V]... [--budget N] SNAPSHOT.json [-o table|json|yaml]
                     the plan of steps the rules decide for a snapshot ("-" reads standard input)
  explain [--rules PATH|NAME@VERSION]... [--param K=V]... SNAPSHOT.json [--rule ID | --fact NAME] [-o table|json|yaml]
                     why each rule matched or did not, cell by cell; one fact's whole value
  lint PATH...       check rule files; every problem with file:line:column
  test [--coverage] [--min-coverage P] PATH...
                     run the tests written inside rule files (and report what they exercised)
  verify [--param K=V]... PATH...
                     check every state of the declared domains: gaps, conflicts, dead and
                     masked rules, invariants
  diff [--param K=V]... [--snapshots DIR] OLD NEW
                     the states (and snapshots) two versions of a rule set decide differently
  diff --journal FILE OLD NEW
                     what the other version would have decided on the snapshots a journal recorded
  observe cluster [--kubeconfig F] [-n NS] NAME
                     the EtcdClusterSnapshot of an Etcd, read from the API server
  plan --cluster NS/NAME [--kubeconfig F]
                     the plan for a live cluster; reads only
  apply --cluster NS/NAME | SNAPSHOT.json [--dry-run=client|server] [--allow-disruptive]
                     observe, plan, gate and perform the Kubernetes steps, journaled
  controller [--kubeconfig F] [-n NS | --all-namespaces] [--allow-disruptive] [--dry-run]
                     reconcile every Etcd from a watch cache until stopped; /metrics, /healthz, /readyz
  observe member [member flags]
                     this member's EtcdMemberInitSnapshot: data directory, backup store, member list
  member-init [member flags] [--rules NAME@VERSION] [--dry-run] [--journal FILE]
                     an init container: observe, plan with the initialization rules, execute on this member
  member-agent --name N --client-url URL --endpoints URL --etcd NAME [--backup-store DIR] [--once]
                     the sidecar loop: renews the member's lease; when leading, takes backups
  backup full|delta --endpoints URL[,URL] --backup-store DIR
                     take one backup into the store, in etcd-backup-restore's layout
  compact --backup-store DIR --data-dir DIR
                     the newest full snapshot and its deltas as one new full snapshot (the compaction Job)
  history [--journal FILE] [--limit N] [-o table|json]
                     what was observed, decided and done, step by step
  eval [--input FILE.json] [--] EXPR | eval --batch < CASES.jsonl
                     evaluate one expression against a JSON document's top-level keys
  version            print the version

Without --rules, plan and explain use the bundled default selection (rules/defaults.txt:
the 1.x rule sets, DEP-01 as proposed); lint, test and verify check every bundled rule file.
-- ends the options of every command: what follows is an argument even when it starts with '-'.
Exit codes: 0 success, 1 a finding (lint error, failed test, evaluation error), 2 bad usage or unreadable input.
)";

using namespace ruleplane::cli;

int Run(int argc, char** argv) {
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
  if (command == "observe") return RunObserve(args, std::cin, std::cout, std::cerr);
  if (command == "apply") return RunApply(args, std::cout, std::cerr);
  if (command == "controller") return RunController(args, std::cout, std::cerr);
  if (command == "member-agent") return RunMemberAgent(args, std::cout, std::cerr);
  if (command == "member-init") return RunMemberInit(args, std::cin, std::cout, std::cerr);
  if (command == "backup") return RunBackup(args, std::cout, std::cerr);
  if (command == "compact") return RunCompact(args, std::cout, std::cerr);
  if (command == "history") return RunHistory(args, std::cout, std::cerr);
  if (command == "eval") return RunEval(args, std::cin, std::cout, std::cerr);
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

// Whether everything written to standard output reached it (a full disk, a
// closed pipe with SIGPIPE ignored); says so when not.
bool OutputWritten() {
  std::cout.flush();
  // errno as the failed write left it: the most likely reason.
  int error = std::cout ? 0 : errno;
  const bool flushed = std::fflush(stdout) == 0;
  if (!flushed && error == 0) error = errno;
  if (std::cout && flushed && !std::ferror(stdout)) return true;
  std::cerr << "ruleplane: cannot write the output"
            << (error != 0 ? std::string(": ") + std::strerror(error) : "") << "\n";
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int exit_code = kExitUsage;
  try {
    exit_code = Run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "ruleplane: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "ruleplane: internal error: " << e.what() << "\n";
  }
  return OutputWritten() ? exit_code : kExitUsage;
}
