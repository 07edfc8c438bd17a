// ruleplane eval EXPR [--input FILE.json]: evaluates one CEL expression, with
// the top-level keys of a JSON object as its variables, and prints the result
// as JSON. With --batch, many expressions, one per line of standard input.
#include <cerrno>
#include <cstring>
#include <istream>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/line_reader.h"
#include "cli/read_file.h"
#include "cli/snapshot_input.h"
#include "engine/common/json_value.h"
#include "engine/expr/budget.h"
#include "engine/expr/expression.h"
#include "platform/file_input.h"

namespace ruleplane::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: ruleplane eval [--input FILE.json] [--budget N] [--] EXPR\n"
    "       ruleplane eval --batch [--budget N] < CASES.jsonl\n"
    "  Evaluates the CEL expression EXPR and prints its value as JSON. The top-level\n"
    "  keys of the JSON object in FILE.json are the variables EXPR may use. Doubles\n"
    "  JSON cannot hold print as \"Infinity\", \"-Infinity\" and \"NaN\". After --,\n"
    "  every argument is the expression, even one such as -x that looks like an option.\n"
    "  --budget bounds the work of checking and evaluating it (default 10000000).\n"
    "  --batch evaluates one case per line of standard input, {\"expr\": EXPR, \"input\":\n"
    "  {...}} (input may be left out), and prints one compact JSON line per case, in\n"
    "  order: {\"line\":1,\"value\":...} or {\"line\":2,\"error\":\"column 3: ...\"}. Blank lines\n"
    "  are skipped; a case that fails does not stop the batch.\n";

struct EvalArgs {
  std::string expression;
  std::optional<std::string> input;
  bool batch = false;
  int64_t budget = expr::Budget::kDefaultLimit;
};

std::optional<EvalArgs> ParseArgs(const Args& args, std::ostream& err) {
  Flags flags({{"--input", true, "-i"}, {"--budget"}, {"--batch", false}}, OptionShape::kNameOrLetter);
  EvalArgs parsed;
  if (!flags.Parse(args, err, kUsage)) return std::nullopt;
  parsed.batch = flags.Has("--batch");
  if (parsed.batch) {
    if (flags.Has("--input")) {
      err << "ruleplane: --batch takes each case's input from its line, not from --input\n" << kUsage;
      return std::nullopt;
    }
    if (!flags.RequirePositional(0, 0, "expression (--batch reads them from standard input)", err, kUsage))
      return std::nullopt;
  } else {
    if (!flags.RequirePositional(1, 1, "expression", err, kUsage)) return std::nullopt;
    parsed.expression = flags.positional()[0];
  }
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

// The value of `expression` with the keys of the map `variables` as its variables, or the error that stopped
// its checking or evaluation.
Result<Value> Evaluate(std::string_view expression, const Value& variables, int64_t budget_limit) {
  expr::Environment env;
  expr::Frame frame;
  for (const auto& [name, value] : variables.map_value()) {
    env.Declare(name.string_value(), static_cast<int>(frame.size()));
    frame.push_back(value);
  }
  expr::Budget budget(budget_limit);
  auto program = expr::Compile(expression, env, {}, &budget);
  if (!program.ok()) return program.error();
  frame.resize(std::max<size_t>(frame.size(), (*program)->frame_size()));
  Value result = (*program)->Evaluate(frame, &budget);
  if (result.is_error()) return Error{ErrorCode::kEvaluation, result.error_message(), {}};
  return result;
}

// "column 7: <message>" (with "line 2, " for a multi-line expression), on one line.
std::string OneLineError(const Error& error, std::string_view expression) {
  if (!error.position.known()) return error.message;
  std::string where = expression.find('\n') == std::string_view::npos
                          ? ""
                          : "line " + std::to_string(error.position.line) + ", ";
  return where + "column " + std::to_string(error.position.column) + ": " + error.message;
}

// One case of a batch: {"expr": "...", "input": {...}} in, its value or error out, under "value" or "error".
std::pair<const char*, Value> EvaluateLine(std::string_view line, int64_t budget_limit) {
  auto fail = [](std::string message) { return std::pair{"error", Value::String(std::move(message))}; };
  Result<Value> json = ParseJson(line);
  if (!json.ok()) return fail(json.error().message);
  const Value* expression = json->is_map() ? json->Find("expr") : nullptr;
  if (expression == nullptr || !expression->is_string()) {
    return fail("expected a JSON object with the expression as a string under \"expr\"");
  }
  const Value* input = json->Find("input");
  if (input != nullptr && !input->is_map()) {
    return fail(
        std::string("expected \"input\" to be a JSON object, whose keys become variables, but found ") +
        input->TypeName());
  }
  Result<Value> value =
      Evaluate(expression->string_value(), input != nullptr ? *input : Value::MakeMap({}), budget_limit);
  if (!value.ok()) return fail(OneLineError(value.error(), expression->string_value()));
  return {"value", *std::move(value)};
}

int RunBatch(const EvalArgs& parsed, std::istream& in, std::ostream& out, std::ostream& err) {
  LineReader reader(in, kMaxCliInputBytes);
  long long number = 0, cases = 0, failed = 0;
  std::string line;
  for (LineReader::Read read; (read = reader.Next(line)) != LineReader::Read::kEnd;) {
    ++number;
    if (read == LineReader::Read::kLine && line.find_first_not_of(" \t\r") == std::string::npos) continue;
    ++cases;
    auto [key, value] =
        read == LineReader::Read::kTooLong
            ? std::pair{"error", Value::String("the line is longer than the bound of one input")}
            : EvaluateLine(line, parsed.budget);
    if (key == std::string_view("error")) ++failed;
    out << FormatJson(
               Value::MakeMap({{Value::String("line"), Value::Int(number)}, {Value::String(key), value}}))
        << "\n";
  }
  out.flush();
  if (failed > 0) {
    err << "ruleplane: " << failed << " of " << cases << " cases failed\n";
    return kExitFinding;
  }
  return kExitOk;
}

}  // namespace

int RunEval(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  // Only as the first argument: "-h" later is an expression (eval '1 - -h').
  if (!args.empty() && HelpRequested({args[0]})) return PrintUsage(kUsage, out);
  const std::optional<EvalArgs> parsed = ParseArgs(args, err);
  if (!parsed) return kExitUsage;
  if (parsed->batch) return RunBatch(*parsed, in, out, err);

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

  Result<Value> result = Evaluate(parsed->expression, variables, parsed->budget);
  if (!result.ok()) {
    PrintExpressionError(result.error(), parsed->expression, err);
    return kExitFinding;
  }
  out << FormatJson(*result, 2) << "\n";
  return kExitOk;
}

}  // namespace ruleplane::cli
