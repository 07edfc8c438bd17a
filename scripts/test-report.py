#!/usr/bin/env python3
"""Where the time of a scripts/test.sh run went: its phases, the test seconds of each ctest run by label, and the
ten slowest tests. Reads the directory scripts/test.sh writes (phases.tsv: name, seconds, exit status, "overlapped"
for a phase that ran beside another; one ctest JUnit report per ctest run, with its tests' labels beside it).

    python3 scripts/test-report.py build/test-report
"""
import collections
import json
import pathlib
import sys
import xml.etree.ElementTree as ElementTree


def minutes(seconds):
    return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"


def read_phases(directory):
    phases = []
    path = directory / "phases.tsv"
    if path.exists():
        for line in path.read_text().splitlines():
            name, seconds, status, overlapped = line.split("\t")
            phases.append((name, int(seconds), int(status), overlapped == "overlapped"))
    return phases


def read_labels(path):
    """Each test's labels, from `ctest --show-only=json-v1` (the JUnit report has none)."""
    try:
        listing = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    labels = {}
    for test in listing.get("tests", []):
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                labels[test.get("name")] = prop.get("value") or []
    return labels


def read_tests(directory):
    """(run, test, seconds, status, labels) for every test of every ctest JUnit report."""
    tests = []
    for report in sorted(directory.glob("*.xml")):
        try:
            root = ElementTree.parse(report).getroot()
        except ElementTree.ParseError:
            continue
        labels_of = read_labels(report.with_suffix(".labels.json"))
        for case in root.iter("testcase"):
            labels = labels_of.get(case.get("name"), []) or ["(none)"]
            tests.append((report.stem, case.get("name", "?"), float(case.get("time", "0")),
                          case.get("status", "?"), labels))
    return tests


def main():
    directory = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build/test-report")
    phases = read_phases(directory)
    tests = read_tests(directory)

    print("== where the time went (wall clock)")
    width = max([len(phase[0]) for phase in phases] + [5])
    for name, seconds, status, overlapped in phases:
        outcome = "ok" if status == 0 else f"FAILED ({status})"
        if overlapped:
            outcome += ", overlapped: not in the total"
        print(f"  {name:<{width}}  {seconds:>6} s  {minutes(seconds):>6}  {outcome}")
    total = sum(seconds for _, seconds, _, overlapped in phases if not overlapped)
    print(f"  {'total':<{width}}  {total:>6} s  {minutes(total):>6}")

    if tests:
        print("== test seconds by ctest run and label (summed over tests that ran side by side)")
        by_label = collections.defaultdict(lambda: [0, 0.0])
        for run, _, seconds, _, labels in tests:
            for label in labels:
                by_label[(run, label)][0] += 1
                by_label[(run, label)][1] += seconds
        for (run, label), (count, seconds) in sorted(by_label.items()):
            print(f"  {run:<22} {label:<12} {count:>4} tests  {seconds:>8.1f} s")
        print("== the ten slowest tests")
        for run, name, seconds, status, _ in sorted(tests, key=lambda t: -t[2])[:10]:
            print(f"  {seconds:>7.1f} s  {run:<22} {name}{'' if status == 'run' else '  (' + status + ')'}")
        failed = [(run, name) for run, name, _, status, _ in tests if status == "fail"]
        if failed:
            print(f"== {len(failed)} failed")
            for run, name in failed:
                print(f"  {run:<22} {name}")


if __name__ == "__main__":
    main()
