#include "observers/data_volume_observer.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "adapters/kubernetes/object_fields.h"

namespace ruleplane {
namespace {

// When the event was last seen: lastTimestamp, or eventTime for events.k8s.io
// writers, which leave it empty (both RFC 3339 in UTC, so they sort as text).
std::string LastSeen(const Value& event) {
  const std::string last = FieldText(event, {"lastTimestamp"});
  return last.empty() ? FieldText(event, {"eventTime"}) : last;
}

// etcd-druid shows the last two (fetchEventMessages' eventsLimit).
constexpr size_t kEventsPerClaim = 2;

}  // namespace

Result<Snapshot> WithUnboundClaimWarnings(const Snapshot& snapshot, KubeClient& client, RequestLog& log) {
  Value::List warnings;
  const std::string namespace_name = FieldText(snapshot.document, {"etcd", "metadata", "namespace"});
  for (const Value& claim : FieldList(snapshot.document, {"persistentVolumeClaims"})) {
    if (FieldText(claim, {"status", "phase"}) == "Bound") continue;
    const std::string name = FieldText(claim, {"metadata", "name"});
    auto events = client.List(
        {"v1", "events", namespace_name, "", ""}, "", log,
        "involvedObject.kind=PersistentVolumeClaim,involvedObject.name=" + name + ",type=Warning");
    if (!events.ok()) {
      warnings.push_back(Value::MakeMap({{Value::String("claim"), Value::String(name)},
                                         {Value::String("error"), Value::String(events.error().message)}}));
    } else {
      const Value::List items = FieldList(*events, {"items"});
      std::vector<std::pair<std::string, size_t>> by_time;  // (last seen, index): sorted, the Values stay put
      for (size_t i = 0; i < items.size(); ++i) by_time.emplace_back(LastSeen(items[i]), i);
      std::sort(by_time.begin(), by_time.end());
      Value::List newest;
      for (size_t i = by_time.size() > kEventsPerClaim ? by_time.size() - kEventsPerClaim : 0;
           i < by_time.size(); ++i)
        newest.push_back(items[by_time[i].second]);
      warnings.push_back(Value::MakeMap({{Value::String("claim"), Value::String(name)},
                                         {Value::String("events"), Value::MakeList(std::move(newest))}}));
    }
  }
  if (warnings.empty()) return snapshot;
  return SnapshotFromValue(
      WithField(snapshot.document, "unboundClaimWarnings", Value::MakeList(std::move(warnings))));
}

}  // namespace ruleplane
