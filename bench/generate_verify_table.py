#!/usr/bin/env python3
"""Writes a large decision table for timing `ruleplane verify`.

Two int facts, x in [0, X-1] and y in [0, Y-1] (36 states by default), and
RULES rules drawn with a fixed seed: single-value cells, ranges, comparisons
and "-". Most rules are masked by earlier ones (FIRST) or conflict (UNIQUE),
some are dead (an empty range, or a condition that no state satisfies), so
every path of the report is exercised.

  python3 bench/generate_verify_table.py --rules 10000 > /tmp/verify-10k.yaml
  build/release/ruleplane verify /tmp/verify-10k.yaml
"""
import argparse
import random
import sys


def cell(rng, size):
    kind = rng.randrange(6)
    if kind == 0:
        return None
    if kind == 1:
        return f'"== {rng.randrange(size)}"'
    if kind == 2:
        low = rng.randrange(size)
        high = rng.randrange(low, size + 1)
        return f'"[{low}..{high})"'
    if kind == 3:
        return f'"< {rng.randrange(size + 1)}"'
    if kind == 4:
        return f'">= {rng.randrange(size)}"'
    return f'"!= {rng.randrange(size)}"'


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", type=int, default=10000)
    parser.add_argument("--x", type=int, default=6, help="values of x")
    parser.add_argument("--y", type=int, default=6, help="values of y")
    parser.add_argument("--hit-policy", default="FIRST", choices=["FIRST", "UNIQUE", "PRIORITY", "ANY", "RULE_ORDER", "COLLECT"])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = sys.stdout
    out.write(
        "apiVersion: ruleplane.dev/v1\n"
        "kind: DecisionTable\n"
        f"metadata: {{name: generated-{args.rules}, version: 1.0.0}}\n"
        "spec:\n"
        "  subject: Generated\n"
        f"  hitPolicy: {args.hit_policy}\n"
        "  allowGaps: true\n"
        "  facts:\n"
        f'    - {{name: x, expr: snapshot.x, domain: "int [0, {args.x - 1}]"}}\n'
        f'    - {{name: y, expr: snapshot.y, domain: "int [0, {args.y - 1}]"}}\n'
        "  rules:\n"
    )
    for r in range(args.rules):
        when = {}
        for name, size in (("x", args.x), ("y", args.y)):
            text = cell(rng, size)
            if text is not None:
                when[name] = text
        out.write(f"    - id: r{r}\n")
        if args.hit_policy == "PRIORITY":
            out.write(f"      priority: {rng.randrange(100)}\n")
        out.write("      when: {" + ", ".join(f"{k}: {v}" for k, v in when.items()) + "}\n")
        if rng.randrange(20) == 0:
            out.write("      condition: x + y > " + str(args.x + args.y) + "\n")
        elif rng.randrange(4) == 0:
            out.write("      condition: (x + y) % 2 == " + str(rng.randrange(2)) + "\n")
        action = rng.randrange(3)
        if action == 1:
            out.write("      then: [{action: RaiseAlert, params: {severity: '\"warning\"', summary: '\"s\"'}}]\n")
        elif action == 2:
            out.write("      then: [{action: DeletePod, params: {name: '\"p" + str(rng.randrange(4)) + "\"'}}]\n")


if __name__ == "__main__":
    main()
