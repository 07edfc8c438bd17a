#!/usr/bin/env python3
"""Writes the regress_* inputs of the fuzz corpora: one per class of crash,
hang or memory blow-up found so far (fuzz/README.md lists them). They are
generated because most are large and repetitive; rerun after changing this
script:  python3 fuzz/corpus/make_regressions.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LONG = 40000  # std::regex recursed once per character: ~40,000 overflowed the stack
MAX_SIZE = 100 * 1024


def write(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    assert len(data) <= MAX_SIZE, (name, len(data))
    with open(os.path.join(HERE, target, name), "wb") as out:
        out.write(data)


def rule_file(spec="", tests=""):
    return (
        "apiVersion: ruleplane.dev/v1\n"
        "kind: DecisionTable\n"
        "metadata: {name: regress, version: 1.0.0}\n"
        "spec:\n" + (spec or "  subject: EtcdCluster\n") + "  rules:\n    - id: r\n" + tests
    )


def inline_test(snapshot_extra):
    return (
        "  tests:\n    - name: t\n      expect: {rules: [r]}\n      snapshot:\n"
        "        apiVersion: ruleplane.dev/v1\n        kind: EtcdClusterSnapshot\n"
        '        observedAt: "2024-05-01T10:00:00Z"\n' + snapshot_extra
    )


def rule_loader():
    t = "rule_loader"
    # Each of these scalars went through std::regex_match, which recursed per character.
    write(t, "regress_long_subject.yaml", rule_file("  subject: E" + "a" * LONG + "\n"))
    write(t, "regress_long_fact_name.yaml",
          rule_file("  subject: EtcdCluster\n  facts:\n    - name: " + "a" * LONG + "\n      expr: '1'\n"))
    write(t, "regress_long_param_name.yaml",
          rule_file("  subject: EtcdCluster\n  params:\n    - name: " + "a" * LONG +
                    "\n      type: int\n      default: 1\n"))
    write(t, "regress_long_param_default.yaml",
          rule_file("  subject: EtcdCluster\n  params:\n    - name: p\n      type: double\n      default: " +
                    "1" * LONG + "\n"))
    write(t, "regress_long_test_scalar.yaml", rule_file(tests=inline_test("        x: " + "1" * LONG + "\n")))
    # The same input is loaded as an action catalogue too.
    catalogue = ("apiVersion: ruleplane.dev/v1\nkind: ActionCatalogue\nactions:\n"
                 "  - name: {action}\n    adapter: kubernetes\n    description: d\n    idempotency: i\n"
                 "    params:\n      - {{name: {param}, type: int}}\n")
    write(t, "regress_long_action_name.yaml", catalogue.format(action="A" + "a" * LONG, param="p"))
    write(t, "regress_long_action_param_name.yaml", catalogue.format(action="A", param="p" + "a" * LONG))

    # Billion laughs: nine levels of ten aliases each, 10^9 scalars once expanded.
    laughs = "".join(
        "        l%d: &l%d [%s]\n" % (i, i, ", ".join(["*l%d" % (i - 1) if i else "lol"] * 10)) for i in range(10))
    write(t, "regress_alias_nested.yaml", rule_file(tests=inline_test(laughs)))
    # ~19 KB: one anchored snapshot of 10^5 scalars, referenced by each of 340 tests.
    snapshot = ("      snapshot: &s\n        apiVersion: ruleplane.dev/v1\n        kind: EtcdClusterSnapshot\n"
                '        observedAt: "2024-05-01T10:00:00Z"\n')
    snapshot += "".join("        l%d: &l%d [%s]\n" % (i, i, ", ".join(["*l%d" % (i - 1) if i else "x"] * 10))
                        for i in range(5))
    tests = "  tests:\n    - name: t0\n      expect: {rules: [r]}\n" + snapshot
    tests += "".join("    - {name: t%d, snapshot: *s, expect: {rules: [r]}}\n" % i for i in range(1, 340))
    write(t, "regress_alias_repeated.yaml", rule_file(tests=tests))

    # Nesting past 500 levels: flow sequences and mappings, compact block
    # sequences, and just under yaml-cpp's own limit of 2000.
    def deep_flow(depth, open_, close):
        return open_ * depth + "x" + close * depth

    write(t, "regress_deep_yaml_flow.yaml", rule_file(tests=inline_test("        x: " + deep_flow(600, "[", "]") + "\n")))
    write(t, "regress_deep_yaml_mapping.yaml",
          rule_file(tests=inline_test("        x: " + deep_flow(600, "{a: ", "}") + "\n")))
    write(t, "regress_deep_yaml_block.yaml", rule_file(tests=inline_test("        x:\n          " + "- " * 600 + "x\n")))
    write(t, "regress_deep_yaml_1999.yaml", "spec: " + deep_flow(1998, "[", "]") + "\n")
    write(t, "regress_deep_yaml_document.yaml", deep_flow(600, "{a: ", "}") + "\n")

    # Constant folding at load time builds the doubling string (see the expression regressions).
    write(t, "regress_fold_replace_doubling.yaml",
          rule_file("  subject: EtcdCluster\n  facts:\n    - name: f\n      expr: >-\n        " + replace_chain(30) +
                    ".size()\n"))


def replace_chain(count):
    return "'aa'" + ".replace('a', 'aa')" * count


def int_list(n):
    return "[" + ", ".join(str(i) for i in range(n)) + "]"


def backtracking_strings(n):
    return "[" + ", ".join(["'" + "a" * 28 + "b'"] * n) + "]"


def expression_parser():
    t = "expression_parser"
    # Only literals here: the target's variables are small.
    big = int_list(3000)
    write(t, "regress_nested_map", "%s.map(x, %s.map(y, x + y)).size()" % (big, big))
    small = int_list(1000)
    write(t, "regress_nested_all", "%s.all(a, %s.all(b, %s.all(c, a + b + c >= x)))" % (small, small, small))
    write(t, "regress_replace_doubling", replace_chain(20) + ".size()")
    write(t, "regress_replace_doubling_30", replace_chain(30) + ".size()")
    write(t, "regress_regex_backtracking", backtracking_strings(2000) + ".exists(s, s.matches('(a+)+$'))")


def eval_target():
    t = "eval"
    # EXPR, a newline, then the JSON document whose keys are the variables.
    write(t, "regress_nested_map", "l.map(x, l.map(y, x + y)).size()\n" + json.dumps({"l": list(range(10000))}))
    write(t, "regress_nested_all",
          "l.all(a, l.all(b, l.all(c, a + b + c >= 0)))\n" + json.dumps({"l": list(range(1000))}))
    write(t, "regress_replace_doubling", replace_chain(20) + ".size()\n{}")
    write(t, "regress_replace_doubling_30", replace_chain(30) + ".size()\n{}")
    write(t, "regress_regex_backtracking",
          "l.exists(s, s.matches('(a+)+$'))\n" + json.dumps({"l": ["a" * 28 + "b"] * 2000}))
    # The split is at a NUL too; the JSON itself may hold NULs.
    write(t, "regress_nul_separator", b"s.size()\0{\"s\": \"a\\u0000b\"}")
    write(t, "regress_json_raw_nul", b's.size()\n{"s": "a\0b"}')
    write(t, "regress_json_trailing_garbage", 's.size()\n{"s": "a"} trailing')
    write(t, "regress_json_1e400", "x + 1.0\n{\"x\": 1e400}")
    write(t, "regress_json_deep", "x\n{\"x\": " + "[" * 600 + "]" * 600 + "}")
    write(t, "regress_json_deep_unclosed", "x\n{\"x\": " + "[" * 50000)


def snapshot_plan():
    t = "snapshot_plan"
    with open(os.path.join(ROOT, "examples", "snapshots", "pink-of-health.json")) as f:
        base = json.load(f)

    def snapshot(**changes):
        doc = json.loads(json.dumps(base))
        for path, value in changes.items():
            node = doc
            keys = path.split("__")
            for key in keys[:-1]:
                node = node[key]
            node[keys[-1]] = value
        return json.dumps(doc, indent=1)

    write(t, "regress_replicas_12.json", snapshot(etcd__spec__replicas=12))
    write(t, "regress_replicas_12_cluster_size.json",
          snapshot(etcd__spec__replicas=12, etcd__status__clusterSize=12))
    write(t, "regress_replicas_negative.json", snapshot(etcd__spec__replicas=-1))
    write(t, "regress_replicas_huge.json", snapshot(etcd__spec__replicas=2**63 - 1))
    write(t, "regress_replicas_uint64_max.json", snapshot(etcd__spec__replicas=2**64 - 1))
    write(t, "regress_replicas_1e400.json", snapshot(etcd__spec__replicas=1).replace(
        '"replicas": 1,', '"replicas": 1e400,', 1))
    name = base["etcd"]["metadata"]["name"]
    write(t, "regress_json_raw_nul.json", snapshot().replace('"%s"' % name, '"etcd\0main"', 1).encode())
    write(t, "regress_json_escaped_nul.json", snapshot().replace('"%s"' % name, '"etcd\\u0000main"', 1))
    write(t, "regress_json_nul_after.json", snapshot().encode() + b"\0")
    write(t, "regress_json_trailing_garbage.json", snapshot() + "}garbage")
    write(t, "regress_json_deep.json", snapshot()[:-1] + ', "deep": ' + "[" * 600 + "]" * 600 + "}")
    write(t, "regress_json_deep_unclosed.json", '{"apiVersion": "ruleplane.dev/v1", "x": ' + "[" * 50000)


if __name__ == "__main__":
    for target in ("rule_loader", "expression_parser", "eval", "snapshot_plan"):
        os.makedirs(os.path.join(HERE, target), exist_ok=True)
    rule_loader()
    expression_parser()
    eval_target()
    snapshot_plan()
