#include "tests/support/audit_log.h"

#include <fstream>

#include "engine/common/json_value.h"
#include "tests/support/test_helpers.h"

namespace ruleplane::testing {
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
    event.user = TextAt(*parsed, {"user", "username"});
    event.verb = TextAt(*parsed, {"verb"});
    event.resource = TextAt(*parsed, {"objectRef", "resource"});
    event.subresource = TextAt(*parsed, {"objectRef", "subresource"});
    event.namespace_name = TextAt(*parsed, {"objectRef", "namespace"});
    event.name = TextAt(*parsed, {"objectRef", "name"});
    const Value* code = ValueAt(*parsed, {"responseStatus", "code"});
    event.code = code != nullptr && code->is_int() ? static_cast<int>(code->int_value()) : 0;
    event.received = TextAt(*parsed, {"requestReceivedTimestamp"});
    if (const Value* spec = ValueAt(*parsed, {"responseObject", "spec"}); spec != nullptr && spec->is_map())
      event.lease_holder = TextAt(*spec, {"holderIdentity"});
    events.push_back(std::move(event));
  }
  return events;
}

}  // namespace ruleplane::testing
