#!/usr/bin/env python3
"""Extracts CEL conformance cases from cel-spec's tests/simple/testdata into JSON lines.

usage: extract_cel_spec.py CEL_SPEC_DIR [OUT.jsonl]

CEL_SPEC_DIR is a checkout of https://github.com/google/cel-spec; OUT defaults to
cel_spec_cases.jsonl next to this script. One line per test, in file order:

  {"file": "basic", "section": "...", "name": "...", "expr": "...",
   "disable_check": false, "disable_macros": false, "check_only": false, "container": "",
   "type_env": [{"name": "x", "ident": {...}}, ...],     (the declarations, as written)
   "bindings": {"x": VALUE, ...},                         (variables; ExprValue.value only)
   "unsupported_bindings": "why",                         (when a binding is not a plain value)
   "expected": {"value": VALUE} | {"eval_error": ["message", ...]} | {"other": "unknown"|...}}

A VALUE is cel.expr.Value with its field names, one key each: {"int64_value": 1},
{"uint64_value": 1}, {"double_value": 1.5 | "Infinity" | "-Infinity" | "NaN"},
{"string_value": "a"}, {"bytes_value": "<base64>"}, {"bool_value": true},
{"null_value": null}, {"list_value": [VALUE, ...]}, {"map_value": [[VALUE, VALUE], ...]},
{"type_value": "int"}, {"enum_value": {...}}, {"object_value": {"type": "google.protobuf.Duration",
"fields": {...}}}. A test without a result matcher expects true, as simple.proto says.

Only the standard library; the textproto reader below covers what these files use.
"""

import base64
import json
import math
import os
import sys

FILES = [
    "basic", "comparisons", "integer_math", "fp_math", "logic", "macros", "string", "lists",
    "timestamps", "conversions", "fields",
]


class Ident(str):
    """An unquoted identifier value (true, NULL_VALUE, inf)."""


class Number(str):
    """A number as written."""


class TextProtoError(Exception):
    pass


class Reader:
    """A minimal protobuf text format reader: messages become dicts of field name to a list of values."""

    def __init__(self, text):
        self.text = text
        self.pos = 0

    def error(self, message):
        line = self.text.count("\n", 0, self.pos) + 1
        raise TextProtoError(f"line {line}: {message}")

    def skip(self):
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c in " \t\r\n,;":
                self.pos += 1
            elif c == "#":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                break

    def peek(self):
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def word(self):
        self.skip()
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] in "_.+-"):
            self.pos += 1
        if start == self.pos:
            self.error(f"expected a name or a value, found {self.text[self.pos:self.pos + 10]!r}")
        return self.text[start:self.pos]

    def message(self, closing):
        fields = {}
        while True:
            c = self.peek()
            if c == closing or (c == "" and closing == ""):
                self.pos += len(c)
                return fields
            if c == "":
                self.error("unexpected end of input")
            if c == "[":
                end = self.text.index("]", self.pos)
                name = self.text[self.pos:end + 1]
                self.pos = end + 1
            else:
                name = self.word()
            if self.peek() == ":":
                self.pos += 1
            fields.setdefault(name, []).extend(self.values())

    def values(self):
        c = self.peek()
        if c == "[":
            self.pos += 1
            items = []
            while self.peek() != "]":
                items.extend(self.values())
            self.pos += 1
            return items
        return [self.value()]

    def value(self):
        c = self.peek()
        if c in "{<":
            self.pos += 1
            return self.message("}" if c == "{" else ">")
        if c in "'\"":
            data = b""
            while self.peek() in ("'", '"'):
                data += self.string()
            return data
        token = self.word()
        if token[0].isdigit() or token[0] in "+-." and len(token) > 1 and (token[1].isdigit() or token[1] == "."):
            return Number(token)
        return Ident(token)

    def string(self):
        quote = self.text[self.pos]
        self.pos += 1
        out = bytearray()
        simple = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92, "'": 39, '"': 34, "?": 63}
        while True:
            if self.pos >= len(self.text):
                self.error("unterminated string")
            c = self.text[self.pos]
            self.pos += 1
            if c == quote:
                return bytes(out)
            if c != "\\":
                out += c.encode("utf-8")
                continue
            e = self.text[self.pos]
            self.pos += 1
            if e in simple:
                out.append(simple[e])
            elif e in "01234567":
                digits = e
                while len(digits) < 3 and self.text[self.pos] in "01234567":
                    digits += self.text[self.pos]
                    self.pos += 1
                out.append(int(digits, 8) & 0xFF)
            elif e in "xX":
                digits = ""
                while len(digits) < 2 and self.text[self.pos] in "0123456789abcdefABCDEF":
                    digits += self.text[self.pos]
                    self.pos += 1
                out.append(int(digits, 16))
            elif e in "uU":
                count = 4 if e == "u" else 8
                out += chr(int(self.text[self.pos:self.pos + count], 16)).encode("utf-8", "surrogatepass")
                self.pos += count
            else:
                self.error(f"unknown escape \\{e}")


