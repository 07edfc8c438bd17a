// Observing a member before its etcd starts: everything the initialization
// tables read, observed rather than typed by hand, as an
// EtcdMemberInitSnapshot document:
//
//   member          this member's name and URLs
//   etcdConfig      the configuration template etcd-druid mounts
//   previousConfig  the configuration generated at the previous start, or null
//   etcd            the Etcd object (from a file, as `kubectl get etcd -o json` prints it)
//   memberList      what the cluster says now, or null when no endpoint answers: its
//                   members (as the JSON gateway lists them, with `id` in hex),
//                   `clusterID`, `leader`, `voters`, `answering` (voters that answer
//                   their status with that cluster and a leader) and `quorate`
//                   (2 * answering > voters)
//   memberListError why memberList is null ("" when it is not): no endpoint given,
//                   or the member list call's error
//   memberLease     this member's Lease, when given, else null
//   dataDir         the data directory's facts (adapters/local/data_dir.h)
//   backupStore     the store's listing (adapters/local/backup_store.h), and its paths;
//                   snapshots named beyond the cluster's revision (when it answers)
//                   are skipped into its warnings
//
// Observing only reads.
#pragma once

#include <string>

#include "adapters/etcd/etcd_client.h"
#include "adapters/local/backup_store.h"
#include "adapters/local/local_member.h"
#include "engine/common/snapshot.h"

namespace ruleplane {

struct MemberObservationSources {
  LocalMember member;
  EtcdClient* cluster = nullptr;  // null: the member list is not observed
  BackupStore* store = nullptr;   // null: no backup store
  Value etcd;                     // the Etcd object
  Value member_lease;             // this member's Lease, or null
};

Result<Snapshot> ObserveMember(const MemberObservationSources& sources, Timestamp now);
// ObserveMember at the wall clock's time now (member-init, observe member).
Result<Snapshot> ObserveMemberNow(const MemberObservationSources& sources);

// The client URLs of the members the etcd configuration file at
// `config_path` lists in initial-cluster: each peer URL's host with the
// scheme and port of listen-client-urls (http and 2379 when it has none).
// How member-init finds the cluster without --endpoints: the one its
// configuration describes. Empty when the file lists no initial-cluster.
// With `member_name` and its Etcd object: also every member the cluster could
// have, ordinals 0 up to the largest of the template's members, spec.replicas
// and status.clusterSize, when the member's own host is named after it as a
// StatefulSet's Pod is (<member>.<peer Service>...): a template that lags a
// scale-up does not hide the members that joined (issue 41, hazard 1).
Result<std::vector<std::string>> ClientEndpointsOfConfig(const std::string& config_path,
                                                         const std::string& member_name = "",
                                                         const Value& etcd = Value());

}  // namespace ruleplane
