#!/usr/bin/env python3
"""Writes the example snapshots in examples/snapshots/ from two hand-kept templates.

    python3 examples/generate_snapshots.py        # from the repository root

pink-of-health.json (a healthy 3-member cluster, every object as `kubectl get -o json` prints it) and
member-init-invalid-data.json (one member starting up) are the templates, kept by hand like
member-init-first-bootstrap.json and member-init-restore-incrementals.json. Running it reproduces every other
file byte for byte. Each snapshot written here is a
template with the member states, conditions, leases, pods and PodDisruptionBudget of one scenario; the objects
keep the API's shape. Run it after changing a template or a scenario, then `ruleplane test rules/` (the rule
files' tests read these files).
"""

import copy
import datetime
import json
import os
import pathlib

SNAPSHOTS = pathlib.Path(__file__).resolve().parent / "snapshots"
# Where the snapshots are written: examples/snapshots, or (to check that the files are reproduced) elsewhere.
OUT = pathlib.Path(os.environ.get("RULEPLANE_SNAPSHOTS_OUT", SNAPSHOTS))
NOW = datetime.datetime(2024, 5, 1, 10, 0, 0, tzinfo=datetime.timezone.utc)
LONG_AGO = "2024-04-28T06:01:57Z"
# Member IDs by ordinal, hex as in status.members[].id and the lease's holderIdentity.
IDS = ["8e9e05c52164694d", "91bc3c398fb3c146", "fd422379fda50e48", "2f0e6c1b8a9d3e71", "c4a7d92e15b08f36"]
CONDITION_TEXT = {
    ("Ready", "True"): ("Quorate", "The majority of ETCD members is ready"),
    ("Ready", "False"): ("QuorumLost", "The majority of ETCD members is not ready"),
    ("AllMembersReady", "True"): ("AllMembersReady", "All members are ready"),
    ("AllMembersReady", "False"): ("NotAllMembersReady", "At least one member is not ready"),
    ("BackupReady", "True"): ("BackupSucceeded", "Delta snapshot backup succeeded"),
    ("BackupReady", "False"): ("FullBackupFailed", "Full snapshot upload failed: connection reset by peer"),
}
DEFAULT_REASON = {"Ready": "LeaseSucceeded", "NotReady": "PodNotReady", "Unknown": "LeaseExpired"}


def at(minutes_before_now, micro=False):
    """The RFC 3339 time `minutes_before_now` minutes before observedAt (a MicroTime when micro)."""
    t = NOW - datetime.timedelta(minutes=minutes_before_now)
    if micro:
        return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def load(name):
    return json.loads((SNAPSHOTS / name).read_text())


def write(name, snapshot):
    (OUT / name).write_text(json.dumps(snapshot, indent=2) + "\n")


def renamed(obj, old, new):
    """A deep copy of `obj` with every string occurrence of `old` replaced by `new`."""
    return json.loads(json.dumps(obj).replace(old, new))


def pod_for(templates, ordinal):
    """The template's pod of this ordinal, or one made like etcd-main-1's for an ordinal it does not have."""
    if ordinal < len(templates):
        return copy.deepcopy(templates[ordinal])
    pod = renamed(templates[1], "etcd-main-1", f"etcd-main-{ordinal}")
    pod["metadata"]["uid"] = pod["metadata"]["uid"][:-1] + str(ordinal)
    pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = str(ordinal)
    pod["spec"]["nodeName"] = f"ip-10-250-{ordinal}-{17 + ordinal}.eu-west-1.compute.internal"
    pod["status"]["hostIP"] = f"10.250.{ordinal}.{17 + ordinal}"
    pod["status"]["hostIPs"] = [{"ip": pod["status"]["hostIP"]}]
    pod["status"]["podIP"] = f"100.96.{2 * ordinal}.{31 + ordinal}"
    pod["status"]["podIPs"] = [{"ip": pod["status"]["podIP"]}]
    for container in pod["status"]["containerStatuses"]:
        container["containerID"] = container["containerID"][:-1] + str(ordinal)
    return pod


