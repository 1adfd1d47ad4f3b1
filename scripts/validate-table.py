#!/usr/bin/env python3
"""Rewrites the table of docs/validate.md ("Measured numbers (full run)") from
docs/validate_full.json: one row per check, in the JSON's order.

usage: scripts/validate-table.py [--check] [JSON [MARKDOWN]]
       scripts/validate-table.py --print JSON

--print: writes the table of JSON (any `amsgd validate --format json` output) to stdout, with
its header, and nothing else (the demo report's verdict table).

--check: rewrites nothing; exits 1 when the table differs from the one the JSON gives, or
when a count "N rows: P PASS, F FAIL" in the page is not the JSON's (those sentences are
written by hand).
"""
import json
import re
import sys

HEADER = ("| check | parameters | measured +- h | predicted | tolerance | mdd | power -/+ | "
          "verdict |")


def short(v):
    """A power verdict as the text table shows it: P, F, I, or - when there is none."""
    return v[0] if v else "-"


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
    if c.get("vs_undelayed"):
        verdict += "; undelayed: " + c["vs_undelayed"]
    power = "%s/%s" % (short(c.get("power_low")), short(c.get("power_high")))
    return "| `%s` | %s | %s | %s | %s | %s | %s | %s |" % (
        c["name"], params, meas, pred, g(c["tolerance"], 3), g(c["mdd"], 3), power, verdict)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--print"] and len(args) == 2:
        print(HEADER)
        print("|---" * HEADER.count(" | ") + "|---|")
        for c in json.load(open(args[1]))["checks"]:
            print(row(c))
        return
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    src = args[0] if len(args) > 0 else "docs/validate_full.json"
    md = args[1] if len(args) > 1 else "docs/validate.md"
    checks = json.load(open(src))["checks"]
    lines = open(md).read().split("\n")
    try:
        start = lines.index(HEADER)
    except ValueError:
        sys.exit("validate-table: no table header in %s" % md)
    end = start + 2
    while end < len(lines) and lines[end].startswith("| "):
        end += 1
    table = [row(c) for c in checks]
    if not check:
        lines[start + 2:end] = table
        open(md, "w").write("\n".join(lines))
        return
    bad = 0
    if lines[start + 2:end] != table:
        print("validate-table: the table of %s is not the one %s gives (run "
              "scripts/validate-table.py)" % (md, src), file=sys.stderr)
        bad = 1
    n = len(checks)
    npass = sum(c["verdict"] == "PASS" for c in checks)
    nfail = sum(c["verdict"] == "FAIL" for c in checks)
    for i, line in enumerate(lines):
        for m in re.finditer(r"(\d+) rows: (\d+) PASS,\s+(\d+) FAIL", line + " " +
                             (lines[i + 1] if i + 1 < len(lines) else "")):
            if m.start() >= len(line):
                continue
            if (int(m.group(1)), int(m.group(2)), int(m.group(3))) != (n, npass, nfail):
                print("validate-table: %s:%d: '%s', but %s has %d rows: %d PASS, %d FAIL"
                      % (md, i + 1, m.group(0), src, n, npass, nfail), file=sys.stderr)
                bad = 1
    if not bad:
        print("validate-table: %s agrees with %s (%d rows: %d PASS, %d FAIL)"
              % (md, src, n, npass, nfail))
    sys.exit(bad)


if __name__ == "__main__":
    main()
