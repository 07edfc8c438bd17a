// The Etcd status fields that report its StatefulSet, as etcd-druid writes
// them at every reconcile (internal/controller/etcd/reconcile_status.go):
// currentReplicas, readyReplicas and updatedReplicas from the StatefulSet's
// status, replicas = its currentReplicas, etcd (a reference to it), and the
// member pods' label selector, as a string in `selector` (the CRD's scale
// subresource reads it, so `kubectl scale` and autoscalers work) and as an
// object in the deprecated `labelSelector`. No decision rests on them: the
// rules read the StatefulSet itself. Pure: the reconciler writes the patch.
#pragma once

#include "engine/common/value.h"

namespace ruleplane {

// The fields for the Etcd `etcd` as observed and its StatefulSet
// (`stateful_set`, null when there is none: 0 current and ready replicas),
// or null when the status already says all of them.
Value StatefulSetStatus(const Value& etcd, const Value* stateful_set);

// `selector` (a LabelSelector's matchLabels) as Kubernetes prints it:
// "key=value" pairs in key order, joined by commas.
std::string SelectorText(const Value& selector);

}  // namespace ruleplane
