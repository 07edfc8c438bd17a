#include "adapters/kubernetes/agent_lease.h"

#include <charconv>

namespace ruleplane {
namespace {

// The Lease patched with `spec` (null: left alone), the revision
// annotations and `annotations`, fenced as FencedMergePatch fences by the
// resourceVersion just read.
Status PatchAgentLease(KubeClient& kube, const std::string& namespace_name, const std::string& name,
                       std::chrono::system_clock::time_point now, int64_t revision, Value spec,
                       const LeaseAnnotations& annotations = {}) {
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
  Value::Map metadata = {{Value::String("resourceVersion"), Value::String(ResourceVersionOf(*current))}};
  Value::Map written;
  if (revision >= 0) {
    written.emplace_back(Value::String(kRevisionAnnotation), Value::String(std::to_string(revision)));
    written.emplace_back(Value::String(kRevisionTimeAnnotation), Value::String(FormatMicroTime(now)));
  }
  for (const auto& [key, value] : annotations) written.emplace_back(Value::String(key), Value::String(value));
  if (!written.empty())
    metadata.emplace_back(Value::String("annotations"), Value::MakeMap(std::move(written)));
  Value::Map patch = {{Value::String("metadata"), Value::MakeMap(std::move(metadata))}};
  if (!spec.is_null()) patch.emplace_back(Value::String("spec"), std::move(spec));
  auto patched = kube.MergePatch(lease, Value::MakeMap(std::move(patch)), log);
  if (!patched.ok()) return patched.error();
  return {};
}

}  // namespace

int64_t RecordedRevision(const Value& lease) {
  const Value* text = ValueAt(lease, {"metadata", "annotations", kRevisionAnnotation});
  if (text == nullptr || !text->is_string()) return -1;
  const std::string& digits = text->string_value();
  int64_t revision = -1;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), revision);
  return error == std::errc() && end == digits.data() + digits.size() && revision >= 0 ? revision : -1;
}

std::string RevisionRecorder(const Value& lease) {
  const Value* annotated = ValueAt(lease, {"metadata", "annotations", kRevisionMemberAnnotation});
  if (annotated != nullptr && annotated->is_string()) return annotated->string_value();
  const Value* holder = ValueAt(lease, {"spec", "holderIdentity"});
  if (holder == nullptr || !holder->is_string()) return "";
  const std::string& text = holder->string_value();
  const size_t first = text.find(':');
  if (first == std::string::npos) return "";
  return text.substr(0, text.find(':', first + 1));
}

Status RenewAgentLease(KubeClient& kube, const std::string& namespace_name, const std::string& name,
                       const std::string& holder, std::chrono::system_clock::time_point now,
                       int64_t duration_seconds, int64_t revision, const LeaseAnnotations& annotations) {
  return PatchAgentLease(
      kube, namespace_name, name, now, revision,
      Value::MakeMap({{Value::String("holderIdentity"), Value::String(holder)},
                      {Value::String("renewTime"), Value::String(FormatMicroTime(now))},
                      {Value::String("leaseDurationSeconds"), Value::Int(duration_seconds)}}),
      annotations);
}

Status RecordAgentRevision(KubeClient& kube, const std::string& namespace_name, const std::string& name,
                           std::chrono::system_clock::time_point now, int64_t revision,
                           const std::string& recorder) {
  return PatchAgentLease(kube, namespace_name, name, now, revision, Value::Null(),
                         {{kRevisionMemberAnnotation, recorder}});
}

}  // namespace ruleplane
