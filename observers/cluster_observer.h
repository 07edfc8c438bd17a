// Observing an etcd cluster on Kubernetes: the EtcdClusterSnapshot of one
// Etcd object, read from the API server (reads only): the Etcd object, its
// StatefulSet, the Leases the Etcd owns (member and snapshot leases), the
// Pods the StatefulSet owns, the PersistentVolumeClaims of its claim
// templates, the PodDisruptionBudget and the compaction Job
// (<etcd>-compactor, when there is one), each exactly as
// the API returned it, as examples/README.md assembles one from kubectl.
// `observedAt` is taken before the first read, so every "for longer than"
// errs on the safe side.
#pragma once

#include <string>

#include "adapters/kubernetes/kube_client.h"
#include "adapters/kubernetes/object_cache.h"
#include "engine/common/snapshot.h"
#include "engine/common/time_util.h"

namespace ruleplane {

// kNotFound when there is no such Etcd; a missing StatefulSet or budget is
// left out of the snapshot (the rules decide what that means).
Result<Snapshot> ObserveCluster(KubeClient& client, const std::string& namespace_name,
                                const std::string& name, Timestamp now, RequestLog& log);

// The same snapshot from a cache that follows etcds, statefulsets, leases,
// pods, persistentvolumeclaims, poddisruptionbudgets and jobs: no request to
// the API server.
Result<Snapshot> ObserveClusterFromCache(const ObjectCache& cache, const std::string& namespace_name,
                                         const std::string& name, Timestamp now);

}  // namespace ruleplane