def one(fields, name, default=None):
    values = fields.get(name, [])
    return values[-1] if values else default


def text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def number(token, integer):
    token = str(token)
    lower = token.lower()
    if not lower.startswith("0x") and len(lower) > 1 and lower[-1] == "f" and lower[-2].isdigit():
        lower = lower[:-1]  # 1.5f
    if integer:
        return int(lower, 0)
    if lower in ("inf", "+inf", "infinity"):
        return "Infinity"
    if lower in ("-inf", "-infinity"):
        return "-Infinity"
    if lower in ("nan", "-nan"):
        return "NaN"
    value = float(lower)
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def generic(value):
    """A message of any type as plain JSON: fields written once are single values."""
    if isinstance(value, dict):
        return {name: generic(items[0]) if len(items) == 1 else [generic(item) for item in items]
                for name, items in value.items()}
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(value).decode("ascii")
    if isinstance(value, Number):
        return number(value, "." not in value and "e" not in value.lower() or value.lower().startswith("0x"))
    if value == "true" or value == "false":
        return value == "true"
    return str(value)


def cel_value(fields):
    """cel.expr.Value -> {"<kind>": ...}."""
    if not fields:
        return {"null_value": None}  # an empty Value: treated as unset, as proto would
    kind, items = next(iter(fields.items()))
    v = items[-1]
    if kind == "null_value":
        return {"null_value": None}
    if kind == "bool_value":
        return {"bool_value": str(v) == "true"}
    if kind in ("int64_value", "uint64_value"):
        return {kind: number(v, True)}
    if kind == "double_value":
        return {kind: number(v, False)}
    if kind == "string_value":
        return {kind: v.decode("utf-8")}
    if kind == "bytes_value":
        return {kind: base64.b64encode(v).decode("ascii")}
    if kind == "type_value":
        return {kind: text(v)}
    if kind == "enum_value":
        return {kind: generic(v)}
    if kind == "list_value":
        return {kind: [cel_value(item) for item in v.get("values", [])]}
    if kind == "map_value":
        return {kind: [[cel_value(one(entry, "key", {})), cel_value(one(entry, "value", {}))]
                       for entry in v.get("entries", [])]}
    if kind == "object_value":
        type_url, inner = next(iter(v.items()))
        return {kind: {"type": type_url.strip("[]").split("/")[-1], "fields": generic(inner[-1])}}
    raise TextProtoError(f"unknown Value kind {kind}")


def extract_test(file_name, section, test):
    case = {
        "file": file_name,
        "section": text(one(section, "name", b"")),
        "name": text(one(test, "name", b"")),
        "expr": text(one(test, "expr", b"")),
        "disable_check": str(one(test, "disable_check", "false")) == "true",
        "disable_macros": str(one(test, "disable_macros", "false")) == "true",
        "check_only": str(one(test, "check_only", "false")) == "true",
        "container": text(one(test, "container", b"")),
        "type_env": [generic(decl) for decl in test.get("type_env", [])],
    }
    bindings, unsupported = {}, []
    for entry in test.get("bindings", []):
        name = text(one(entry, "key", b""))
        expr_value = one(entry, "value", {})
        if "value" in expr_value:
            bindings[name] = cel_value(one(expr_value, "value", {}))
        else:
            unsupported.append(f"{name} is an {', '.join(expr_value) or 'empty'} ExprValue")
    if bindings or unsupported:
        case["bindings"] = bindings
    if unsupported:
        case["unsupported_bindings"] = "; ".join(unsupported)
    if "value" in test:
        case["expected"] = {"value": cel_value(one(test, "value"))}
    elif "eval_error" in test:
        errors = one(test, "eval_error").get("errors", [])
        case["expected"] = {"eval_error": [text(one(error, "message", b"")) for error in errors]}
    elif "typed_result" in test:
        case["expected"] = {"value": cel_value(one(one(test, "typed_result"), "result", {}))}
    else:
        other = [name for name in ("any_eval_errors", "unknown", "any_unknowns") if name in test]
        case["expected"] = {"other": other[0]} if other else {"value": {"bool_value": True}}
    return case


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    testdata = os.path.join(argv[1], "tests", "simple", "testdata")
    out_path = argv[2] if len(argv) == 3 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "cel_spec_cases.jsonl")
    lines = []
    for file_name in FILES:
        path = os.path.join(testdata, file_name + ".textproto")
        with open(path, encoding="utf-8") as f:
            try:
                root = Reader(f.read()).message("")
            except TextProtoError as e:
                sys.stderr.write(f"{path}: {e}\n")
                return 1
        for section in root.get("section", []):
            for test in section.get("test", []):
                lines.append(json.dumps(extract_test(file_name, section, test), ensure_ascii=False,
                                        sort_keys=False))
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} cases from {len(FILES)} files -> {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
