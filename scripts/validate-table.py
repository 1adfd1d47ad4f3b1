#!/usr/bin/env python3
"""Rewrites the table of docs/validate.md ("Measured numbers (full run)") from
docs/validate_full.json: one row per check, in the JSON's order.

usage: scripts/validate-table.py [JSON [MARKDOWN]]
"""
import json
import sys

HEADER = "| check | parameters | measured +- h | predicted | tolerance | mdd | verdict |"


def g(x, digits):
    return "%.*g" % (digits, x)


def row(c):
    meas = "%s +- %s" % (g(c["measured"], 5), g(c["halfwidth"], 2))
    pred = g(c["predicted"], 5)
    if c.get("predicted_sem", 0) > 0:
        pred += " +- " + g(c["predicted_sem"], 2)
    verdict = c["verdict"]
    if c.get("finding"):
        verdict += " (finding)"
    if c.get("rule") == "one-sided":
        verdict += ", one-sided"
    params = c["params"].replace("|", "\\|")
    return "| `%s` | %s | %s | %s | %s | %s | %s |" % (
        c["name"], params, meas, pred, g(c["tolerance"], 3), g(c["mdd"], 3), verdict)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "docs/validate_full.json"
    md = sys.argv[2] if len(sys.argv) > 2 else "docs/validate.md"
    checks = json.load(open(src))["checks"]
    lines = open(md).read().split("\n")
    try:
        start = lines.index(HEADER)
    except ValueError:
        sys.exit("validate-table: no table header in %s" % md)
    end = start + 2
    while end < len(lines) and lines[end].startswith("| "):
        end += 1
    lines[start + 2:end] = [row(c) for c in checks]
    open(md, "w").write("\n".join(lines))


if __name__ == "__main__":
    main()
