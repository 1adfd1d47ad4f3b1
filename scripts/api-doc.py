"""Writes docs/api.md, the C API reference, from the public headers: each header's opening
comment, then every public declaration with the comment that precedes it.
Usage: python3 scripts/api-doc.py > docs/api.md"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = ["core", "theory", "solvers", "montecarlo", "models", "validate"]


def split_top(text):
    """Yields (comment, declaration) pairs at file scope."""
    i, n, comment = 0, len(text), ""
    while i < n:
        if text.startswith("/*", i):
            j = text.index("*/", i) + 2
            comment = text[i:j]
            i = j
            continue
        if text[i].isspace():
            i += 1
            continue
        if text[i] == "#":
            j = text.find("\n", i)
            while j > 0 and text[j - 1] == "\\":
                j = text.find("\n", j + 1)
            i = n if j < 0 else j + 1
            comment = ""
            continue
        # a declaration: up to the ';' that closes it at brace depth 0 (functions with a
        # body, i.e. static inline, end at the matching '}')
        depth, j = 0, i
        while j < n:
            c = text[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0 and re.match(r"\s*(\n|$)", text[j + 1:j + 3]) and "(" in text[i:j] and "=" not in text[i:text.index("{", i)]:
                    if not re.match(r"\s*;", text[j + 1:]):
                        j += 1
                        break
            elif c == ";" and depth == 0:
                j += 1
                break
            j += 1
        decl = text[i:j].strip()
        if "{" in decl and decl.startswith("static inline"):
            decl = decl[: decl.index("{")].strip() + ";"
        yield comment, decl
        comment = ""
        i = j


def clean_comment(c):
    c = re.sub(r"^/\*+\s?", "", c)
    c = re.sub(r"\s*\*/$", "", c)
    lines = [re.sub(r"^\s*\*\s?", "", l) for l in c.splitlines()]
    return "\n".join(lines).strip()


def main():
    out = ["# C API reference", "",
           "Generated from the public headers by `scripts/api-doc.py` (`make api-doc`). Every",
           "function returning `am_status` returns `AM_OK` (0) on success; the library never prints",
           "or exits. Install with `make install PREFIX=...`, include `<amsgd/amsgd.h>` and link",
           "with `pkg-config --cflags --libs amsgd`; `examples/embed.c` is a complete program",
           "(built and run in CI by `make install-check`).", ""]
    for mod in MODULES:
        for name in sorted(os.listdir(os.path.join(ROOT, mod))):
            if not name.endswith(".h"):
                continue
            text = open(os.path.join(ROOT, mod, name)).read()
            m = re.match(r"\s*/\*.*?\*/", text, re.S)
            head = clean_comment(m.group(0)) if m else ""
            body = text[m.end():] if m else text
            out += [f"## `{mod}/{name}`", "", head.split("\n", 1)[-1].strip() if head.startswith(name) else head, ""]
            for comment, decl in split_top(body):
                if not decl or decl.startswith("extern \"C\""):
                    continue
                out.append("```c")
                out.append(decl)
                out.append("```")
                if comment:
                    out.append(clean_comment(comment))
                out.append("")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
