#include "engine/rule_file/diagnostics.h"

#include <algorithm>

namespace ruleplane {
namespace {

// The 1-based `line` of `text`, without its line break; empty when out of range.
std::string_view SourceLine(std::string_view text, int line) {
  size_t start = 0;
  for (int current = 1; current < line; ++current) {
    size_t newline = text.find('\n', start);
    if (newline == std::string_view::npos) return {};
    start = newline + 1;
  }
  size_t end = text.find('\n', start);
  std::string_view result =
      text.substr(start, end == std::string_view::npos ? text.size() - start : end - start);
  if (!result.empty() && result.back() == '\r') result.remove_suffix(1);
  return result;
}

// At most this many bytes of a source line are shown, around the column.
constexpr size_t kShownBytes = 100;

bool Continuation(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

}  // namespace

bool HasErrors(const Diagnostics& diagnostics) {
  return std::any_of(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& diagnostic) {
    return diagnostic.severity == Diagnostic::Severity::kError;
  });
}

std::string FormatDiagnostic(const Diagnostic& diagnostic, std::string_view source_text) {
  const SourcePosition& position = diagnostic.position;
  std::string out = position.file;
  if (position.known()) {
    out += ":" + std::to_string(position.line);
    if (position.column > 0) out += ":" + std::to_string(position.column);
  }
  out += diagnostic.severity == Diagnostic::Severity::kError ? ": error: " : ": warning: ";
  out += diagnostic.message;
  out += '\n';
  if (!position.known()) return out;
  const std::string_view line = SourceLine(source_text, position.line);
  if (line.empty() && position.column <= 1) return out;
  const size_t caret_column = static_cast<size_t>(std::max(position.column, 1)) - 1;
  // A long line (a file written on one line, say) is cut to a window around
  // the column, marked with "..." where cut, never inside a UTF-8 character.
  size_t start = 0, end = line.size();
  if (line.size() > kShownBytes) {
    const size_t column = std::min(caret_column, line.size());
    start = std::min(column > kShownBytes / 2 ? column - kShownBytes / 2 : 0, line.size() - kShownBytes);
    end = start + kShownBytes;
    while (start > 0 && start < line.size() && Continuation(line[start])) --start;
    while (end < line.size() && Continuation(line[end])) ++end;
  }
  const std::string_view before = start > 0 ? "..." : "";
  out += before;
  out += line.substr(start, end - start);
  if (end < line.size()) out += "...";
  out += '\n';
  // Tabs are kept so that the caret lines up under the same column.
  out += std::string(before.size(), ' ');
  for (size_t i = start; i < caret_column; ++i) out += i < line.size() && line[i] == '\t' ? '\t' : ' ';
  out += "^\n";
  return out;
}

}  // namespace ruleplane
