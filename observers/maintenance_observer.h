// Observing the members' maintenance status for the controller: each member
// Pod's /v3/maintenance/status (db size, size in use, revision, leader), read
// now over the client URL the members advertise (adapters/kubernetes/
// member_endpoints.h), as `maintenanceStatus` in the EtcdClusterSnapshot:
//
//   [{"name": <pod>, "endpoint": <client URL>, "response": <etcd's answer as its JSON gateway sends it>}
//    or {"name", "endpoint", "error": <why there is no answer>}, ...]
//
// A member that does not answer is an entry with its error, never left out:
// the rules tell "no answer" from "no member". Reads only.
#pragma once

#include "adapters/kubernetes/member_endpoints.h"
#include "engine/common/snapshot.h"

namespace ruleplane {

// `members`: ResolveMemberEndpoints' answer for this snapshot, or its error
// (then every member's entry carries it).
Result<Snapshot> WithMaintenanceStatus(const Snapshot& snapshot, const Result<MemberEndpoints>& members);

}  // namespace ruleplane
