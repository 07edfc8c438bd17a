// MemberAgent: what runs beside each etcd member (etcd-backup-restore's
// sidecar duties that etcd-druid's decisions read). Its heartbeat, one at a
// time:
//
//   - while the member answers and is a voting member of the cluster, renew
//     its Lease (named as the member) with holderIdentity
//     "<memberID hex>:<Leader|Member>" (DEP-01), renewTime now and a duration
//     of three heartbeats, and the member's revision in the annotation
//     ruleplane.dev/revision (the controller's data-loss bound compares it
//     with the backup's); an unhealthy member's lease is left to expire, which
//     is how etcd-druid notices it;
//   - while the member is healthy and the member list has it at a peer URL
//     other than the one its etcd advertises (a member started at https
//     while the cluster could not commit the change: member-init's decision
//     I19 without a quorum), update the list to that URL, as
//     etcd-backup-restore's sidecar does at its start (updatePeerURLIfChanged,
//     pkg/server/backuprestoreserver.go); not while another member joins;
//   - when the member leads, remove at most one etcd member a scale-down left
//     behind (surplus_members.h: learners first, the leader last), only when
//     no running Pod stands for it and the cluster stays quorate without it,
//     counting the members healthy now; the next one at a later heartbeat,
//     decided from the member list as it is then.
//
// The leader's backups are MemberBackups' (member_backups.h), run on a thread
// of their own: a heartbeat never waits for a snapshot.
//
// Every Lease write is fenced by the resourceVersion just read. Flags and
// defaults as etcd-backup-restore names them (--k8s-heartbeat-duration 10s,
// --schedule, --delta-snapshot-period, --delta-snapshot-memory-limit,
// --compress-snapshots, --compression-policy, --garbage-collection-policy,
// --max-backups, --garbage-collection-period,
// --delta-snapshot-retention-period).
#pragma once

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "adapters/etcd/etcd_client.h"
#include "adapters/kubernetes/agent_lease.h"
#include "adapters/kubernetes/kube_client.h"
#include "engine/common/value.h"
#include "member/backup_retention.h"

namespace ruleplane {

struct MemberAgentOptions {
  std::string member_name;  // also its Lease's name
  std::string etcd_name;    // the Etcd object whose BackupReady condition it keeps; "" = none
  std::string client_url;   // this member's client URL
  // The peer URL this member's etcd advertises (member-init's --peer-url);
  // "" = not known, the member list's is left as it is.
  std::string peer_url;
  std::string namespace_name;
  std::string full_snapshot_lease;   // "" = none
  std::string delta_snapshot_lease;  // "" = none
  // etcd-backup-restore's defaults (pkg/types/snapshotter.go): a full
  // snapshot every hour (cron, UTC), a delta every 20 s; a delta period under
  // one second takes no deltas (its DeltaSnapshotIntervalThreshold).
  std::string schedule = "0 */1 * * *";
  std::chrono::nanoseconds delta_period = std::chrono::seconds(20);
  // A delta holds at most about this many bytes of events; the rest goes
  // into the next one, taken at once (its DefaultDeltaSnapMemoryLimit).
  int64_t delta_memory_limit = int64_t{10} << 20;
  // gzip, as etcd-druid's and etcd-backup-restore's default compression.
  std::string compression_suffix = ".gz";
  // The object store's credentials (a directory or file; "" = none): when
  // they change, the next snapshot is a full one, as etcd-backup-restore
  // does after a credentials rotation.
  std::string store_credentials;
  std::chrono::seconds heartbeat{10};
  // Garbage collection of the backups, by the leader: etcd-backup-restore's
  // --garbage-collection-policy (Exponential), --max-backups (7) and
  // --delta-snapshot-retention-period (0), checked every
  // --garbage-collection-period (1 minute).
  RetentionOptions retention;
  std::chrono::nanoseconds garbage_collection_period = kDefaultGarbageCollectionPeriod;
  // Snapshots asked for on the API (/snapshot/full, /snapshot/delta): at
  // most one of each kind per interval, so that a caller in a loop neither
  // fills the store nor loads etcd (ruleplane's; 0 = no limit).
  std::chrono::seconds snapshot_request_interval{30};
};

// ["a", "b"], for the log lines.
Value StringList(const std::vector<std::string>& strings);

// What one heartbeat did, for the log line.
struct AgentRound {
  bool healthy = false;
  uint64_t cluster_id = 0;             // the etcd cluster the member answered for; 0 when it did not
  std::string holder_identity;         // written to the member lease; "" when not renewed
  std::string backup;                  // the snapshot taken, "" when none (--once only)
  std::vector<std::string> collected;  // the snapshots garbage-collected (--once only)
  std::vector<std::string> removed;    // the surplus member removed from the etcd cluster (at most one)
  std::vector<std::string> kept;       // surplus members left in place, "<name>: why"
  std::string peer_url_updated;  // the peer URL the member list now has for this member, "" when unchanged
  std::string error;             // what went wrong, "" when nothing
  void AddError(const std::string& text);  // error, or "; " and text after it
  Value ToValue() const;
};

class MemberAgent {
 public:
  MemberAgent(MemberAgentOptions options, EtcdClient& cluster, KubeClient& kube);

  AgentRound Heartbeat(std::chrono::system_clock::time_point now);

 private:
  // The leader's cleanup (DEP-01, seeds/000:556, 747): of the etcd members
  // named <etcd>-<ordinal> with an ordinal >= the larger of the Etcd's
  // spec.replicas and status.clusterSize (after a scale-down), never this
  // member itself, the first in SurplusMembers' order that no running Pod
  // stands for (a Pod named as it that exists and is not being deleted) and
  // without which a majority of the voting members is healthy is removed.
  Status RemoveSurplusMember(const std::vector<EtcdMember>& members, const EtcdStatus& self,
                             AgentRound& round);
  // The members that answer their status now with this cluster's ID and a
  // leader (this member included).
  std::set<uint64_t> HealthyMembers(const std::vector<EtcdMember>& members, const EtcdStatus& self);
  // The peer URL repair: the member list's entry for this member made options_.peer_url.
  Status UpdateOwnPeerUrl(const std::vector<EtcdMember>& members, const EtcdStatus& self, AgentRound& round);
  // Why `member` must stay because of its Pod: "" when no running Pod stands for it.
  std::string PodStandsFor(const EtcdMember& member);

  MemberAgentOptions options_;
  EtcdClient& cluster_;
  KubeClient& kube_;
};

}  // namespace ruleplane
