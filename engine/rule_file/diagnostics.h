// Diagnostics: problems found in user input (a rule file, an action catalogue),
// collected rather than stopping at the first, each with a position.
//
// Printed as
//   rules/x.yaml:12:15: error: unknown fact 'redy'
//       ready: "> redy"
//                 ^
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/common/error.h"

namespace ruleplane {

struct Diagnostic {
  enum class Severity { kError, kWarning };
  Severity severity = Severity::kError;
  SourcePosition position;
  std::string message;
};

using Diagnostics = std::vector<Diagnostic>;

bool HasErrors(const Diagnostics& diagnostics);

// "file:line:column: error: message", then the offending line of
// `source_text` and a caret under the column (when the position is known).
// Of a line longer than 100 bytes, the 100 around the column are shown, with
// "..." where it is cut.
std::string FormatDiagnostic(const Diagnostic& diagnostic, std::string_view source_text);

}  // namespace ruleplane
