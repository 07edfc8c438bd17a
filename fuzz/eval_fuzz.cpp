// Fuzzes `ruleplane eval EXPR --input FILE.json`: the input is the expression,
// then a NUL or a newline (whichever comes first), then the JSON document whose
// top-level keys are the variables. As in the command, the default limits and
// budget apply. Nothing may crash, hang or exhaust memory.
#include <algorithm>
#include <cstdint>
#include <string_view>

#include "engine/common/json_value.h"
#include "engine/expr/expression.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ruleplane;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find_first_of(std::string_view("\0\n", 2));
  if (split == std::string_view::npos) return 0;
  const std::string_view expression = input.substr(0, split);

  Result<Value> variables = ParseJson(input.substr(split + 1));
  if (!variables.ok() || !variables->is_map()) return 0;
  expr::Environment env;
  expr::Frame frame;
  for (const auto& [name, value] : variables->map_value()) {
    env.Declare(name.string_value(), static_cast<int>(frame.size()));
    frame.push_back(value);
  }
  auto program = expr::Compile(expression, env);
  if (!program.ok()) return 0;
  frame.resize(std::max<size_t>(frame.size(), (*program)->frame_size()));
  const Value result = (*program)->Evaluate(frame);
  if (!result.is_error()) (void)FormatJson(result, 2);
  return 0;
}
