// Budget: one bound on the work of a whole evaluation, like the cost budget
// Kubernetes puts on CEL. Every macro iteration, every list element and map
// entry built, every byte of a string built, and the steps of every regular
// expression match count against it; the caller decides what "whole" is (the
// planner: one rule set over one snapshot; the rule loader: the constant
// folding of one rule file).
//
//   expr::Budget budget(expr::Budget::kDefaultLimit);
//   Value v = program->Evaluate(frame, &budget);
//   if (budget.exhausted()) ...   // v is the budget's error, whatever absorbed it
//
// Once exhausted, a budget stays exhausted: evaluation stops at the next node,
// and no operator (&&, ||, all, exists) can absorb the error.
#pragma once

#include <cstdint>
#include <string>

namespace ruleplane::expr {

class Budget {
 public:
  // Kubernetes' runtime cost budget for one validation; ample for the shipped
  // rules (rules/README.md, "The evaluation budget"): a plan of a snapshot of
  // 100,000 members and pods stays under it.
  static constexpr int64_t kDefaultLimit = 10'000'000;

  explicit Budget(int64_t limit = kDefaultLimit) : limit_(limit) {}

  // Adds `cost`; false once the total is over the limit.
  bool Charge(int64_t cost) {
    used_ += cost;
    return used_ <= limit_;
  }
  // Whether `cost` more would still fit.
  bool Fits(int64_t cost) const { return cost <= limit_ - used_; }
  bool exhausted() const { return used_ > limit_; }
  int64_t used() const { return used_; }
  int64_t limit() const { return limit_; }

  // The message of the error an exhausted budget gives.
  std::string Message() const;

 private:
  int64_t limit_;
  int64_t used_ = 0;
};

}  // namespace ruleplane::expr
