// ruleplane lint PATH...: every problem in the rule files, with file:line:column.
#include <ostream>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/rule_library.h"

namespace ruleplane::cli {

namespace {
constexpr const char* kLintUsage =
    "usage: ruleplane lint [--] [PATH...]\n\nLoads rule files and reports every problem as file:line:column. "
    "Without a\n"
    "path, every bundled file. Exit codes: 0 no error, 1 errors, 2 bad usage or an unreadable path.\n";
}  // namespace

int RunLint(const Args& args, std::ostream& out, std::ostream& err) {
  if (HelpRequested(args)) return PrintUsage(kLintUsage, out);
  Flags flags({});
  if (!flags.Parse(args, err, kLintUsage)) return kExitUsage;
  auto library = LoadRuleLibrary(flags.positional(), err);
  if (!library) return kExitUsage;
  const int errors = PrintDiagnostics(*library, out);
  out << library->files.size() << (library->files.size() == 1 ? " file" : " files") << " checked, " << errors
      << (errors == 1 ? " error" : " errors") << "\n";
  return errors > 0 ? kExitFinding : kExitOk;
}

}  // namespace ruleplane::cli
