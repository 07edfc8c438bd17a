#include "engine/expr/budget.h"

namespace ruleplane::expr {

std::string Budget::Message() const {
  return "evaluation budget of " + std::to_string(limit_) +
         " exceeded (macro iterations, elements and bytes built, regular-expression steps)";
}

}  // namespace ruleplane::expr
