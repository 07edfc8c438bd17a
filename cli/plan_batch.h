// ruleplane plan --batch: replays many snapshots against the rule files, one
// JSON snapshot per input line, one compact JSON decision per output line, in
// input order. The rule files are loaded and compiled once.
#pragma once

#include <iosfwd>

#include "cli/commands.h"

namespace ruleplane::cli {

extern const char* const kPlanBatchUsage;

// `args` are plan's arguments, --batch FILE among them ("-" reads standard
// input); with --help, prints kPlanBatchUsage. Exit codes: 0 every line planned, 1 a line failed (bad JSON,
// an evaluation error, a hit-policy violation: the batch goes on), 2 bad usage, an unreadable input or rule
// file.
int RunPlanBatch(const Args& args, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace ruleplane::cli
