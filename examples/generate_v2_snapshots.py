#!/usr/bin/env python3
"""Writes the v2-*.json example snapshots in examples/snapshots/: the scenarios of rules/etcd-druid/VERSIONS.md.

    python3 examples/generate_v2_snapshots.py        # from the repository root

Each is a scenario where version 1 (DEP-01) and version 2 (etcd-druid and etcd-backup-restore as released) of
the rule sets decide differently. The templates are pink-of-health.json and member-init-restart-valid.json (every
object as its API returns it); this script turns them into what today's components write and read: holder
identities <memberID>:<clusterID>:<role>, the conditions etcd-druid maintains today (AllMembersUpdated and
ClusterIDMismatch too), and for a member's start-up its own lease, the safe_guard file, whether the database
opens and the backup store listing as object paths. Run it after changing a template or a scenario, then
`ruleplane test rules/` and the versions test (tests/versions_test.cpp).
"""

import copy
import datetime
import re

from generate_snapshots import SNAPSHOTS, load, renamed, write

NOW = datetime.datetime(2024, 5, 1, 10, 0, 0, tzinfo=datetime.timezone.utc)
CLUSTER_ID = "ef37ad9dc622a7c4"
IDS = ["8e9e05c52164694d", "91bc3c398fb3c146", "fd422379fda50e48", "2f0e6c1b8a9d3e71", "c4a7d92e15b08f36"]
LONG_AGO = "2024-04-28T06:02:11Z"
CONDITION_TEXT = {
    ("Ready", "True"): ("Quorate", "The majority of ETCD members is ready"),
    ("Ready", "False"): ("QuorumLost", "The majority of ETCD members is not ready"),
    ("AllMembersReady", "True"): ("AllMembersReady", "All members are ready"),
    ("AllMembersReady", "False"): ("NotAllMembersReady", "At least one member is not ready"),
    ("AllMembersUpdated", "True"): ("AllMembersUpdated", "All members reflect latest desired spec"),
    ("BackupReady", "True"): ("BackupSucceeded", "Delta snapshot backup succeeded"),
    ("BackupReady", "False"): ("BackupFailed", "Stale snapshot leases. Not renewed in a long time"),
    ("ClusterIDMismatch", "False"): ("NoClusterIDMismatchDetected", "All members report the same cluster ID"),
    ("ClusterIDMismatch", "Unknown"): ("NoClusterIDDetected", "No cluster ID detected in the member leases"),
}
# The backup store as object paths, both layouts, newest full snapshot at revision 1048211.
PREFIX = "shoot--dev--demo--7f1c3e9a/etcd-main"
BACKUP_PATHS = [
    f"{PREFIX}/v1/Backup-1714435200/Full-00000000-01040000-1714435200",
    f"{PREFIX}/v1/Backup-1714435200/Incr-01040001-01041000-1714435500",
    f"{PREFIX}/v2/Full-00000000-01048211-1714526280.gz",
    f"{PREFIX}/v2/Incr-01048212-01049411-1714556400.gz",
    f"{PREFIX}/v2/Incr-01049412-01050611-1714556700.gz",
    f"{PREFIX}/v2/Incr-01050612-01051811-1714557000.gz",
]


def at(seconds_before_now, micro=False):
    """The RFC 3339 time `seconds_before_now` before observedAt (a MicroTime when micro)."""
    t = NOW - datetime.timedelta(seconds=seconds_before_now)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")


def by_name(objects, name):
    return next(o for o in objects if o["metadata"]["name"] == name)


def set_condition(s, kind, status, since=LONG_AGO, reason=None, message=None):
    conditions = s["etcd"]["status"]["conditions"]
    default_reason, default_message = CONDITION_TEXT.get((kind, status), ("Unknown", ""))
    condition = {"type": kind, "status": status, "lastTransitionTime": since, "lastUpdateTime": at(12),
                 "reason": reason or default_reason, "message": message or default_message}
    for i, c in enumerate(conditions):
        if c["type"] == kind:
            conditions[i] = condition
            return
    conditions.append(condition)


def set_member(s, ordinal, status, reason, since):
    member = s["etcd"]["status"]["members"][ordinal]
    member.update({"status": status, "reason": reason, "lastTransitionTime": since})


def set_lease(s, ordinal, renewed_seconds_ago, holder=None):
    spec = by_name(s["leases"], f"etcd-main-{ordinal}")["spec"]
    spec["renewTime"] = at(renewed_seconds_ago, micro=True)
    if holder is not None:
        spec["holderIdentity"] = holder


