// Observing the members' data volumes as etcd-druid's DataVolumesReady check
// does (internal/health/condition/check_data_volumes_ready.go): for each of
// the snapshot's persistentVolumeClaims that is not Bound, its Warning Events,
// read now from the API server, as `unboundClaimWarnings`:
//
//   [{"claim": <name>, "events": [<the newest two Warning Events, oldest first, as the API returned them>]}
//    or {"claim": <name>, "error": <why they could not be read>}, ...]
//
// Every claim that is not Bound has an entry, warned or not. With every claim
// Bound no request is made and the snapshot is returned as it is, without
// the field (which the rules read as an empty list). Reads only.
#pragma once

#include "adapters/kubernetes/kube_client.h"
#include "engine/common/snapshot.h"

namespace ruleplane {

Result<Snapshot> WithUnboundClaimWarnings(const Snapshot& snapshot, KubeClient& client, RequestLog& log);

}  // namespace ruleplane
