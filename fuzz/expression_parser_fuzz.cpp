// Fuzzes the expression engine: any input must parse or fail cleanly; what
// parses is checked against a few declared names and, when it checks,
// evaluated under tight limits. Nothing may crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/common/json_value.h"
#include "engine/expr/budget.h"
#include "engine/expr/expression.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ruleplane;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto ast = expr::Parse(text);
  if (!ast.ok()) return 0;

  static const Value kVariables = *ParseJson(R"({"x": 2, "d": 0.5, "s": "etcd-main-0", "l": [1, 2, 3],
                     "m": {"k": "v", "n": {"replicas": 3}}, "members": [{"name": "a", "status": "Ready"}]})");
  expr::Environment env;
  for (const auto& [name, value] : kVariables.map_value()) {
    env.Declare(name.string_value(), static_cast<int>(env.names().size()));
  }
  expr::Limits limits;
  limits.regex_match_limit = 10000;
  // Far below the default budget, so that each input stays fast.
  expr::Budget budget(1'000'000);
  auto program = expr::Check(**ast, env, limits, &budget);
  if (!program.ok()) return 0;

  expr::Frame frame((*program)->frame_size());
  for (size_t i = 0; i < kVariables.map_value().size(); ++i) frame[i] = kVariables.map_value()[i].second;
  (*program)->Evaluate(frame, &budget);
  return 0;
}