def set_pod(s, ordinal, ready, since, crash_looping=False):
    """The pod's Ready and ContainersReady conditions, and its etcd container."""
    pod = by_name(s["pods"], f"etcd-main-{ordinal}")
    for c in pod["status"]["conditions"]:
        if c["type"] in ("Ready", "ContainersReady"):
            c["status"] = "True" if ready else "False"
            c["lastTransitionTime"] = since
            if not ready:
                c["reason"] = "ContainersNotReady"
                c["message"] = "containers with unready status: [etcd]"
    etcd = next(c for c in pod["status"]["containerStatuses"] if c["name"] == "etcd")
    etcd["ready"] = ready
    if crash_looping:
        etcd["restartCount"] = 7
        etcd["started"] = False
        etcd["state"] = {"waiting": {"reason": "CrashLoopBackOff",
                                     "message": "back-off 5m0s restarting failed container=etcd"}}
        etcd["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": at(150),
                                            "finishedAt": at(140)}}


def set_ready_replicas(s, ready):
    for status in (s["statefulSet"]["status"], s["etcd"]["status"]):
        status["readyReplicas"] = ready
    s["statefulSet"]["status"]["availableReplicas"] = ready
    s["etcd"]["status"]["ready"] = ready >= s["etcd"]["spec"]["replicas"]
    pdb = s["podDisruptionBudget"]["status"]
    pdb["currentHealthy"] = ready
    pdb["disruptionsAllowed"] = max(0, ready - s["podDisruptionBudget"]["spec"]["minAvailable"])


def cluster_base():
    """A healthy 3-member cluster as etcd-druid and etcd-backup-restore write it today."""
    s = load("pink-of-health.json")
    for ordinal in range(3):
        lease = by_name(s["leases"], f"etcd-main-{ordinal}")
        member_id, role = lease["spec"]["holderIdentity"].split(":")
        lease["spec"]["holderIdentity"] = f"{member_id}:{CLUSTER_ID}:{role}"
    s["etcd"]["status"]["conditions"] = []
    for kind, status in [("Ready", "True"), ("AllMembersReady", "True"), ("AllMembersUpdated", "True"),
                         ("BackupReady", "True"), ("ClusterIDMismatch", "False")]:
        set_condition(s, kind, status)
    statefulset = s["etcd"]["metadata"]["namespace"] + "/" + s["etcd"]["metadata"]["name"]
    set_condition(s, "DataVolumesReady", "True", reason="NoWarningsFoundForDataVolumes",
                  message=f"No warning events found for PVCs used by StatefulSet {statefulset}")
    return s


def add_members(s, count):
    """Members, leases and pods of ordinals 3 .. count-1, made like ordinal 1's."""
    for ordinal in range(3, count):
        name = f"etcd-main-{ordinal}"
        member = copy.deepcopy(s["etcd"]["status"]["members"][1])
        member.update({"name": name, "id": IDS[ordinal]})
        s["etcd"]["status"]["members"].append(member)
        lease = renamed(by_name(s["leases"], "etcd-main-1"), "etcd-main-1", name)
        lease["spec"]["holderIdentity"] = f"{IDS[ordinal]}:{CLUSTER_ID}:Member"
        lease["metadata"]["uid"] = lease["metadata"]["uid"][:-1] + str(ordinal)
        s["leases"].insert(ordinal, lease)
        pod = renamed(by_name(s["pods"], "etcd-main-1"), "etcd-main-1", name)
        pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = str(ordinal)
        pod["metadata"]["uid"] = pod["metadata"]["uid"][:-1] + str(ordinal)
        s["pods"].append(pod)


