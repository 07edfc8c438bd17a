#include "adapters/agent_lease.h"

namespace ruleplane {

Status RenewAgentLease(KubeClient& kube, const std::string& namespace_name, const std::string& name,
                       const std::string& holder, std::chrono::system_clock::time_point now,
                       int64_t duration_seconds, int64_t revision) {
  RequestLog log;
  const KubeResource lease{"coordination.k8s.io/v1", "leases", namespace_name, name, ""};
  auto current = kube.Get(lease, log);
  if (!current.ok()) {
    if (current.error().code == ErrorCode::kNotFound) {
      return Error{ErrorCode::kFailedPrecondition,
                   "the Lease " + name + " does not exist (etcd-druid creates it)",
                   {}};
    }
    return current.error();
  }
  // Fenced as FencedMergePatch fences, with the revision annotation beside the resourceVersion.
  Value::Map metadata = {{Value::String("resourceVersion"), Value::String(ResourceVersionOf(*current))}};
  if (revision >= 0) {
    metadata.emplace_back(
        Value::String("annotations"),
        Value::MakeMap({{Value::String(kRevisionAnnotation), Value::String(std::to_string(revision))}}));
  }
  const Value patch = Value::MakeMap(
      {{Value::String("metadata"), Value::MakeMap(std::move(metadata))},
       {Value::String("spec"),
        Value::MakeMap({{Value::String("holderIdentity"), Value::String(holder)},
                        {Value::String("renewTime"), Value::String(FormatMicroTime(now))},
                        {Value::String("leaseDurationSeconds"), Value::Int(duration_seconds)}})}});
  auto patched = kube.MergePatch(lease, patch, log);
  if (!patched.ok()) return patched.error();
  return {};
}

}  // namespace ruleplane
