// MemberAgent: what runs beside each etcd member (etcd-backup-restore's
// sidecar duties that etcd-druid's decisions read), one heartbeat at a time:
//
//   - while the member answers and is a voting member of the cluster, renew
//     its Lease (named as the member) with holderIdentity
//     "<memberID hex>:<Leader|Member>" (DEP-01), renewTime now and a duration
//     of three heartbeats, and the member's revision in the annotation
//     ruleplane.dev/revision (the controller's data-loss bound compares it
//     with the backup's); an unhealthy member's lease is left to expire, which
//     is how etcd-druid notices it;
//   - when the member leads, take the full snapshot the cron schedule asks for
//     (or the first one), else a delta every delta period, into the backup
//     store, and renew the full and delta snapshot Leases with the revisions
//     they hold (holderIdentity: the revision, decimal), and keep the Etcd's
//     BackupReady condition: True (BackupSucceeded) after a snapshot was
//     uploaded, False (BackupFailed) after one failed, written only when the
//     condition changes. DEP-01 gives that condition to the leading sidecar
//     ("the most recent backup upload (full or incremental) succeeded",
//     seeds/000 lines 169, 251-252); the reasons are etcd-druid's.
//
// Every Lease write is fenced by the resourceVersion just read. Flags and
// defaults as etcd-backup-restore names them (--k8s-heartbeat-duration 10s,
// --schedule, --delta-snapshot-period 20s).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "adapters/backup_taker.h"
#include "adapters/kubernetes/kube_client.h"
#include "engine/common/value.h"

namespace ruleplane {

// On a member's Lease: the member's revision at the last renewal.
inline constexpr const char* kRevisionAnnotation = "ruleplane.dev/revision";

struct MemberAgentOptions {
  std::string member_name;  // also its Lease's name
  std::string etcd_name;    // the Etcd object whose BackupReady condition it keeps; "" = none
  std::string client_url;   // this member's client URL
  std::string namespace_name;
  std::string full_snapshot_lease;        // "" = none
  std::string delta_snapshot_lease;       // "" = none
  std::string schedule = "0 */24 * * *";  // full snapshots (cron, UTC)
  std::chrono::seconds delta_period{20};
  std::chrono::seconds heartbeat{10};
};

// What one heartbeat did, for the log line.
struct AgentRound {
  bool healthy = false;
  std::string holder_identity;       // written to the member lease; "" when not renewed
  std::string backup;                // the snapshot taken, "" when none
  std::vector<std::string> removed;  // superfluous members removed from the etcd cluster
  std::string error;                 // what went wrong, "" when nothing
  Value ToValue() const;
};

class MemberAgent {
 public:
  // `store` may be null: no backups.
  MemberAgent(MemberAgentOptions options, EtcdClient& cluster, KubeClient& kube, BackupStore* store);

  AgentRound Heartbeat(std::chrono::system_clock::time_point now);

 private:
  // `revision` >= 0: also annotate the Lease with it (kRevisionAnnotation).
  Status RenewLease(const std::string& name, const std::string& holder,
                    std::chrono::system_clock::time_point now, int64_t revision = -1);
  // The backup due now, taken: its name is "" when none was due or the
  // cluster had not moved; `lease` is the snapshot Lease it renews.
  struct DueBackup {
    TakenBackup taken;
    std::string lease;
  };
  Result<DueBackup> TakeDueBackup(std::chrono::system_clock::time_point now);
  Status SetBackupReady(bool succeeded, const std::string& message,
                        std::chrono::system_clock::time_point now);
  // The leader's cleanup (DEP-01, seeds/000:556, 747): etcd members named
  // <etcd>-<ordinal> that no pod stands for, ordinal >= the larger of the
  // Etcd's spec.replicas and status.clusterSize (after a scale-down), are
  // removed from the cluster, never this member itself.
  Status RemoveSuperfluousMembers(const std::vector<EtcdMember>& members, uint64_t self, AgentRound& round);

  MemberAgentOptions options_;
  EtcdClient& cluster_;
  KubeClient& kube_;
  BackupStore* store_;
  std::optional<std::chrono::system_clock::time_point> last_delta_;
};

}  // namespace ruleplane
