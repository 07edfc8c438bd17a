// Environment, Program and Compile; Parse is in parser.cpp, Check in checker.cpp.
#include "engine/expr/expression.h"

#include <algorithm>

#include "engine/expr/ast.h"
#include "engine/expr/int_code.h"
#include "engine/expr/program_node.h"

namespace ruleplane::expr {

void Environment::Declare(std::string name, int slot) { names_.emplace_back(std::move(name), slot); }

int Environment::Lookup(std::string_view name) const {
  for (auto it = names_.rbegin(); it != names_.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  return -1;
}

int Environment::first_free_slot() const {
  if (first_free_slot_ >= 0) return first_free_slot_;
  int highest = -1;
  for (const auto& [name, slot] : names_) highest = std::max(highest, slot);
  return highest + 1;
}

Program::~Program() = default;

Value Program::Evaluate(Frame& frame, Budget* budget) const {
  if (static_cast<int>(frame.size()) < frame_size_) {
    return Value::Error("internal error: frame has " + std::to_string(frame.size()) +
                        " slots, the program needs " + std::to_string(frame_size_));
  }
  if (int_code_) {
    int64_t result;
    if (int_code_->Run(frame, result)) {
      return int_code_->result_type() == IntCode::Type::kInt ? Value::Int(result) : Value::Bool(result != 0);
    }
  }
  return EvaluateNode(*root_, frame, limits_, budget);
}

bool Program::has_quick_bool() const { return int_code_ && int_code_->result_type() == IntCode::Type::kBool; }

int Program::QuickBool(const Frame& frame) const {
  int64_t result;
  if (!has_quick_bool() || !int_code_->Run(frame, result)) return -1;
  return result != 0;
}

Result<std::shared_ptr<const Program>> Compile(std::string_view text, const Environment& env,
                                               const Limits& limits, Budget* fold_budget) {
  auto ast = Parse(text);
  if (!ast.ok()) return ast.error();
  return Check(**ast, env, limits, fold_budget);
}

}  // namespace ruleplane::expr
