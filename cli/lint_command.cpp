// ruleplane lint PATH...: every problem in the rule files, with file:line:column.
#include <ostream>

#include "cli/commands.h"
#include "cli/rule_library.h"

namespace ruleplane::cli {

int RunLint(const Args& args, std::ostream& out, std::ostream& err) {
  for (const std::string& arg : args) {
    if (arg.starts_with("-")) {
      err << "usage: ruleplane lint [PATH...]\n";
      return kExitUsage;
    }
  }
  auto library = LoadRuleLibrary(args, err);
  if (!library) return kExitUsage;
  const int errors = PrintDiagnostics(*library, out);
  out << library->files.size() << (library->files.size() == 1 ? " file" : " files") << " checked, " << errors
      << (errors == 1 ? " error" : " errors") << "\n";
  return errors > 0 ? kExitFinding : kExitOk;
}

}  // namespace ruleplane::cli
