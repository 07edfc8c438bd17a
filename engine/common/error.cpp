#include "engine/common/error.h"

namespace ruleplane {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kParse:
      return "Parse";
    case ErrorCode::kCheck:
      return "Check";
    case ErrorCode::kEvaluation:
      return "Evaluation";
    case ErrorCode::kInvalidRuleFile:
      return "InvalidRuleFile";
    case ErrorCode::kInvalidSnapshot:
      return "InvalidSnapshot";
    case ErrorCode::kHitPolicyViolation:
      return "HitPolicyViolation";
    case ErrorCode::kNotFound:
      return "NotFound";
    case ErrorCode::kInvalidArgument:
      return "InvalidArgument";
    case ErrorCode::kInternal:
      return "Internal";
    case ErrorCode::kUnavailable:
      return "Unavailable";
    case ErrorCode::kDeadlineExceeded:
      return "DeadlineExceeded";
    case ErrorCode::kConflict:
      return "Conflict";
    case ErrorCode::kFailedPrecondition:
      return "FailedPrecondition";
    case ErrorCode::kPermissionDenied:
      return "PermissionDenied";
    case ErrorCode::kRefused:
      return "Refused";
    case ErrorCode::kIo:
      return "Io";
  }
  return "Unknown";
}

bool IsRetryable(ErrorCode code) {
  return code == ErrorCode::kUnavailable || code == ErrorCode::kDeadlineExceeded;
}

}  // namespace ruleplane