def crash_looping(pod, minutes):
    """The pod with its etcd container in CrashLoopBackOff, not Ready for `minutes`."""
    since = at(minutes)
    for condition in pod["status"]["conditions"]:
        if condition["type"] in ("Ready", "ContainersReady"):
            condition.update(status="False", lastTransitionTime=since, reason="ContainersNotReady",
                             message="containers with unready status: [etcd]")
    name, uid = pod["metadata"]["name"], pod["metadata"]["uid"]
    for container in pod["status"]["containerStatuses"]:
        if container["name"] != "etcd":
            continue
        container.update(ready=False, restartCount=4, started=False)
        container["state"] = {"waiting": {
            "reason": "CrashLoopBackOff",
            "message": f"back-off 5m0s restarting failed container=etcd pod={name}_shoot--dev--demo({uid})"}}
        container["lastState"] = {"terminated": {
            "exitCode": 1, "reason": "Error", "startedAt": at(minutes + 0.5), "finishedAt": since,
            "containerID": "containerd://3f9c" + "0" * 59 + name[-1]}}
    return pod


def lease_for(templates, ordinal, holder, renew_time):
    """The member lease of this ordinal: holderIdentity and renewTime as given, or as in the template
    (renewed a few seconds ago) when renew_time is "fresh"; an empty spec but for the duration when never renewed."""
    if ordinal < 3:
        lease = copy.deepcopy(templates[ordinal])
    else:
        lease = renamed(templates[1], "etcd-main-1", f"etcd-main-{ordinal}")
        lease["metadata"]["uid"] = lease["metadata"]["uid"][:-1] + str(ordinal)
        lease["metadata"]["resourceVersion"] = str(184467100 + ordinal)
        lease["spec"]["renewTime"] = at(0.2, micro=True)
    spec = lease["spec"]
    if renew_time is None:
        lease["spec"] = {"leaseDurationSeconds": spec["leaseDurationSeconds"]}
        return lease
    lease["spec"] = {"holderIdentity": holder, "leaseDurationSeconds": spec["leaseDurationSeconds"],
                     "renewTime": spec["renewTime"] if renew_time == "fresh" else renew_time}
    return lease


class Member:
    """One member: its status entry, its pod and its lease.

    status: "Ready", "NotReady", "Unknown", or None (no status entry); since: minutes since its last transition.
    pod: "ready", "crash" (etcd container crash-looping since pod_since minutes), or "absent".
    lease: minutes since the last renewal (more than 40 s: expired), "fresh" (renewed seconds ago), "never"
    (created by etcd-druid, not renewed yet) or "absent".
    """

    def __init__(self, status="Ready", since=None, reason=None, pod=None, pod_since=None, lease=None,
                 member_id=None, role=None, holder=None):
        self.status = status
        self.since = since
        self.reason = reason or DEFAULT_REASON.get(status)
        self.pod = pod if pod is not None else ("ready" if status in ("Ready", "Unknown") else "crash")
        self.pod_since = pod_since if pod_since is not None else (since if since is not None else 1)
        default_lease = "fresh" if self.pod == "ready" and status != "Unknown" else self.pod_since + 1
        self.lease = lease if lease is not None else default_lease
        self.member_id = member_id
        self.role = role
        self.holder = holder


