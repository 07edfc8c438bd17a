#include "tests/support/audit_log.h"

#include <fstream>

#include "engine/common/json_value.h"

namespace ruleplane::testing {
namespace {

std::string Text(const Value& object, std::initializer_list<std::string_view> keys) {
  const Value* value = ValueAt(object, keys);
  return value != nullptr && value->is_string() ? value->string_value() : "";
}

}  // namespace

std::string AuditEvent::Describe() const {
  return verb + " " + resource + (subresource.empty() ? "" : "/" + subresource) + " " + namespace_name + "/" +
         name + " " + std::to_string(code) + " by " + user + " at " + received;
}

std::vector<AuditEvent> ReadAuditLog(const std::string& path) {
  std::vector<AuditEvent> events;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto parsed = ParseJson(line);
    if (!parsed.ok() || !parsed->is_map()) continue;
    AuditEvent event;
    event.user = Text(*parsed, {"user", "username"});
    event.verb = Text(*parsed, {"verb"});
    event.resource = Text(*parsed, {"objectRef", "resource"});
    event.subresource = Text(*parsed, {"objectRef", "subresource"});
    event.namespace_name = Text(*parsed, {"objectRef", "namespace"});
    event.name = Text(*parsed, {"objectRef", "name"});
    const Value* code = ValueAt(*parsed, {"responseStatus", "code"});
    event.code = code != nullptr && code->is_int() ? static_cast<int>(code->int_value()) : 0;
    event.received = Text(*parsed, {"requestReceivedTimestamp"});
    if (const Value* spec = ValueAt(*parsed, {"responseObject", "spec"}); spec != nullptr && spec->is_map())
      event.lease_holder = Text(*spec, {"holderIdentity"});
    events.push_back(std::move(event));
  }
  return events;
}

}  // namespace ruleplane::testing
