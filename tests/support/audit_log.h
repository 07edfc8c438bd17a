// Reading a test API server's audit log (KubeClusterOptions::audit_log): who
// wrote what, and when the server received it. Negative claims ("the deposed
// controller wrote nothing after ...") are read from here.
//
//   for (const AuditEvent& event : ReadAuditLog(kube->audit_log_path()))
//     if (event.user == "controller" && event.Succeeded()) ...
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ruleplane::testing {

struct AuditEvent {
  std::string user;         // user.username
  std::string verb;         // create, update, patch, delete, ...
  std::string resource;     // objectRef.resource ("leases", "etcds", ...)
  std::string subresource;  // objectRef.subresource ("status", "scale", or "")
  std::string namespace_name;
  std::string name;
  int code = 0;  // responseStatus.code
  // requestReceivedTimestamp: RFC 3339 in UTC with six fractional digits,
  // so that text order is time order.
  std::string received;
  // responseObject.spec.holderIdentity: the holder a Lease write left, when
  // the event carries the body (RequestResponse; a create, whose name is not
  // in its URL, matches no resourceNames rule and has none).
  std::optional<std::string> lease_holder;

  bool Succeeded() const { return code >= 200 && code < 300; }
  // "patch etcds/status default/etcd-main 200 by controller at ...", for messages.
  std::string Describe() const;
};

// Every event of the file, in the order written (unparsable lines skipped).
std::vector<AuditEvent> ReadAuditLog(const std::string& path);

}  // namespace ruleplane::testing