def cluster(members, replicas=None, cluster_size=None, sts_replicas=None, conditions=None, pdb=None,
            extra_leases=(), generation=4, observed_generation=4, sts_revision=None, mutate=None):
    """An EtcdClusterSnapshot of etcd-main with `members` (a list of Member, by ordinal)."""
    snapshot = load("pink-of-health.json")
    etcd, sts = snapshot["etcd"], snapshot["statefulSet"]
    pod_templates, lease_templates = snapshot["pods"], snapshot["leases"]
    n = len(members)
    replicas = n if replicas is None else replicas
    cluster_size = n if cluster_size is None else cluster_size
    sts_replicas = cluster_size if sts_replicas is None else sts_replicas

    entries, pods, leases = [], [], []
    for ordinal, member in enumerate(members):
        name = f"etcd-main-{ordinal}"
        member_id = member.member_id or IDS[ordinal]
        role = member.role or ("Leader" if ordinal == 0 else "Member")
        if member.status:
            entries.append({"name": name, "id": member_id, "role": role, "status": member.status,
                            "reason": member.reason,
                            "lastTransitionTime": LONG_AGO if member.since is None else at(member.since)})
        if member.pod != "absent":
            pod = pod_for(pod_templates, ordinal)
            if member.pod == "crash":
                crash_looping(pod, member.pod_since)
            pods.append(pod)
        holder = member.holder if member.holder is not None else f"{member_id}:{role}"
        if member.lease == "never":
            leases.append(lease_for(lease_templates, ordinal, "", None))
        elif member.lease == "fresh":
            leases.append(lease_for(lease_templates, ordinal, holder, "fresh"))
        elif member.lease != "absent":
            leases.append(lease_for(lease_templates, ordinal, holder, at(member.lease, micro=True)))
    leases += list(extra_leases) + snapshot["leases"][3:]  # the full-snap and delta-snap leases
    ready_pods = sum(1 for p in pods if p["status"]["conditions"][2]["status"] == "True")
    ready_members = sum(1 for e in entries if e["status"] == "Ready")

    etcd["metadata"]["generation"] = generation
    etcd["metadata"]["resourceVersion"] = str(184467203 + 195 * (generation - 4))
    etcd["spec"]["replicas"] = replicas
    status = etcd["status"]
    status.update(observedGeneration=observed_generation, clusterSize=cluster_size, members=entries,
                  replicas=len(pods), currentReplicas=len(pods), updatedReplicas=len(pods),
                  readyReplicas=ready_pods, ready=2 * ready_members > cluster_size)
    all_ready = cluster_size > 0 and all(
        any(e["name"] == f"etcd-main-{i}" and e["status"] == "Ready" for e in entries) for i in range(cluster_size))
    wanted = {"Ready": ("True" if status["ready"] else "False", 3),
              "AllMembersReady": ("True" if all_ready else "False", 7),
              "BackupReady": ("True", None)}
    wanted.update(conditions or {})
    for condition in status["conditions"]:
        value, since = wanted[condition["type"]]
        if value != condition["status"]:
            reason, message = CONDITION_TEXT[(condition["type"], value)]
            condition.update(status=value, reason=reason, message=message,
                             lastTransitionTime=at(since if since is not None else 7))

    sts["spec"]["replicas"] = sts_replicas
    sts["status"].update(replicas=len(pods), currentReplicas=len(pods), updatedReplicas=len(pods),
                         readyReplicas=ready_pods, availableReplicas=ready_pods)
    if not ready_pods:
        del sts["status"]["readyReplicas"], sts["status"]["availableReplicas"]
    if sts_revision:
        sts["status"]["updateRevision"] = sts_revision
        sts["status"]["updatedReplicas"] = 0
    snapshot["pods"], snapshot["leases"] = pods, leases

    size = max(replicas, cluster_size)
    quorum = size // 2 + 1 if size > 1 else 0
    if pdb is None:  # what the etcd-druid-status-pdb table keeps it at
        pdb = quorum
        if status["conditions"][2]["status"] != "True":
            pdb = size
        elif size > 1 and status["conditions"][1]["status"] != "True":
            pdb = max(quorum, ready_members)
    budget = snapshot["podDisruptionBudget"]
    budget["spec"]["minAvailable"] = pdb
    allowed = max(0, ready_pods - pdb)
    budget["status"].update(currentHealthy=ready_pods, desiredHealthy=pdb, disruptionsAllowed=allowed,
                            expectedPods=len(pods))
    budget["status"]["conditions"][0].update(
        status="True" if allowed else "False", reason="SufficientPods" if allowed else "InsufficientPods",
        lastTransitionTime=budget["status"]["conditions"][0]["lastTransitionTime"] if allowed else at(9))
    if mutate:
        mutate(snapshot)
    return snapshot


