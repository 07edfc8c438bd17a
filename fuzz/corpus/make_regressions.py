#!/usr/bin/env python3
"""Writes the regress_* inputs of the fuzz corpora: one per class of crash,
hang or memory blow-up found so far (fuzz/README.md lists them). They are
generated because most are large and repetitive; rerun after changing this
script:  python3 fuzz/corpus/make_regressions.py
"""
import base64
import gzip
import hashlib
import json
import os
import zlib

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


def lzw_bomb(repeats):
    """Go's compress/lzw (LSB, literal width 8): the runs of zeros "0", "00", ... until the 12-bit table is full,
    then its longest entry (3,839 bytes a code) `repeats` times: ~2,500-fold."""
    out, bits, count, width, defined = bytearray(), 0, 0, 9, 258

    def emit(code, first=False):
        nonlocal bits, count, width, defined
        bits |= code << count
        count += width
        while count >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            count -= 8
        if not first and defined < 4096:
            defined += 1
        if defined >= (1 << width) and width < 12:
            width += 1

    emit(0, first=True)
    for code in range(258, 4096):
        emit(code)
    for _ in range(repeats):
        emit(4095)
    emit(257)
    if count > 0:
        out.append(bits & 0xFF)
    return bytes(out)


def delta(events):
    data = json.dumps(events, separators=(",", ":")).encode()
    return data + hashlib.sha256(data).digest()


def event(key, revision):
    kv = {"key": base64.b64encode(key.encode()).decode(), "value": "dg=="}
    if revision:
        kv.update(create_revision=revision, mod_revision=revision, version=1)
    return {"etcdEvent": {"kv": kv}, "time": "2024-05-01T10:00:00Z"}


def store_files():
    """Issue 24: decompression bombs and deltas the replay refuses (the first byte of a decompress input picks
    the compression: 0 gzip, 1 zlib, 2 lzw)."""
    t = "decompress"
    write(t, "regress_gzip_bomb", b"\0" + gzip.compress(b"\0" * (32 << 20), mtime=0))
    write(t, "regress_zlib_bomb", b"\1" + zlib.compress(b"\0" * (32 << 20)))
    write(t, "regress_lzw_bomb", b"\2" + lzw_bomb(20000))
    write(t, "regress_gzip_truncated", b"\0" + gzip.compress(b"hello world" * 100, mtime=0)[:30])
    write(t, "regress_lzw_bad_code", b"\2\xff\xff\xff\x0f")
    t = "delta_file"
    write(t, "regress_out_of_order", delta([event("/a", 3), event("/b", 2), event("/c", 5)]))
    write(t, "regress_no_mod_revision", delta([event("/a", 2), event("/b", 0)]))
    deep = b"[" * 600 + b"]" * 600
    write(t, "regress_deep_json", deep + hashlib.sha256(deep).digest())
    write(t, "regress_not_base64", delta([{"etcdEvent": {"kv": {"key": "***", "mod_revision": 2}}}]))
    write(t, "regress_short", b"short")
    golden = open(os.path.join(ROOT, "tests/data/backup-restore/Incr-00000002-00000005-1714557600"), "rb").read()
    write(t, "regress_checksum_mismatch", golden[:-1] + bytes([golden[-1] ^ 1]))


if __name__ == "__main__":
    for target in ("rule_loader", "expression_parser", "eval", "snapshot_plan", "decompress", "delta_file"):
        os.makedirs(os.path.join(HERE, target), exist_ok=True)
    rule_loader()
    expression_parser()
    eval_target()
    snapshot_plan()
    store_files()
