// The annotations ruleplane writes and reads on an Etcd object, beside
// etcd-druid's own: the re-bootstrap marker (the action MarkRebootstrap) and
// the approval of a quorum-loss recovery (controller_gates.h).
#pragma once

namespace ruleplane {

// The marker of an approved re-bootstrap from the backup, on the Etcd object:
// "<backup revision>:<approval>". The initialization rules (1.2.0) re-create
// the cluster from the backup only while it is there.
inline constexpr const char* kRebootstrapAnnotation = "ruleplane.dev/rebootstrap";
// The approval of a quorum-loss recovery: the digest of the plan it approves.
inline constexpr const char* kApprovePlanAnnotation = "ruleplane.dev/approve-plan";

}  // namespace ruleplane