def resize(s, members, desired):
    """members running (StatefulSet and status), desired in spec.replicas."""
    add_members(s, members)
    s["etcd"]["spec"]["replicas"] = desired
    s["etcd"]["status"]["clusterSize"] = members
    for key in ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas"):
        s["etcd"]["status"][key] = members
    s["statefulSet"]["spec"]["replicas"] = members
    for key in ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        s["statefulSet"]["status"][key] = members
    pdb = s["podDisruptionBudget"]
    pdb["spec"]["minAvailable"] = members // 2 + 1
    pdb["status"].update({"currentHealthy": members, "desiredHealthy": members // 2 + 1,
                          "expectedPods": members, "disruptionsAllowed": members - (members // 2 + 1)})


def request_reconcile(s):
    """Gardener's gardener.cloud/operation: reconcile, as it leaves it on a changed Etcd: today's etcd-druid
    reconciles the spec of an Etcd it reconciled before only when asked."""
    s["etcd"]["metadata"]["annotations"] = {"gardener.cloud/operation": "reconcile",
                                            **s["etcd"]["metadata"].get("annotations", {})}


def cluster_scenarios():
    scenarios = {}

    scenarios["v2-pink-of-health.json"] = cluster_base()

    # Two members NotReady for 10 minutes: their leases stopped at 09:44, U + N later they became NotReady.
    s = cluster_base()
    for ordinal in (1, 2):
        set_lease(s, ordinal, 16 * 60)
        set_member(s, ordinal, "NotReady", "UnknownGracePeriodExceeded", at(10 * 60))
        set_pod(s, ordinal, False, at(15 * 60), crash_looping=True)
    set_condition(s, "Ready", "False", at(10 * 60))
    set_condition(s, "AllMembersReady", "False", at(15 * 60))
    set_ready_replicas(s, 1)
    scenarios["v2-quorum-lost.json"] = s

    # One member NotReady for 8 minutes, its etcd container crash-looping.
    s = cluster_base()
    set_lease(s, 2, 14 * 60)
    set_member(s, 2, "NotReady", "UnknownGracePeriodExceeded", at(8 * 60))
    set_pod(s, 2, False, at(13 * 60), crash_looping=True)
    set_condition(s, "AllMembersReady", "False", at(13 * 60))
    set_ready_replicas(s, 2)
    scenarios["v2-minority-not-ready.json"] = s

    # spec.replicas lowered from 5 to 3 on a healthy cluster.
    s = cluster_base()
    resize(s, 5, 3)
    request_reconcile(s)
    scenarios["v2-scale-down.json"] = s

    # spec.replicas raised from 3 to 5 on a healthy cluster.
    s = cluster_base()
    resize(s, 3, 5)
    request_reconcile(s)
    scenarios["v2-scale-up.json"] = s

    # etcd-main-1's sidecar stopped renewing 90 s ago; its pod is still ready and its status still Ready.
    s = cluster_base()
    set_lease(s, 1, 90)
    scenarios["v2-lease-expired.json"] = s

    # Sidecars writing the older <memberID>:<role>; etcd-main-1's lease renewed 50 s ago (leaseDurationSeconds 40).
    s = cluster_base()
    for ordinal in range(3):
        lease = by_name(s["leases"], f"etcd-main-{ordinal}")
        member_id, _, role = lease["spec"]["holderIdentity"].split(":")
        lease["spec"]["holderIdentity"] = f"{member_id}:{role}"
    set_lease(s, 1, 50)
    set_condition(s, "ClusterIDMismatch", "Unknown", at(3 * 24 * 3600))
    scenarios["v2-lease-renewed-50s-ago.json"] = s

    # etcd-main-1's pod not ready for 20 s (readiness probe failing) while its sidecar keeps renewing the lease.
    s = cluster_base()
    set_pod(s, 1, False, at(20))
    set_ready_replicas(s, 2)
    scenarios["v2-pod-not-ready.json"] = s

    # etcd-main-2's sidecar stopped renewing 150 s ago, its containers are still ready: Unknown for 90 s.
    s = cluster_base()
    set_lease(s, 2, 150)
    set_member(s, 2, "Unknown", "LeaseExpired", at(90))
    set_condition(s, "AllMembersReady", "False", at(90))
    scenarios["v2-unknown-member.json"] = s

    # The delta-snapshot lease was last renewed 20 minutes ago (D = 5m); BackupReady False for 5 minutes.
    s = cluster_base()
    by_name(s["leases"], "etcd-main-delta-snap")["spec"]["renewTime"] = at(20 * 60, micro=True)
    set_condition(s, "BackupReady", "False", at(5 * 60))
    scenarios["v2-backup-failed.json"] = s

    # A single-member cluster without a PodDisruptionBudget.
    s = cluster_base()
    s["etcd"]["spec"]["replicas"] = 1
    s["etcd"]["status"]["members"] = s["etcd"]["status"]["members"][:1]
    s["etcd"]["status"]["clusterSize"] = 1
    for key in ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas"):
        s["etcd"]["status"][key] = 1
    s["statefulSet"]["spec"]["replicas"] = 1
    for key in ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
        s["statefulSet"]["status"][key] = 1
    s["leases"] = [l for l in s["leases"] if l["metadata"]["name"] not in ("etcd-main-1", "etcd-main-2")]
    s["pods"] = s["pods"][:1]
    del s["podDisruptionBudget"]
    scenarios["v2-single-member.json"] = s

    # spec.replicas set to 0 (hibernation) on a healthy cluster with a backup store.
    s = cluster_base()
    s["etcd"]["spec"]["replicas"] = 0
    s["etcd"]["metadata"]["generation"] = 5
    request_reconcile(s)
    scenarios["v2-scale-to-zero.json"] = s

    # 1,203,663 revisions in delta snapshots since the last full snapshot.
    s = cluster_base()
    by_name(s["leases"], "etcd-main-delta-snap")["spec"]["holderIdentity"] = "2251874"
    scenarios["v2-compaction-due.json"] = s
    return scenarios


def backup_store(paths):
    """The store listing, as object paths (read by 2.x) and as parsed snapshots (read by 1.x)."""
    snapshots = []
    for path in paths:
        match = re.fullmatch(r".*/(Full|Incr)-(\d{8})-(\d{8})-(\d+)(\.gz)?", path)
        kind, start, last, unix, suffix = match.groups()
        created = datetime.datetime.fromtimestamp(int(unix), datetime.timezone.utc)
        snapshots.append({"name": path[len(PREFIX) + 1:], "kind": kind, "startRevision": int(start),
                          "lastRevision": int(last), "createdOn": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
                          "compressionSuffix": suffix or ""})
    snapshots.sort(key=lambda x: x["lastRevision"])
    return {"provider": "S3", "container": "dev-backup-etcd", "prefix": PREFIX, "reachable": True,
            "paths": list(paths), "snapshots": snapshots}


def member_lease(name, holder):
    lease = renamed(by_name(load("pink-of-health.json")["leases"], "etcd-main-2"), "etcd-main-2", name)
    if holder is None:
        lease["spec"] = {"leaseDurationSeconds": 40}
    else:
        lease["spec"]["holderIdentity"] = holder
        lease["spec"]["renewTime"] = at(5 * 60, micro=True)
    return lease


def init_base():
    """etcd-main-2 restarting in a quorate 3-member cluster with valid data, as etcd-backup-restore sees it."""
    s = load("member-init-restart-valid.json")
    s["memberLease"] = member_lease("etcd-main-2", f"{IDS[2]}:{CLUSTER_ID}:Member")
    s["dataDir"].update({"safeGuard": "shoot--dev--demo", "dbOpens": True, "corrupt": False})
    s["backupStore"] = backup_store(BACKUP_PATHS)
    return s


def peer(ordinal):
    return f"etcd-main-{ordinal}=https://etcd-main-{ordinal}.etcd-main-peer.shoot--dev--demo.svc:2380"


def advertise(s, ordinal):
    """The configuration template as etcd-druid mounts it into the pod of this ordinal."""
    for key in ("initial-advertise-peer-urls", "advertise-client-urls"):
        s["etcdConfig"][key] = s["etcdConfig"][key].replace("etcd-main-2.", f"etcd-main-{ordinal}.")


def init_scenarios():
    scenarios = {}

    # The database of etcd-main-2 is corrupt.
    s = init_base()
    s["dataDir"].update({"valid": False, "corrupt": True,
                         "verificationError": "db verification failed: bbolt: page 4182 already freed"})
    scenarios["v2-member-init-corrupt-db.json"] = s

    # After a quorum loss the StatefulSet restarts; etcd-main-0 lost its volume, the cluster does not answer,
    # the Etcd status has no members (etcd-druid 1.x cleared them) and the store has the backups.
    s = init_base()
    s["member"] = renamed(s["member"], "etcd-main-2", "etcd-main-0")
    advertise(s, 0)
    s["previousConfig"] = None
    s["etcd"]["status"]["members"] = []
    s["memberList"] = None
    s["memberLease"] = member_lease("etcd-main-0", None)
    s["dataDir"] = {"path": "/var/etcd/data/new.etcd", "exists": False, "walHasMetadata": False, "valid": False,
                    "corrupt": False, "dbOpens": True, "verificationError": "data directory does not exist"}
    # ruleplane's approved quorum-loss plan marked the re-bootstrap (MarkRebootstrap), for the newest backup.
    newest = max(snapshot["lastRevision"] for snapshot in s["backupStore"]["snapshots"])
    s["etcd"]["metadata"].setdefault("annotations", {})["ruleplane.dev/rebootstrap"] = f"{newest}:auto"
    scenarios["v2-member-init-rebootstrap.json"] = s

    # Scale-up from 3 to 5: etcd-main-3 starts for the first time; the three members answer.
    s = init_base()
    s["member"] = renamed(s["member"], "etcd-main-2", "etcd-main-3")
    advertise(s, 3)
    s["etcdConfig"]["initial-cluster"] = ",".join(peer(i) for i in range(5))
    s["previousConfig"] = None
    s["etcd"]["spec"]["replicas"] = 5
    for member in s["etcd"]["status"]["members"]:
        member.update({"status": "Ready", "reason": "LeaseSucceeded"})
    s["memberLease"] = member_lease("etcd-main-3", None)
    s["dataDir"] = {"path": "/var/etcd/data/new.etcd", "exists": False, "walHasMetadata": False, "valid": False,
                    "corrupt": False, "dbOpens": True, "verificationError": "data directory does not exist"}
    scenarios["v2-member-init-scale-up.json"] = s

    # etcd-main-2's pod got the volume of another cluster: its safe_guard file names another namespace.
    s = init_base()
    s["dataDir"]["safeGuard"] = "shoot--prod--billing"
    scenarios["v2-member-init-wrong-volume.json"] = s
    return scenarios


def main():
    for name, snapshot in {**cluster_scenarios(), **init_scenarios()}.items():
        write(name, snapshot)


if __name__ == "__main__":
    main()
