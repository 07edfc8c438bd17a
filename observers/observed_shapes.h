// What each observer writes into its snapshots, as engine/verify/conformance.h
// reads it: the keys of the maps ruleplane builds, and `*` where an object is
// copied as the API server, etcd or a file gave it. The observers' tests check
// real observations against these, both ways ("?": a key not always written).
#pragma once

namespace ruleplane {

// cluster_observer.h: the controller's, `apply`'s and `plan --cluster`'s;
// maintenance_observer.h adds maintenanceStatus where a rule set reads it,
// data_volume_observer.h unboundClaimWarnings.
// compactionJob: <etcd>-compactor, etcd-druid's compaction Job, when it exists.
inline constexpr const char* kClusterSnapshotShape =
    "{apiVersion, kind, observedAt, etcd: *, statefulSet?: *, leases: [*], pods: [*],"
    " persistentVolumeClaims?: [*], podDisruptionBudget?: *, compactionJob?: *,"
    " maintenanceStatus?: [{name, endpoint, response?: *, error?}],"
    " unboundClaimWarnings?: [{claim, events?: [*], error?}]}";

// member_observer.h: member-init's.
inline constexpr const char* kMemberInitSnapshotShape =
    "{apiVersion, kind, observedAt,"
    " member: {name, peerURL, clientURL},"
    " etcdConfig: *, previousConfig: *, etcd: *,"
    " memberList: {members: [{ID, id, name, peerURLs: [*], clientURLs: [*], isLearner?}],"
    "              clusterID, leader, voters, answering, quorate},"
    " memberListError, memberLease: *,"
    " dataDir: {exists, empty, walHasMetadata, memberID, clusterID, dbExists, dbOpens, dbRevision, corrupt,"
    "           safeGuard, valid, verificationError, rebootstrap},"
    " backupStore: {reachable, paths?: [*], warnings?: [*],"
    "               snapshots?: [{name, kind, startRevision, lastRevision, createdOn, compression,"
    "                             final, path, cluster}]}}";

}  // namespace ruleplane
