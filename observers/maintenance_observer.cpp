#include "observers/maintenance_observer.h"

#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

Value Entry(const std::string& name, const std::string& endpoint, const char* field, Value value) {
  return Value::MakeMap({{Value::String("name"), Value::String(name)},
                         {Value::String("endpoint"), Value::String(endpoint)},
                         {Value::String(field), std::move(value)}});
}

}  // namespace

Result<Snapshot> WithMaintenanceStatus(const Snapshot& snapshot, const Result<MemberEndpoints>& members) {
  Value::List statuses;
  if (!members.ok()) {
    for (const Value& pod : FieldList(snapshot.document, {"pods"})) {
      statuses.push_back(
          Entry(FieldText(pod, {"metadata", "name"}), "", "error", Value::String(members.error().message)));
    }
  } else {
    EtcdClient client(members->config);
    for (const MemberEndpoint& member : members->members) {
      if (!member.reachable) {
        statuses.push_back(Entry(member.name, member.url, "error", Value::String("its Pod has no IP")));
        continue;
      }
      RequestLog log;
      auto status = client.MemberStatus(member.url, log);
      statuses.push_back(
          status.ok() ? Entry(member.name, member.url, "response", status->answer)
                      : Entry(member.name, member.url, "error", Value::String(status.error().message)));
    }
  }
  return SnapshotFromValue(
      WithField(snapshot.document, "maintenanceStatus", Value::MakeList(std::move(statuses))));
}

}  // namespace ruleplane
