#!/usr/bin/env python3
"""Checks that every command output quoted in the docs is what the command prints.

Usage: scripts/doc-quotes.py [--amsgd BIN] [--timeout S] [--verbose] [FILE.md ...]

Without files: every docs/*.md of the repository. The convention (docs/README.md, "Quoted
outputs"):

- A code block (fenced, or indented by four spaces) whose first non-blank line starts with
  `$ ` and that holds at least one output line is a quote. Each `$ ` line is a command
  (bash; `amsgd` is the repository's build/amsgd or --amsgd BIN); a line ending in `\\` or
  an unfinished shell construct (a `for` loop, an open quote) continues on the next lines.
  The lines after a command, up to the next `$ ` line, are its output: its standard output
  followed by its standard error (the exit status is not compared; blank lines at the end
  of an output are not compared). A command followed by no lines prints nothing. Blocks
  separated only by blank lines are one block, as in Markdown.
- The commands of one block run in order in one temporary directory, so a file that one
  writes (`-o mc.json`) is there for the next. Every top-level entry of the repository
  (`build`, `tests`, `python`, `examples`, ...) is linked into that directory, so relative
  paths such as `tests/data/idx-tiny` resolve from the repository root; `python3` is the
  interpreter that runs this script.
- `...` stands for omitted output: a line that is only `...` matches any run of lines (none
  included), `...` inside a line any text within the line (so a literal `...` in the output
  matches itself).
- `<!-- excerpt -->` as the last non-blank line before the block: the block shows some of
  the output lines, in order; any lines may come between and around them.
- `<!-- quote: not run (REASON) -->` before the block: the command is too slow for the check
  (REASON says how long it takes); the block is counted as skipped.

The summary line counts the quotes run, those of them that matched as excerpts (through
`...` or the mark, rather than line for line), the skipped ones and the failures.
Exit status 0 if every quote that was run matches, 1 otherwise, 2 on bad usage.
"""

import argparse
import difflib
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MARK_EXCERPT = re.compile(r"^\s*<!--\s*excerpt\s*-->\s*$")
MARK_NOT_RUN = re.compile(r"^\s*<!--\s*quote:\s*not run\b.*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)")


def blocks(lines):
    """Yields (first line number, the block's lines without their indentation, marker line)."""
    i, n = 0, len(lines)
    prev_nonblank = ""
    prev_blank = True
    while i < n:
        line = lines[i]
        m = FENCE.match(line)
        if m:
            indent, fence = len(m.group(1)), m.group(2)
            start, body = i + 1, []
            i += 1
            while i < n and not lines[i].strip().startswith(fence):
                body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
                i += 1
            yield start + 1, body, prev_nonblank
            i += 1
            prev_nonblank, prev_blank = "", False
            continue
        indent = len(line) - len(line.lstrip(" "))
        if line.strip() and indent >= 4 and prev_blank:
            start, body = i, []
            while i < n and (not lines[i].strip() or
                             len(lines[i]) - len(lines[i].lstrip(" ")) >= indent):
                body.append(lines[i][indent:])
                i += 1
            while body and not body[-1].strip():
                body.pop()
            yield start + 1, body, prev_nonblank
            prev_nonblank, prev_blank = "", True
            continue
        if line.strip():
            prev_nonblank = line
        prev_blank = not line.strip()
        i += 1


def complete(cmd):
    """Whether bash would run cmd as it stands (no open quote, loop or trailing backslash)."""
    if cmd.endswith("\\"):
        return False
    r = subprocess.run(["bash", "-n"], input=cmd, capture_output=True, text=True)
    return "unexpected end of file" not in r.stderr


def parse_quote(body):
    """[(command, [output lines])] of a quote block, or None if the block is not a quote."""
    k = 0
    while k < len(body) and not body[k].strip():
        k += 1
    if k == len(body) or not body[k].startswith("$ "):
        return None
    steps = []
    while k < len(body):
        line = body[k]
        if line.startswith("$ "):
            cmd = line[2:]
            k += 1
            while not complete(cmd) and k < len(body):
                cmd += "\n" + body[k]
                k += 1
            steps.append((cmd, []))
        else:
            steps[-1][1].append(line)
            k += 1
    for _, out in steps:  # blank lines before the next command are not output
        while out and not out[-1].strip():
            out.pop()
    if not any(out for _, out in steps):
        return None  # commands only: a listing, not a quote
    return steps


def line_pattern(line):
    return re.compile("^" + ".*".join(re.escape(p) for p in line.split("...")) + "$")


