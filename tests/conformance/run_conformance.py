#!/usr/bin/env python3
"""Runs CEL's conformance cases through `ruleplane eval` and reports the pass rate of the supported subset.

usage: run_conformance.py RULEPLANE CASES.jsonl [--min-percent P] [--failures] [--skipped] [--only FILE]

Each case of CASES.jsonl (written by extract_cel_spec.py) is first classified, from the case alone and
never from its outcome: it is in ruleplane's subset unless one of the rules of skip_reason() below
applies. The cases in the subset run through `RULEPLANE eval --batch` (a line per case with its bindings as
the line's input, a process per core), and a case passes when compare() accepts its value. Prints
passed/failed/skipped per file and the pass rate of the subset; exits 1 when that rate is below
--min-percent (default 0) or when an eval process ends other than with exit 0 or 1 (a crash, a
sanitizer's report), 2 on bad usage.

How results compare, given that eval prints JSON, which loses some of CEL's types:
- int and double stay apart: eval prints a double with a fraction or an exponent (2.0, 1e+100) and an
  int without; Python's json reads them as float and int. Non-finite doubles are the strings
  "Infinity", "-Infinity" and "NaN" (CEL's JSON mapping); NaN matches NaN.
- A string, a timestamp and a duration all print as JSON strings: an expected timestamp or duration
  (object_value google.protobuf.Timestamp/Duration) matches its RFC 3339 or "<seconds>s" text, and an
  expected string also matches a timestamp or duration printed the same way.
- Map keys print as text: an expected key matches by its text (1 -> "1", true -> "true"); maps are
  order-agnostic.
- eval_error matches any error ruleplane reports for the expression, at check time or evaluation time
  (ruleplane checks less statically than cel-go, so some errors come earlier), except a parse error
  saying "unsupported:": a missing feature is a failure, not the expected error. The messages are not
  compared, as CEL implementations word them differently.
"""

import concurrent.futures
import datetime
import json
import math
import os
import re
import subprocess
import sys

# ruleplane's functions (rules/README.md, "Expressions" and "Extension functions"), and the macros.
GLOBAL_FUNCTIONS = {"size", "int", "double", "string", "timestamp", "duration", "matches", "has", "cronNext",
                    "backups", "parseBackupName"}
RECEIVER_FUNCTIONS = {"size", "startsWith", "endsWith", "contains", "matches", "split", "substring", "indexOf",
                      "lastIndexOf", "lowerAscii", "upperAscii", "replace", "trim", "join", "all", "exists",
                      "exists_one", "filter", "map", "range"}
# CEL's type denotations: values of type `type`, which ruleplane does not have.
TYPE_NAMES = {"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type", "dyn"}
# Kinds of cel.expr.Value that ruleplane's Value model holds (no uint, bytes, type, enum or messages).
PLAIN_KINDS = {"null_value", "bool_value", "int64_value", "double_value", "string_value", "list_value",
               "map_value"}
TIME_TYPES = {"google.protobuf.Timestamp", "google.protobuf.Duration"}

TOKEN = re.compile(r"""
    (?P<string>(?P<prefix>[rRbB]{0,2})(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"
                                          |'(?:\\.|[^\\'\n])*'|"(?:\\.|[^\\"\n])*"))
  | (?P<number>(?:0[xX][0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)[uU]?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<quoted>`[^`]*`)
  | (?P<punct>\S)
""", re.VERBOSE | re.DOTALL)


def tokens(expr):
    """(kind, text, string prefix) of each token: string, number, ident, quoted (`a-b`) or punct."""
    return [(m.lastgroup, m.group(0), m.group("prefix") or "") for m in TOKEN.finditer(expr)]


def expression_feature(expr):
    """The first CEL feature outside ruleplane's subset that `expr` uses, or None."""
    toks = tokens(expr)
    for i, (kind, text, prefix) in enumerate(toks):
        before = toks[i - 1][1] if i > 0 else ""
        after = toks[i + 1][1] if i + 1 < len(toks) else ""
        if kind == "string" and "b" in prefix.lower():
            return "bytes literal"
        if kind == "number" and text[-1] in "uU":
            return "uint literal"
        if kind == "punct" and text in ".[{" and after == "?":
            return "optional syntax"
        next_is_ident = i + 1 < len(toks) and toks[i + 1][0] == "ident"
        if kind == "punct" and text == "." and next_is_ident and (i == 0 or before in "([{,:?!+-*/%<>=&|"):
            return "absolute name (leading '.')"
        if kind != "ident" or text in ("in", "true", "false", "null"):
            continue
        if before == "." and after == "(":
            if text not in RECEIVER_FUNCTIONS:
                return f"function {text}()"
        elif after == "(" and before != ".":
            if text not in GLOBAL_FUNCTIONS:
                return f"function {text}()"
        elif after == "{" and before != "?":
            return "message construction"
        elif before != "." and text in TYPE_NAMES:
            return "type denotation"
        elif before != "." and text in ("google", "cel", "optional"):
            return "protobuf or optional type name"
    return None


