#!/usr/bin/env python3
"""Writes an EtcdClusterSnapshot with N status members and N pods (the rest of
examples/snapshots/v2-pink-of-health.json as it is), for measuring how `plan`
scales with the size of its input:

    python3 bench/generate_large_snapshot.py 100000 > /tmp/large.json
    /usr/bin/time -f '%e s %M KB' build/release/ruleplane plan --rules etcd-druid@2 /tmp/large.json >/dev/null
"""
import json
import pathlib
import sys


def main():
    count = int(sys.argv[1])
    root = pathlib.Path(__file__).resolve().parent.parent
    snapshot = json.loads((root / "examples/snapshots/v2-pink-of-health.json").read_text())
    name = snapshot["etcd"]["metadata"]["name"]
    snapshot["etcd"]["status"]["members"] = [
        {"name": f"{name}-{i}", "id": f"{i:016x}", "role": "Member", "status": "Ready"} for i in range(count)
    ]
    snapshot["pods"] = [
        {"metadata": {"name": f"{name}-{i}"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        for i in range(count)
    ]
    json.dump(snapshot, sys.stdout, separators=(",", ":"))


if __name__ == "__main__":
    main()