def maintenance_status(snapshot, db_sizes, leader=0, unanswered=()):
    """Adds maintenanceStatus: each member's /v3/maintenance/status response as the etcd JSON gateway returns
    it (int64 fields as decimal strings), db_sizes[ordinal] = (dbSize, dbSizeInUse) in MiB."""
    mib = 1024 * 1024
    statuses = []
    for ordinal, (db_size, in_use) in enumerate(db_sizes):
        name = f"etcd-main-{ordinal}"
        entry = {"name": name, "endpoint": f"https://{name}.etcd-main-peer.shoot--dev--demo.svc:2379"}
        if ordinal in unanswered:
            entry["error"] = "context deadline exceeded"
        else:
            entry["response"] = {
                "header": {"cluster_id": "17237436991929493444", "member_id": str(int(IDS[ordinal], 16)),
                           "revision": "1051874", "raft_term": "7"},
                "version": "3.4.26", "dbSize": str(db_size * mib), "leader": str(int(IDS[leader], 16)),
                "raftIndex": "1187342", "raftTerm": "7", "raftAppliedIndex": "1187342",
                "dbSizeInUse": str(in_use * mib)}
        statuses.append(entry)
    snapshot["maintenanceStatus"] = statuses


def bump_etcd_resources(snapshot):
    """The Etcd's spec after a vertical scaling (HVPA raised the etcd container's requests)."""
    snapshot["etcd"]["spec"]["etcd"]["resources"]["requests"] = {"cpu": "500m", "memory": "1536Mi"}
    snapshot["etcd"]["metadata"]["resourceVersion"] = "184467522"


def scheduled_at_half_past_nine(snapshot):
    """A defragmentation schedule whose activation was half an hour before the observation (10:00), within the
    defragmentation table's default window of an hour."""
    snapshot["etcd"]["spec"]["etcd"]["defragmentationSchedule"] = "30 9 * * *"


R = Member  # short for the scenario tables below


