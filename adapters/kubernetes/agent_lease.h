// The member-agent's Lease renewal: a Lease that etcd-druid created (a
// member's, or a snapshot Lease) patched with a holder, renewTime now and a
// duration, fenced by the resourceVersion just read. Used by the heartbeat
// and by the backups, each with its own client.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "adapters/kubernetes/kube_client.h"

namespace ruleplane {

// On a member's Lease: the member's revision as its agent last read it, and
// when (RFC 3339). Also written while the member answers without a leader,
// when the Lease is not renewed: a quorum-loss plan's data-loss bound reads
// the revision a surviving member holds after the loss.
inline constexpr const char* kRevisionAnnotation = "ruleplane.dev/revision";
inline constexpr const char* kRevisionTimeAnnotation = "ruleplane.dev/revision-time";
// Beside them: whose revision it is, "<member ID>:<cluster ID>" in hex without
// padding (as etcd-backup-restore's holderIdentity names them). A bound is
// only drawn from a member of the cluster etcd lists now.
inline constexpr const char* kRevisionMemberAnnotation = "ruleplane.dev/revision-member";

// On a member's Lease, as etcd-backup-restore's heartbeat writes it
// (pkg/health/heartbeat/heartbeat.go, PeerURLTLSEnabledKey): "true" when
// every peer URL of the member is https. etcd-druid waits for it on every
// member before it calls a peer TLS change done.
inline constexpr const char* kPeerTlsEnabledAnnotation = "member.etcd.gardener.cloud/tls-enabled";

// On the full-snapshot Lease (<etcd>-full-snap): the name of the full
// snapshot the compaction Job stored last. The members' garbage collection
// keeps what it replaced while it is the newest full (RetentionOptions).
inline constexpr const char* kCompactedFullAnnotation = "ruleplane.dev/compacted-full";

using LeaseAnnotations = std::vector<std::pair<std::string, std::string>>;

// The revision a member's agent recorded on its Lease (kRevisionAnnotation,
// decimal); -1 when there is none or it is not a number.
int64_t RecordedRevision(const Value& lease);
// The member whose revision that is (kRevisionMemberAnnotation), or for a
// Lease an agent wrote without it, the "<member ID>:<cluster ID>" that starts
// its holderIdentity; "" when neither says.
std::string RevisionRecorder(const Value& lease);

// `revision` >= 0: also annotate the Lease with it and `now`; `annotations`
// are written beside. A missing Lease is kFailedPrecondition (etcd-druid creates it).
Status RenewAgentLease(KubeClient& kube, const std::string& namespace_name, const std::string& name,
                       const std::string& holder, std::chrono::system_clock::time_point now,
                       int64_t duration_seconds, int64_t revision = -1,
                       const LeaseAnnotations& annotations = {});

// Only the revision annotations (`recorder`: kRevisionMemberAnnotation), the
// Lease's holder and renewal untouched.
Status RecordAgentRevision(KubeClient& kube, const std::string& namespace_name, const std::string& name,
                           std::chrono::system_clock::time_point now, int64_t revision,
                           const std::string& recorder);

}  // namespace ruleplane