def plain_value(value):
    """Why `value` (a cel.expr.Value as JSON) is not plain JSON-able data, or None."""
    kind, content = next(iter(value.items()))
    if kind not in PLAIN_KINDS:
        return kind
    if kind == "double_value" and isinstance(content, str):
        return "non-finite double"
    if kind == "list_value":
        return next(filter(None, (plain_value(item) for item in content)), None)
    if kind == "map_value":
        for k, v in content:
            if next(iter(k)) != "string_value":
                return "map with non-string keys"
            why = plain_value(v)
            if why:
                return why
    return None


def expected_value(value):
    """Why an expected value is outside what eval can print comparably, or None."""
    kind, content = next(iter(value.items()))
    if kind == "object_value":
        return None if content["type"] in TIME_TYPES else f"object_value {content['type']}"
    if kind not in PLAIN_KINDS:
        return kind
    if kind == "list_value":
        return next(filter(None, (expected_value(item) for item in content)), None)
    if kind == "map_value":
        for k, v in content:
            if next(iter(k)) not in ("string_value", "int64_value", "bool_value"):
                return f"map key {next(iter(k))}"
            why = expected_value(v)
            if why:
                return why
    return None


def skip_reason(case):
    """The rules that put a case outside ruleplane's subset, in order; None when it is inside."""
    if case["check_only"]:
        return "check only (no evaluation)"
    if case["disable_macros"]:
        return "macros disabled"
    if case["container"]:
        return "container (protobuf package)"
    expected = case["expected"]
    if "other" in expected:
        return f"expects {expected['other']}"
    if "value" in expected:
        why = expected_value(expected["value"])
        if why:
            return f"expected {why}"
    if "unsupported_bindings" in case:
        return "binding not a value"
    for name, value in case.get("bindings", {}).items():
        why = plain_value(value)
        if why:
            return f"binding {why}"
    for decl in case["type_env"]:
        if "function" in decl:
            return "declares a function"
    return expression_feature(case["expr"])


def to_json_binding(value):
    kind, content = next(iter(value.items()))
    if kind == "list_value":
        return [to_json_binding(item) for item in content]
    if kind == "map_value":
        return {k["string_value"]: to_json_binding(v) for k, v in content}
    if kind == "double_value":
        return float(content)
    return content


def rfc3339(fields):
    seconds, nanos = int(fields.get("seconds", 0)), int(fields.get("nanos", 0))
    when = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
    text = f"{when.year:04d}-{when.month:02d}-{when.day:02d}T{when.hour:02d}:{when.minute:02d}:{when.second:02d}"
    if nanos:
        text += ("." + f"{nanos:09d}").rstrip("0")
    return text + "Z"


def duration_text(fields):
    total = int(fields.get("seconds", 0)) * 10**9 + int(fields.get("nanos", 0))
    sign, total = ("-", -total) if total < 0 else ("", total)
    text = f"{sign}{total // 10**9}"
    if total % 10**9:
        text += ("." + f"{total % 10**9:09d}").rstrip("0")
    return text + "s"


def key_text(key):
    kind, content = next(iter(key.items()))
    if kind == "bool_value":
        return "true" if content else "false"
    return str(content)


def compare(expected, actual):
    """None when `actual` (parsed JSON) matches `expected` (a cel.expr.Value as JSON), else why not."""
    kind, content = next(iter(expected.items()))
    mismatch = f"expected {describe(expected)}, got {json.dumps(actual)}"
    if kind == "null_value":
        return None if actual is None else mismatch
    if kind == "bool_value":
        return None if actual is content else mismatch
    if kind == "int64_value":
        return None if type(actual) is int and actual == content else mismatch
    if kind == "double_value":
        if isinstance(content, str):
            return None if actual == content else mismatch
        if type(actual) is not float:
            return mismatch
        return None if actual == content or (math.isnan(content) and math.isnan(actual)) else mismatch
    if kind == "string_value":
        return None if actual == content else mismatch
    if kind == "object_value":
        text = rfc3339(content["fields"]) if content["type"].endswith("Timestamp") else duration_text(
            content["fields"])
        return None if actual == text else mismatch
    if kind == "list_value":
        if not isinstance(actual, list) or len(actual) != len(content):
            return mismatch
        for e, a in zip(content, actual):
            if compare(e, a):
                return mismatch
        return None
    if kind == "map_value":
        if not isinstance(actual, dict) or len(actual) != len(content):
            return mismatch
        for k, v in content:
            if key_text(k) not in actual or compare(v, actual[key_text(k)]):
                return mismatch
        return None
    return mismatch


