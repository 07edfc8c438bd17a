#include "adapters/local/delta_file.h"

#include "engine/common/json_value.h"
#include "engine/common/sha256.h"
#include "platform/base64.h"

namespace ruleplane {
namespace {

Error DeltaError(const std::string& message) {
  return Error{ErrorCode::kParse, "delta snapshot: " + message, {}};
}

int64_t IntField(const Value& map, const char* key) {
  const Value* value = map.Find(key);
  return value != nullptr && value->is_int() ? value->int_value() : 0;
}

Result<std::string> BytesField(const Value& map, const char* key, size_t index) {
  const Value* value = map.Find(key);
  if (value == nullptr) return std::string();
  if (!value->is_string())
    return DeltaError("event " + std::to_string(index) + ": kv." + key + " is not base64 text");
  auto bytes = Base64Decode(value->string_value());
  if (!bytes) return DeltaError("event " + std::to_string(index) + ": kv." + key + " is not valid base64");
  return *bytes;
}

// Go's encoding/json: a []byte field is base64, an int64 a number; fields in
// struct order, omitempty leaves zero values out.
void AppendKeyValue(std::string& out, const KeyValue& kv) {
  std::string fields;
  auto add = [&](const char* name, const std::string& value) {
    fields += std::string(fields.empty() ? "" : ",") + "\"" + name + "\":" + value;
  };
  if (!kv.key.empty()) add("key", "\"" + Base64Encode(kv.key) + "\"");
  if (kv.create_revision != 0) add("create_revision", std::to_string(kv.create_revision));
  if (kv.mod_revision != 0) add("mod_revision", std::to_string(kv.mod_revision));
  if (kv.version != 0) add("version", std::to_string(kv.version));
  if (!kv.value.empty()) add("value", "\"" + Base64Encode(kv.value) + "\"");
  if (kv.lease != 0) add("lease", std::to_string(kv.lease));
  out += "{" + fields + "}";
}

}  // namespace

Result<std::vector<EtcdEvent>> ParseDelta(std::string_view bytes) {
  if (bytes.size() < 32) return DeltaError("shorter than its SHA-256");
  const std::string_view json = bytes.substr(0, bytes.size() - 32);
  if (Sha256Digest(json) != bytes.substr(bytes.size() - 32)) {
    return DeltaError("checksum mismatch: the last 32 bytes are not the SHA-256 of the events");
  }
  auto parsed = ParseJson(json);
  if (!parsed.ok()) return DeltaError(parsed.error().message);
  if (!parsed->is_list()) return DeltaError("not a JSON array of events");
  std::vector<EtcdEvent> events;
  const Value::List& items = parsed->list_value();
  for (size_t i = 0; i < items.size(); ++i) {
    const Value* etcd_event = items[i].is_map() ? items[i].Find("etcdEvent") : nullptr;
    const Value* kv = etcd_event != nullptr && etcd_event->is_map() ? etcd_event->Find("kv") : nullptr;
    if (kv == nullptr || !kv->is_map())
      return DeltaError("event " + std::to_string(i) + " has no etcdEvent.kv");
    EtcdEvent event;
    event.type = IntField(*etcd_event, "type") == 1 ? EtcdEvent::Type::kDelete : EtcdEvent::Type::kPut;
    auto key = BytesField(*kv, "key", i);
    if (!key.ok()) return key.error();
    auto value = BytesField(*kv, "value", i);
    if (!value.ok()) return value.error();
    event.kv.key = std::move(*key);
    event.kv.value = std::move(*value);
    event.kv.create_revision = IntField(*kv, "create_revision");
    event.kv.mod_revision = IntField(*kv, "mod_revision");
    event.kv.version = IntField(*kv, "version");
    event.kv.lease = IntField(*kv, "lease");
    if (event.kv.mod_revision <= 0) return DeltaError("event " + std::to_string(i) + " has no mod_revision");
    if (!events.empty() && event.kv.mod_revision < events.back().kv.mod_revision) {
      return DeltaError("event " + std::to_string(i) + " goes back in revision");
    }
    events.push_back(std::move(event));
  }
  return events;
}

std::string SerializeDelta(const std::vector<EtcdEvent>& events, std::string_view received_at) {
  std::string json = "[";
  for (size_t i = 0; i < events.size(); ++i) {
    if (i > 0) json += ",";
    json += "{\"etcdEvent\":{";
    if (events[i].type == EtcdEvent::Type::kDelete) json += "\"type\":1,";
    json += "\"kv\":";
    AppendKeyValue(json, events[i].kv);
    json += "},\"time\":\"" + std::string(received_at) + "\"}";
  }
  json += "]";
  return json + Sha256Digest(json);
}

std::vector<RevisionGroup> GroupByRevision(const std::vector<EtcdEvent>& events) {
  std::vector<RevisionGroup> groups;
  for (const EtcdEvent& event : events) {
    if (groups.empty() || groups.back().revision != event.kv.mod_revision) {
      groups.push_back({event.kv.mod_revision, {}});
    }
    groups.back().events.push_back(event);
  }
  return groups;
}

}  // namespace ruleplane