def cluster_snapshots():
    yield "lease-expired.json", cluster(
        [R(), R(lease=1.9), R()])
    yield "member-status-out-of-sync.json", cluster(
        [R(),
         R("NotReady", since=3, pod="ready", lease=0.3, holder="3a5cd1e0b7f29c84:Member"),
         R(lease=1.25)])
    yield "all-members-ready-condition-stale.json", cluster(
        [R(), R(), R(since=1)], conditions={"AllMembersReady": ("False", 8)})
    yield "not-all-members-ready-condition-stale.json", cluster(
        [R(), R(), R("NotReady", since=1.5)], conditions={"AllMembersReady": ("True", None)}, pdb=2)
    yield "majority-ready-condition-stale.json", cluster(
        [R(), R(since=0.5), R("NotReady", since=3)], conditions={"Ready": ("False", 3)})
    yield "majority-not-ready-condition-stale.json", cluster(
        [R(), R("NotReady", since=2), R("NotReady", since=2)], conditions={"Ready": ("True", None)})
    yield "unknown-too-long.json", cluster(
        [R(), R(), R("Unknown", since=1.5, lease=2.25)], conditions={"AllMembersReady": ("False", 1.5)})
    yield "pod-not-ready.json", cluster(
        [R(), R(pod="crash", pod_since=0.33, lease=0.4), R()])
    yield "minority-not-ready.json", cluster(
        [R(), R(), R("NotReady", since=8, pod_since=9)])
    yield "quorum-lost.json", cluster(
        [R(), R("NotReady", since=10, pod_since=9), R("NotReady", since=10, pod_since=9)])
    yield "quorum-lost-backup-not-ready.json", cluster(
        [R(), R("NotReady", since=10, pod_since=9), R("NotReady", since=10, pod_since=9)],
        conditions={"BackupReady": ("False", 25)})
    yield "bootstrap.json", cluster(
        [R(None, pod="absent", lease="never")] * 3, sts_replicas=0, conditions={"Ready": ("False", 4)})
    yield "scale-up.json", cluster(
        [R(), R(), R()], replicas=5, generation=5, observed_generation=5, pdb=2)
    yield "cluster-size-out-of-date.json", cluster(
        [R(), R(), R(), R(since=2), R(since=1.5)], replicas=5, cluster_size=3, sts_replicas=5,
        generation=5, observed_generation=5)
    yield "scale-down.json", cluster(
        [R(), R(), R(), R(), R()], replicas=3, cluster_size=5, generation=6, observed_generation=6)
    yield "superfluous-member-entries.json", cluster(
        [R(), R(), R(), R("NotReady", since=2, pod="absent", lease="absent"),
         R("NotReady", since=2, pod="absent", lease=2.5)],
        replicas=3, cluster_size=3, generation=6, observed_generation=6)

    # The policies evaluated beside the status table.
    yield "pdb-backup-not-ready.json", cluster(
        [R(), R(), R()], conditions={"BackupReady": ("False", 25)}, pdb=2)
    yield "pdb-all-members-ready.json", cluster(
        [R(), R(), R(), R(), R()], pdb=5)
    yield "maintenance-rolling-update.json", cluster(
        [R(), R(), R()], generation=5, observed_generation=4, mutate=bump_etcd_resources)
    yield "maintenance-postponed.json", cluster(
        [R(), R(), R("NotReady", since=2)], generation=5, observed_generation=4, mutate=bump_etcd_resources)
    healthy = cluster([R(), R(), R()], mutate=scheduled_at_half_past_nine)
    maintenance_status(healthy, [(2150, 610), (2148, 611), (2151, 607)], leader=0)
    yield "defragmentation.json", healthy
    postponed = cluster([R(), R(), R("NotReady", since=2)], mutate=scheduled_at_half_past_nine)
    maintenance_status(postponed, [(2150, 610), (2148, 611), (2151, 607)], leader=0, unanswered=(2,))
    yield "defragmentation-postponed.json", postponed


def member_init(member, config_state="existing", members=None, cluster_size=3, data_dir=None, backups="all",
                previous=True):
    """An EtcdMemberInitSnapshot of `member` (an ordinal) starting up."""
    snapshot = load("member-init-invalid-data.json")
    name = f"etcd-main-{member}"
    snapshot["member"] = renamed(snapshot["member"], "etcd-main-2", name)
    for config in (snapshot["etcdConfig"], snapshot["previousConfig"]):
        for key in ("advertise-client-urls", "initial-advertise-peer-urls"):
            config[key] = config[key].replace("etcd-main-2", name)
    if previous:
        snapshot["previousConfig"]["initial-cluster-state"] = config_state
    else:
        snapshot["previousConfig"] = None
    status = snapshot["etcd"]["status"]
    status["clusterSize"] = cluster_size
    entries = []
    for ordinal, state in enumerate(members or []):
        if state is None:
            continue
        entries.append({"name": f"etcd-main-{ordinal}", "id": IDS[ordinal],
                        "role": "Leader" if ordinal == 0 else "Member", "status": state,
                        "reason": DEFAULT_REASON[state], "lastTransitionTime": LONG_AGO if state == "Ready" else at(2)})
    status["members"] = entries
    ready = sum(1 for e in entries if e["status"] == "Ready")
    status["readyReplicas"] = ready
    status["ready"] = 2 * ready > cluster_size
    for condition in status["conditions"]:
        value = {"Ready": "True" if status["ready"] else "False",
                 "AllMembersReady": "True" if ready == cluster_size else "False"}.get(condition["type"])
        if value and value != condition["status"]:
            reason, message = CONDITION_TEXT[(condition["type"], value)]
            condition.update(status=value, reason=reason, message=message, lastTransitionTime=at(2))
    if not entries:
        del status["members"]
    data = {"path": "/var/etcd/data/new.etcd", "exists": False, "walHasMetadata": False, "valid": False,
            "verificationError": "data directory does not exist"}
    if data_dir == "valid":
        data = {"path": "/var/etcd/data/new.etcd", "exists": True, "walHasMetadata": True,
                "memberID": IDS[member], "clusterID": "ef37ad9dc622a7c4", "valid": True}
    elif data_dir == "no-metadata":
        data = {"path": "/var/etcd/data/new.etcd", "exists": True, "walHasMetadata": False, "valid": False,
                "verificationError": "wal: file not found"}
    snapshot["dataDir"] = data
    store = snapshot["backupStore"]
    if backups == "none":
        store["snapshots"] = []
    elif backups == "full":
        store["snapshots"] = [s for s in store["snapshots"] if s["kind"] == "Full"]
    return snapshot