def describe(value):
    return json.dumps(value)


def outcome(case, result):
    """(passed, detail) of one case from its line of `eval --batch`: {"value": ...} or {"error": "..."}."""
    expected = case["expected"]
    if "eval_error" in expected:
        if "error" in result and "unsupported:" not in result["error"]:
            return True, ""
        got = f"error: {result['error']}" if "error" in result else describe(result["value"])
        return False, f"expected an error, got {got}"
    if "error" in result:
        return False, f"expected {describe(expected['value'])}, got error: {result['error']}"
    why = compare(expected["value"], result["value"])
    return why is None, why or ""


class EvalCrashed(Exception):
    pass


def run_cases(binary, cases):
    """(passed, detail) per case, in order: one `eval --batch` process for all of them. Raises EvalCrashed
    when the process ends other than with 0 or 1, or leaves a case unanswered."""
    lines = []
    for case in cases:
        line = {"expr": case["expr"]}
        if case.get("bindings"):
            line["input"] = {name: to_json_binding(v) for name, v in case["bindings"].items()}
        lines.append(json.dumps(line, ensure_ascii=False))
    text = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    result = subprocess.run([binary, "eval", "--batch"], input=text, capture_output=True, timeout=600)
    results = {}
    for line in result.stdout.decode("utf-8", "replace").splitlines():
        answer = json.loads(line)
        results[answer["line"] - 1] = answer
    if result.returncode not in (0, 1) or len(results) != len(cases):
        stderr = result.stderr.decode("utf-8", "replace").strip()
        raise EvalCrashed(f"eval --batch exited {result.returncode} after answering {len(results)} of "
                          f"{len(cases)} cases:\n{stderr[-4000:]}")
    return [outcome(case, results[i]) for i, case in enumerate(cases)]


def main(argv):
    args = argv[1:]
    min_percent, show_failures, show_skipped, only = 0.0, False, False, None
    positional = []
    i = 0
    while i < len(args):
        if args[i] == "--min-percent" and i + 1 < len(args):
            min_percent = float(args[i + 1])
            i += 1
        elif args[i] == "--failures":
            show_failures = True
        elif args[i] == "--skipped":
            show_skipped = True
        elif args[i] == "--only" and i + 1 < len(args):
            only = args[i + 1]
            i += 1
        elif args[i].startswith("-"):
            sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
            return 2
        else:
            positional.append(args[i])
        i += 1
    if len(positional) != 2:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    binary, cases_path = positional
    with open(cases_path, encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    if only:
        cases = [case for case in cases if case["file"] == only]

    reasons = [skip_reason(case) for case in cases]
    inside = [case for case, reason in zip(cases, reasons) if reason is None]
    # One batch per core, each in one process (a process per case spent most of its time starting).
    workers = max(2, os.cpu_count() or 2)
    chunks = [inside[k::workers] for k in range(workers)]
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(lambda chunk: run_cases(binary, chunk), chunks))
    except EvalCrashed as crashed:
        print(crashed)
        return 1
    outcomes = {id(case): result for chunk, chunk_results in zip(chunks, results)
                for case, result in zip(chunk, chunk_results)}

    files = list(dict.fromkeys(case["file"] for case in cases))
    counts = {name: [0, 0, 0] for name in files}
    skipped_by_reason = {}
    failures = []
    for case, reason in zip(cases, reasons):
        row = counts[case["file"]]
        if reason is not None:
            row[2] += 1
            skipped_by_reason.setdefault(reason, []).append(case)
            continue
        passed, detail = outcomes[id(case)]
        row[0 if passed else 1] += 1
        if not passed:
            failures.append((case, detail))

    def rate(passed, failed):
        return 100.0 * passed / (passed + failed) if passed + failed else 100.0

    print(f"{'file':<14}{'passed':>8}{'failed':>8}{'skipped':>9}{'pass rate':>11}")
    for name in files:
        passed, failed, skipped = counts[name]
        print(f"{name:<14}{passed:>8}{failed:>8}{skipped:>9}{rate(passed, failed):>10.1f}%")
    total = [sum(row[k] for row in counts.values()) for k in range(3)]
    overall = rate(total[0], total[1])
    print(f"{'total':<14}{total[0]:>8}{total[1]:>8}{total[2]:>9}{overall:>10.1f}%")
    if show_skipped:
        print("\nskipped, by reason:")
        for reason, skipped in sorted(skipped_by_reason.items(), key=lambda item: -len(item[1])):
            print(f"  {len(skipped):>4}  {reason}")
    if show_failures and failures:
        print("\nfailures:")
        for case, detail in failures:
            print(f"  {case['file']}/{case['section']}/{case['name']}: {case['expr']}\n      {detail}")
    if overall < min_percent:
        print(f"\nthe pass rate {overall:.1f}% is below {min_percent:g}%")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
