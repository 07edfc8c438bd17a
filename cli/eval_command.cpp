// ruleplane eval EXPR [--input FILE.json]: evaluates one CEL expression, with
// the top-level keys of a JSON object as its variables, and prints the result
// as JSON.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/read_file.h"
#include "cli/snapshot_input.h"
#include "engine/common/json_value.h"
#include "engine/expr/budget.h"
#include "engine/expr/expression.h"

namespace ruleplane::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: ruleplane eval [--input FILE.json] [--budget N] [--] EXPR\n"
    "  Evaluates the CEL expression EXPR and prints its value as JSON. The top-level\n"
    "  keys of the JSON object in FILE.json are the variables EXPR may use. Doubles\n"
    "  JSON cannot hold print as \"Infinity\", \"-Infinity\" and \"NaN\". After --,\n"
    "  every argument is the expression, even one such as -x that looks like an option.\n"
    "  --budget bounds the work of checking and evaluating it (default 10000000).\n";

struct EvalArgs {
  std::string expression;
  std::optional<std::string> input;
  int64_t budget = expr::Budget::kDefaultLimit;
};

std::optional<EvalArgs> ParseArgs(const Args& args, std::ostream& err) {
  Flags flags({{"--input", true, "-i"}, {"--budget"}}, OptionShape::kNameOrLetter);
  EvalArgs parsed;
  if (!flags.Parse(args, err, kUsage) || !flags.RequirePositional(1, 1, "expression", err, kUsage))
    return std::nullopt;
  parsed.expression = flags.positional()[0];
  if (flags.Has("--input")) parsed.input = flags.Get("--input");
  if (flags.Has("--budget") && !ParseBudget(flags.Get("--budget"), parsed.budget, err)) return std::nullopt;
  return parsed;
}

// "error: column 7: <message>", then the expression's line and a caret.
void PrintExpressionError(const Error& error, std::string_view expression, std::ostream& err) {
  const SourcePosition& position = error.position;
  if (!position.known()) {
    err << "error: " << error.message << "\n";
    return;
  }
  const bool multi_line = expression.find('\n') != std::string_view::npos;
  err << "error: ";
  if (multi_line) err << "line " << position.line << ", ";
  err << "column " << position.column << ": " << error.message << "\n";
  std::string_view line = expression;
  for (int i = 1; i < position.line; ++i) line.remove_prefix(line.find('\n') + 1);
  line = line.substr(0, line.find('\n'));
  err << "  " << line << "\n  " << std::string(position.column - 1, ' ') << "^\n";
}

}  // namespace

int RunEval(const Args& args, std::ostream& out, std::ostream& err) {
  // Only as the first argument: "-h" later is an expression (eval '1 - -h').
  if (!args.empty() && HelpRequested({args[0]})) return PrintUsage(kUsage, out);
  const std::optional<EvalArgs> parsed = ParseArgs(args, err);
  if (!parsed) return kExitUsage;

  Value variables = Value::MakeMap({});
  if (parsed->input) {
    Result<std::string> text = ReadFile(*parsed->input);
    if (!text.ok()) {
      err << "error: " << text.error().message << "\n";
      return kExitUsage;
    }
    Result<Value> json = ParseJson(*text);
    if (!json.ok()) {
      err << "error: " << *parsed->input << ": " << json.error().message << "\n";
      return kExitUsage;
    }
    if (!json->is_map()) {
      err << "error: " << *parsed->input
          << ": expected a JSON object, whose keys become variables, but found " << json->TypeName() << "\n";
      return kExitUsage;
    }
    variables = *json;
  }

  expr::Environment env;
  expr::Frame frame;
  for (const auto& [name, value] : variables.map_value()) {
    env.Declare(name.string_value(), static_cast<int>(frame.size()));
    frame.push_back(value);
  }
  expr::Budget budget(parsed->budget);
  auto program = expr::Compile(parsed->expression, env, {}, &budget);
  if (!program.ok()) {
    PrintExpressionError(program.error(), parsed->expression, err);
    return kExitFinding;
  }
  frame.resize(std::max<size_t>(frame.size(), (*program)->frame_size()));
  const Value result = (*program)->Evaluate(frame, &budget);
  if (result.is_error()) {
    err << "error: " << result.error_message() << "\n";
    return kExitFinding;
  }
  out << FormatJson(result, 2) << "\n";
  return kExitOk;
}

}  // namespace ruleplane::cli
