// Errors and positions shared by every stage of the engine.
//
// Library code never throws across its API and never prints: a stage that can
// fail returns Result<T>, which holds either a value or an Error (a code, a
// readable message and, where the problem is in user input, a position).
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ruleplane {

// A place in user input. line and column are 1-based; 0 means "unknown".
struct SourcePosition {
  std::string file;
  int line = 0;
  int column = 0;

  bool known() const { return line > 0; }
};

enum class ErrorCode {
  kParse,               // the text is not valid syntax (expression, YAML, JSON)
  kCheck,               // well-formed but meaningless: unknown name, wrong arity, bad regex
  kEvaluation,          // an expression failed at run time: overflow, no such key, bad type
  kInvalidRuleFile,     // a rule file violates the rule-file format
  kInvalidSnapshot,     // a snapshot is malformed or a fact cannot be derived from it
  kHitPolicyViolation,  // UNIQUE or ANY saw rules it does not allow together
  kNotFound,            // a named rule set, rule or file does not exist
  kInvalidArgument,     // a caller passed something unusable (bad --param, ...)
  kInternal,            // a bug in ruleplane
};

const char* ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  SourcePosition position;
};

// Either a T or an Error. Modelled on absl::StatusOr, without exceptions.
template <typename T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    assert(ok());
    return std::get<T>(state_);
  }
  T& value() & {
    assert(ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(state_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<Error>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

}  // namespace ruleplane
