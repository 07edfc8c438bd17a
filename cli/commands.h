// The ruleplane subcommands. Each takes its arguments (after the subcommand
// name) and the output streams, and returns the process exit code:
//   0 success, 1 a finding (lint error, failed test, evaluation error),
//   2 bad usage or unreadable input.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace ruleplane::cli {

using Args = std::vector<std::string>;

enum ExitCode { kExitOk = 0, kExitFinding = 1, kExitUsage = 2 };

// Every command asks this first: with -h or --help before "--" it prints its
// usage on standard output and exits 0 (kExitOk), as kubectl does.
bool HelpRequested(const Args& args);
int PrintUsage(std::string_view usage, std::ostream& out);

int RunEval(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunLint(const Args& args, std::ostream& out, std::ostream& err);
int RunTest(const Args& args, std::ostream& out, std::ostream& err);
int RunPlan(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunExplain(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunVerify(const Args& args, std::ostream& out, std::ostream& err);
int RunDiff(const Args& args, std::ostream& out, std::ostream& err);
int RunObserve(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunApply(const Args& args, std::ostream& out, std::ostream& err);
int RunController(const Args& args, std::ostream& out, std::ostream& err);
int RunMemberAgent(const Args& args, std::ostream& out, std::ostream& err);
int RunMemberInit(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);
int RunBackup(const Args& args, std::ostream& out, std::ostream& err);
int RunCompact(const Args& args, std::ostream& out, std::ostream& err);
int RunHistory(const Args& args, std::ostream& out, std::ostream& err);

}  // namespace ruleplane::cli
