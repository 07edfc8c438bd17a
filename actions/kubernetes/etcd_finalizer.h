// etcd-druid's finalizer on an Etcd (druid.gardener.cloud/etcd), added and
// removed by the actions AddEtcdFinalizer and RemoveEtcdFinalizer.
#pragma once

#include "actions/kubernetes/kubernetes_action_context.h"
#include "adapters/request.h"
#include "engine/common/error.h"
#include "engine/common/value.h"

namespace ruleplane {

inline constexpr const char* kEtcdFinalizer = "druid.gardener.cloud/etcd";

bool HasEtcdFinalizer(const Value& etcd);

// The Etcd's metadata.finalizers with (`present`) or without the finalizer,
// the others kept: a merge patch of the whole list, fenced by the
// resourceVersion of the Etcd as this plan last saw it.
Status WriteEtcdFinalizer(KubernetesActionContext& context, bool present, RequestLog& log);

}  // namespace ruleplane
