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
  // Failures of acting on the world (adapters, executor, journal), by what the
  // caller should do about them:
  kUnavailable,         // transient: connection refused, 5xx, 503, a learner not in sync; retry with backoff
  kDeadlineExceeded,    // a call or a step ran out of time; retry until the step's deadline
  kConflict,            // the state changed since it was observed (409, compare failed): re-observe
  kFailedPrecondition,  // the real state does not allow the step now (not quorate, not empty): stop
  kPermissionDenied,    // 401, 403: stop, naming what would allow it
  kRefused,             // a gate or an invariant refused a step: nothing was sent
  kIo,                  // a local file, directory or command failed
};

// Whether an error of this code may go away by itself, so that retrying the
// same request after a backoff is right.
bool IsRetryable(ErrorCode code);

const char* ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
  SourcePosition position;
};

// Success, or an Error: the result of an operation that returns nothing.
class Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT: implicit by design

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(failed_);
    return error_;
  }

 private:
  Error error_;
  bool failed_ = false;
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