def match(expected, actual, subsequence):
    """Whether the quoted lines match the actual ones ('...' rules, or in order with gaps)."""
    pats = []
    for e in expected:
        if e.strip() == "...":
            if not pats or pats[-1] is not None:
                pats.append(None)
        else:
            if subsequence and (not pats or pats[-1] is not None):
                pats.append(None)
            pats.append(line_pattern(e))
    if subsequence and (not pats or pats[-1] is not None):
        pats.append(None)
    # dynamic programme over (pattern index, line index)
    reach = {0}
    for p in pats:
        nxt = set()
        if p is None:
            lo = min(reach) if reach else len(actual) + 1
            nxt = set(range(lo, len(actual) + 1))
        else:
            for j in reach:
                if j < len(actual) and p.match(actual[j]):
                    nxt.add(j + 1)
        reach = nxt
        if not reach:
            return False
    return len(actual) in reach


def run_block(steps, amsgd, root, timeout):
    """Runs the commands in one temporary directory: [(command, actual lines, seconds, note)]."""
    tmp = tempfile.mkdtemp(prefix="doc-quotes.")
    try:
        for entry in os.listdir(root):
            if not entry.startswith("."):
                os.symlink(os.path.join(root, entry), os.path.join(tmp, entry))
        bindir = os.path.join(tmp, ".bin")
        os.mkdir(bindir)
        os.symlink(amsgd, os.path.join(bindir, "amsgd"))
        os.symlink(sys.executable, os.path.join(bindir, "python3"))
        env = dict(os.environ)
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        env.pop("AMSGD_MAX_WORK", None)
        env["LC_ALL"] = "C"
        results = []
        for cmd, _ in steps:
            t0 = time.monotonic()
            note = None
            try:
                r = subprocess.run(["bash", "-c", cmd], cwd=tmp, env=env, capture_output=True,
                                   timeout=timeout)
                text = r.stdout.decode(errors="replace") + r.stderr.decode(errors="replace")
            except subprocess.TimeoutExpired:
                text = ""
                note = "timed out after %g s: mark the block <!-- quote: not run (...) -->" % timeout
            lines = text.split("\n")
            while lines and not lines[-1].strip():
                lines.pop()
            results.append((cmd, lines, time.monotonic() - t0, note))
            if note:
                break
        return results
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description="Checks the command outputs quoted in docs/*.md.")
    ap.add_argument("--amsgd", default=os.path.join(root, "build", "amsgd"),
                    help="the amsgd binary (default: build/amsgd of the repository)")
    ap.add_argument("--root", default=root,
                    help="where relative paths resolve (default: the repository)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per command")
    ap.add_argument("--verbose", action="store_true", help="one line per quote with its time")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    amsgd = os.path.abspath(a.amsgd)
    if not os.access(amsgd, os.X_OK):
        print("doc-quotes: %s is not an executable (run make first)" % amsgd, file=sys.stderr)
        return 2
    files = a.files or sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    ran = excerpts = skipped = failed = 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        rel = os.path.relpath(path)
        for lineno, body, marker in blocks(lines):
            steps = parse_quote(body)
            if steps is None:
                continue
            where = "%s:%d" % (rel, lineno)
            if MARK_NOT_RUN.match(marker):
                skipped += 1
                if a.verbose:
                    print("doc-quotes: %s: skipped (%s)" % (where, marker.strip()))
                continue
            excerpt = bool(MARK_EXCERPT.match(marker))
            dots = any("..." in l for _, out in steps for l in out)
            ran += 1
            secs, ok, identical = 0.0, True, True
            for (cmd, expected), (_, actual, t, note) in zip(steps, run_block(steps, amsgd, a.root,
                                                                              a.timeout)):
                secs += t
                identical = identical and note is None and expected == actual
                if note or not match(expected, actual, excerpt):
                    ok = False
                    print("doc-quotes: %s: FAILED: $ %s" % (where, cmd.split("\n")[0]),
                          file=sys.stderr)
                    if note:
                        print("  " + note, file=sys.stderr)
                    else:
                        kind = "excerpt" if excerpt else "with '...'" if dots else "exact"
                        print("  quoted (%s) against printed:" % kind, file=sys.stderr)
                        for d in difflib.unified_diff(expected, actual, "quoted", "printed",
                                                      lineterm="", n=2):
                            print("  " + d, file=sys.stderr)
                    break
            if not ok:
                failed += 1
            elif not identical:
                excerpts += 1  # matched through '...' or as a marked excerpt
            if a.verbose:
                state = "FAILED" if not ok else "identical" if identical else "excerpt"
                print("doc-quotes: %s: %s (%.1f s)" % (where, state, secs))
    print("doc-quotes: %d quotes run (%d of them matched as excerpts), %d skipped (not run), %d failed"
          % (ran, excerpts, skipped, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