def no_member_list(snapshot):
    snapshot["memberList"] = None


def peer_url(ordinal):
    return f"https://etcd-main-{ordinal}.etcd-main-peer.shoot--dev--demo.svc:2380"


def approved_rebootstrap(snapshot):
    """The marker the approved quorum-loss plan writes (MarkRebootstrap): member-init re-creates from the backup."""
    snapshot["etcd"]["metadata"]["annotations"]["ruleplane.dev/rebootstrap"] = "1048211:approved sha256:5d1c0e0a4f4b2b8c"


def init_snapshots():
    # The first member started the new cluster; the other two are listed, added and not started yet (no name).
    s = member_init(1, members=["Ready"], backups="none", previous=False)
    s["memberList"] = {"header": {"cluster_id": "17237436991929493444", "member_id": str(int(IDS[0], 16)),
                                  "revision": "1", "raft_term": "2"},
                       "members": [{"ID": str(int(IDS[0], 16)), "id": IDS[0], "name": "etcd-main-0",
                                    "peerURLs": [peer_url(0)],
                                    "clientURLs": ["https://etcd-main-0.etcd-main-peer.shoot--dev--demo.svc:2379"]}]
                       + [{"ID": str(int(IDS[i], 16)), "id": IDS[i], "peerURLs": [peer_url(i)]} for i in (1, 2)],
                       "clusterID": "ef37ad9dc622a7c4", "leader": "", "quorate": False}
    yield "member-init-following-bootstrap.json", s
    yield "member-init-restart-valid.json", member_init(2, members=["Ready", "Ready", "NotReady"], data_dir="valid")
    yield "member-init-no-metadata.json", member_init(2, members=["Ready", "Ready", "NotReady"],
                                                      data_dir="no-metadata")
    s = member_init(2, members=["Ready", "NotReady", "NotReady"], data_dir="valid")
    no_member_list(s)
    yield "member-init-non-quorate-valid.json", s
    s = member_init(0, members=[], data_dir="no-metadata", backups="full")
    no_member_list(s)
    approved_rebootstrap(s)
    yield "member-init-restore.json", s
    s = member_init(1, members=[], backups="full")
    no_member_list(s)
    approved_rebootstrap(s)
    yield "member-init-restore-waits.json", s
    s = member_init(1, members=["Ready"], backups="full")
    s["memberList"]["members"] = s["memberList"]["members"][:1]
    yield "member-init-following-restore.json", s


def main():
    for name, snapshot in list(cluster_snapshots()) + list(init_snapshots()):
        write(name, snapshot)
        print("wrote", OUT / name)


if __name__ == "__main__":
    main()
