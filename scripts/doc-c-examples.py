#!/usr/bin/env python3
"""Extracts the complete C programs of docs/*.md for scripts/install-check.sh.

A page's program is its first ```c block with a main(); after it, up to the next heading,
the page documents how to build it (indented lines `    cc ...`) and what `./example`
prints (the indented block after a line with "`./example` prints"). For each such page
NAME.md this writes OUT/NAME/example.c, OUT/NAME/commands (one per line, as written) and
OUT/NAME/expected. A page with a program but without commands or output is an error.
Usage: doc-c-examples.py DOCS OUT
"""
import os
import re
import sys


def main():
    docs, out = sys.argv[1], sys.argv[2]
    found = 0
    for name in sorted(os.listdir(docs)):
        if not name.endswith(".md") or name == "api.md":   # api.md: declarations only
            continue
        with open(os.path.join(docs, name)) as f:
            text = f.read()
        m = re.search(r"^```c\n((?:(?!^```).)*?\bint main\(.*?)^```\n", text, re.S | re.M)
        if not m:
            continue
        rest = text[m.end():]
        rest = rest[:re.search(r"^#", rest + "\n#", re.M).start()]
        cmds = re.findall(r"^    (cc .*)$", rest, re.M)
        printed = re.search(r"`\./example` prints[^\n]*\n\n((?:    .*\n)+)", rest)
        if not cmds or not printed:
            sys.exit(f"docs/{name}: a C program without the build commands and the output "
                     "after it")
        d = os.path.join(out, name[:-3])
        os.makedirs(d)
        with open(os.path.join(d, "example.c"), "w") as f:
            f.write(m.group(1))
        with open(os.path.join(d, "commands"), "w") as f:
            f.write("".join(c + "\n" for c in cmds))
        with open(os.path.join(d, "expected"), "w") as f:
            f.write("".join(line[4:] + "\n" for line in printed.group(1).splitlines()))
        found += 1
    print(f"doc-c-examples: {found} pages with a C program")


if __name__ == "__main__":
    main()
