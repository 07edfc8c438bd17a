#include "engine/common/snapshot.h"

#include <string>
#include <utility>

#include "engine/common/json_value.h"
#include "engine/common/sha256.h"
#include "engine/common/time_util.h"

namespace ruleplane {
namespace {

constexpr std::string_view kApiVersion = "ruleplane.dev/v1";
constexpr std::string_view kKindSuffix = "Snapshot";

Error InvalidSnapshot(std::string message) {
  return Error{ErrorCode::kInvalidSnapshot, "invalid snapshot: " + std::move(message), {}};
}

// A required top-level string field.
Result<std::string> RequiredString(const Value& document, std::string_view field) {
  const Value* value = document.Find(field);
  if (value == nullptr) return InvalidSnapshot("missing field '" + std::string(field) + "'");
  if (!value->is_string()) {
    return InvalidSnapshot("field '" + std::string(field) + "' must be a string, not " + value->TypeName());
  }
  return value->string_value();
}

}  // namespace

std::string Snapshot::subject() const {
  if (kind.size() > kKindSuffix.size() && kind.ends_with(kKindSuffix)) {
    return kind.substr(0, kind.size() - kKindSuffix.size());
  }
  return kind;
}

Result<Snapshot> ValidateSnapshot(Value document) {
  if (!document.is_map()) {
    return InvalidSnapshot(std::string("the document must be a JSON object, not ") + document.TypeName());
  }
  auto api_version = RequiredString(document, "apiVersion");
  if (!api_version.ok()) return api_version.error();
  if (*api_version != kApiVersion) {
    return InvalidSnapshot("apiVersion '" + *api_version + "' is not supported (expected '" +
                           std::string(kApiVersion) + "')");
  }
  auto kind = RequiredString(document, "kind");
  if (!kind.ok()) return kind.error();
  if (!kind->ends_with(kKindSuffix) || kind->size() == kKindSuffix.size()) {
    return InvalidSnapshot("kind '" + *kind +
                           "' must name a subject and end in 'Snapshot' (e.g. EtcdClusterSnapshot)");
  }
  auto observed_at_text = RequiredString(document, "observedAt");
  if (!observed_at_text.ok()) return observed_at_text.error();
  auto observed_at = ParseRfc3339(*observed_at_text);
  if (!observed_at.ok()) {
    return InvalidSnapshot("field 'observedAt' is not an RFC 3339 timestamp: " + observed_at.error().message);
  }
  Value params;
  if (const Value* given = document.Find("params"); given != nullptr && !given->is_null()) {
    if (!given->is_map())
      return InvalidSnapshot(std::string("field 'params' must be an object, not ") + given->TypeName());
    params = *given;
  }

  Snapshot snapshot;
  snapshot.kind = *kind;
  snapshot.observed_at = *observed_at;
  snapshot.params = std::move(params);
  snapshot.document = std::move(document);
  return snapshot;
}

Result<Snapshot> SnapshotFromValue(Value document) {
  auto snapshot = ValidateSnapshot(std::move(document));
  if (snapshot.ok()) snapshot->digest = "sha256:" + Sha256Hex(FormatJson(snapshot->document));
  return snapshot;
}

Result<Snapshot> ParseSnapshot(std::string_view json_text) {
  auto document = ParseJson(json_text);
  if (!document.ok()) return document.error();
  auto snapshot = ValidateSnapshot(std::move(*document));
  if (snapshot.ok()) snapshot->digest = "sha256:" + Sha256Hex(json_text);
  return snapshot;
}

}  // namespace ruleplane
