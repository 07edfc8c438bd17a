// BackupSidecarAdapter: the catalogue's `adapter: backup-sidecar` actions,
// through etcd-backup-restore's HTTP API that member-agent serves on each
// member Pod (spec.backup.port, 8080 by default):
//
//   TriggerFullSnapshot  params maxAttempts (default 1): POST /snapshot/full
//                        on the leading member's Pod (any other member
//                        forwards it to the leader); done when the store's
//                        latest full snapshot (GET /snapshot/latest) reaches
//                        the revision the members held when observed (their
//                        Leases' ruleplane.dev/revision). A snapshot that
//                        fails maxAttempts times fails the step for good: a
//                        plan that scales to 0 after it stops there, with the
//                        last backup untouched (etcd-druid's hibernation).
//
// The Pods, Leases and port come from the snapshot the plan was made from;
// what counts as done is read from the sidecar, now.
#pragma once

#include <chrono>

#include "adapters/adapter.h"
#include "engine/common/snapshot.h"

namespace ruleplane {

class BackupSidecarAdapter : public Adapter {
 public:
  // `timeout`: per request; a full snapshot is answered when it is uploaded.
  explicit BackupSidecarAdapter(const Snapshot& snapshot,
                                std::chrono::milliseconds timeout = std::chrono::minutes(5));

  std::string_view kind() const override { return "backup-sidecar"; }
  Result<bool> IsDone(const PlanStep& step, RequestLog& log) override;
  Status Perform(const PlanStep& step, RequestLog& log) override;

 private:
  // http://<Pod IP>:<spec.backup.port>, of the leading member's Pod when a
  // Lease names a leader, else of the first Pod with an IP.
  Result<std::string> SidecarUrl() const;

  const Value& document_;
  std::chrono::milliseconds timeout_;
};

}  // namespace ruleplane
