#!/usr/bin/env python3
"""Writes a grid of EtcdCluster observations as JSON lines: one snapshot per combination of the axes below.

    python3 examples/observe_cluster.py > /tmp/observations.jsonl
    ruleplane diff --snapshots /tmp/observations.jsonl etcd-druid@1 etcd-druid@2

Each snapshot is built like the v2-*.json examples (examples/generate_v2_snapshots.py: every object as today's
etcd-druid and etcd-backup-restore write it) and carries its axis values in a top-level `observation` object, which
rules ignore and `ruleplane diff` uses to sum up the snapshots planned differently as regions of the grid
("members=3, notReady in [2..3]"). The axes:

    members       running members (StatefulSet replicas, status members, leases, pods): 1, 3 or 5
    replicas      the Etcd's spec.replicas: 0, members - 2, members, members + 2 (when it differs from members,
                  with gardener.cloud/operation: reconcile, as Gardener asks for the change)
    notReady      members NotReady for 10 minutes (lease stopped 16 minutes ago, etcd container crash-looping)
    unknown       a member Unknown for 90 s (lease stopped 150 s ago, containers still ready): 0 or 1
    podNotReady   a member whose pod has not been ready for 20 s while its lease is renewed: 0 or 1
    backupFailing the delta-snapshot lease last renewed 20 minutes ago (D = 5m), BackupReady False: false or true

The Etcd status says what the members are (the conditions as etcd-druid sets them for that state).
"""

import itertools
import json
import sys

import generate_v2_snapshots as v2


def single_member(s):
    """Cuts the 3-member base down to etcd-main-0 alone (a PodDisruptionBudget of 0 stays)."""
    s["etcd"]["status"]["members"] = s["etcd"]["status"]["members"][:1]
    s["leases"] = [l for l in s["leases"] if l["metadata"]["name"] not in ("etcd-main-1", "etcd-main-2")]
    s["pods"] = s["pods"][:1]
    for status in (s["etcd"]["status"], s["statefulSet"]["status"]):
        for key in ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"):
            if key in status:
                status[key] = 1
    s["etcd"]["status"]["clusterSize"] = 1
    s["statefulSet"]["spec"]["replicas"] = 1
    pdb = s["podDisruptionBudget"]
    pdb["spec"]["minAvailable"] = 0
    pdb["status"].update({"currentHealthy": 1, "desiredHealthy": 0, "expectedPods": 1, "disruptionsAllowed": 1})


def observe(members, replicas, not_ready, unknown, pod_not_ready, backup_failing):
    s = v2.cluster_base()
    if members == 1:
        single_member(s)
    else:
        v2.resize(s, members, members)
    s["etcd"]["spec"]["replicas"] = replicas
    if replicas != members:
        v2.request_reconcile(s)
    # The last members are the NotReady ones, then the Unknown one; the pod of member 0 is the one not ready.
    for ordinal in range(members - not_ready, members):
        v2.set_lease(s, ordinal, 16 * 60)
        v2.set_member(s, ordinal, "NotReady", "UnknownGracePeriodExceeded", v2.at(10 * 60))
        v2.set_pod(s, ordinal, False, v2.at(15 * 60), crash_looping=True)
    if unknown:
        ordinal = members - not_ready - 1
        v2.set_lease(s, ordinal, 150)
        v2.set_member(s, ordinal, "Unknown", "LeaseExpired", v2.at(90))
    if pod_not_ready:
        v2.set_pod(s, 0, False, v2.at(20))
    ready_pods = members - not_ready - pod_not_ready
    v2.set_ready_replicas(s, ready_pods)
    ready_members = members - not_ready - unknown
    if 2 * ready_members <= members:
        v2.set_condition(s, "Ready", "False", v2.at(10 * 60))
    if ready_members < members:
        v2.set_condition(s, "AllMembersReady", "False", v2.at(90))
    if backup_failing:
        v2.by_name(s["leases"], "etcd-main-delta-snap")["spec"]["renewTime"] = v2.at(20 * 60, micro=True)
        v2.set_condition(s, "BackupReady", "False", v2.at(5 * 60))
    s["observation"] = {"members": members, "replicas": replicas, "notReady": not_ready, "unknown": unknown,
                        "podNotReady": pod_not_ready, "backupFailing": backup_failing}
    return s


def grid():
    for members in (1, 3, 5):
        for replicas in sorted({0, max(members - 2, 1), members, members + 2}):
            for not_ready, unknown, pod_not_ready, backup_failing in itertools.product(
                    range(members + 1), (0, 1), (0, 1), (False, True)):
                # The Unknown member and the member with the unready pod are others than the NotReady ones.
                if not_ready + unknown > members or not_ready + pod_not_ready > members - (unknown and members == 1):
                    continue
                if unknown and pod_not_ready and members - not_ready < 2:
                    continue
                yield observe(members, replicas, not_ready, unknown, pod_not_ready, backup_failing)


def main():
    for snapshot in grid():
        sys.stdout.write(json.dumps(snapshot, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
