"""Writes docs/api.md, the C API reference, from the public headers: each header's opening
comment, then every public declaration with the comment that precedes it.
Usage: python3 scripts/api-doc.py > docs/api.md"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULES = ["core", "theory", "solvers", "montecarlo", "models", "validate", "studies"]


def split_top(text):
    """Yields (comment, declaration) pairs at file scope."""
    i, n, comment = 0, len(text), ""
    while i < n:
        if text.startswith("//", i):  # line comments (clang-format off/on) are not docs
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
            continue
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


def fence_tables(text):
    """Runs of lines indented by two or more spaces (the formula and distribution tables of
    the comments) become ```text blocks, so Markdown keeps their alignment."""
    out, block = [], []
    for line in text.split("\n") + [None]:
        if line is not None and line.startswith("  ") and line.strip():
            block.append(line)
            continue
        if block:
            out += ["```text"] + block + ["```"]
            block = []
        if line is not None:
            out.append(line)
    return "\n".join(out)


def file_comment(name, text):
    """The header's opening comment (after any // line such as clang-format off) as text,
    without the leading "name -- " but with the rest of its first sentence, and the text
    after it."""
    m = re.match(r"(\s*//[^\n]*\n)*\s*/\*.*?\*/", text, re.S)
    if not m:
        return "", text
    head = clean_comment(m.group(0)[m.group(0).index("/*"):])
    head = re.sub(r"^" + re.escape(name) + r"\s+--\s+", "", head)
    if head[:1].islower():
        head = head[0].upper() + head[1:]
    return head, text[m.end():]


def main():
    out = ["# C API reference", "",
           "Generated from the public headers by `scripts/api-doc.py` (`make api-doc`). Every",
           "function returning `am_status` returns `AM_OK` (0) on success; the library never prints",
           "or exits. Install with `make install PREFIX=...`, include `<amsgd/amsgd.h>` and link",
           "with `pkg-config --cflags --libs amsgd` (shared `libamsgd.so.0`; `cc -static` with",
           "`pkg-config --cflags --libs --static amsgd` for `libamsgd.a`, see",
           "[README.md](README.md#install-and-linking)); `examples/embed.c` is a complete program",
           "(built both ways and run in CI by `make install-check`, which also checks that",
           "`make uninstall` leaves nothing). `<amsgd/core/am_rng.h>` includes `<Random123/philox.h>`:",
           "the Random123 headers (header-only, no pkg-config file; Debian `librandom123-dev`) must",
           "be where the compiler finds them. From Python, see [python.md](python.md).", "",
           "Errors: a constructor or check that finds a reason writes it as one line into its",
           "`(err, errlen)` buffer (`err` may be `NULL`); reasons name parameter fields, never",
           "command-line flags. GSL: the library checks every GSL status and never changes GSL's",
           "process-wide error handler, whose default aborts the process; a program that embeds",
           "the library turns it off once at start-up, before its first call:",
           "`gsl_set_error_handler_off()`, or `am_common_gsl_handler_off()` without linking GSL",
           "(as `examples/embed.c`, the `amsgd` command and `am_cli_call` do).", "",
           "Thread safety: the library keeps no mutable global state other than the settings listed",
           "here, so distinct objects may be used from distinct threads at the same time.",
           "", "- Read-only after construction, shareable by any number of threads: an `am_problem`",
           "  (every function takes it as `const am_problem *`) and a model definition",
           "  (`const am_model *`).",
           "- One thread at a time: every object with state, such as an `am_rng`, an `am_msgd`",
           "  chain, an `am_ode` solver (one SUNDIALS context each) or a result being filled; use",
           "  one per thread.",
           "- `am_ensemble_run` and the studies parallelise themselves with OpenMP (`threads`, 0 =",
           "  all cores), and their results do not depend on the thread count; a program that calls",
           "  them from its own threads at once should pass `threads = 1` to avoid nested teams.",
           "- Per calling thread: the progress callback of `am_ensemble_progress_set` (thread-local).",
           "- FFTW's planner is not thread-safe: the library creates and destroys its plans inside",
           "  `#pragma omp critical(am_fftw_planner)` (`validate/am_acf.h`); a host program that plans",
           "  FFTW transforms concurrently with the library must use the same named critical section.",
           "- Process-wide: GSL's error handler (turn it off once at start-up, before starting",
           "  threads), and OpenBLAS's thread count, which `am_datamoments` and the network models",
           "  (`models/am_nn.h`) set to 1 (`openblas_set_num_threads(1)`) for a fixed summation",
           "  order; a host program that wants threaded BLAS elsewhere sets it again after them.",
           "",
           "API and ABI stability: the version is `AM_VERSION` (`am_version()` at run time), now",
           "0.1.0. Before 1.0 no release promises a stable API or ABI: a 0.x release may change",
           "function signatures, enums and the layout of the public structs (`am_problem`,",
           "`am_ensemble_result`, the `*_params` structs), and the shared library keeps the soname",
           "`libamsgd.so.0` throughout 0.x, so a program built against one release is rebuilt",
           "against the next (or links `libamsgd.a`). Changes to the API are listed in the commit",
           "log of the headers (`git log -- core theory solvers montecarlo models validate",
           "studies`). Output files are versioned separately: every JSON result carries `version`.", ""]
    for mod in MODULES:
        if not os.path.isdir(os.path.join(ROOT, mod)):
            continue
        for name in sorted(os.listdir(os.path.join(ROOT, mod))):
            if not name.endswith(".h") or name.endswith("_impl.h"):  # private headers
                continue
            text = open(os.path.join(ROOT, mod, name)).read()
            head, body = file_comment(name, text)
            out += [f"## `{mod}/{name}`", "", fence_tables(head), ""]
            for comment, decl in split_top(body):
                if not decl or decl.startswith("extern \"C\""):
                    continue
                out.append("```c")
                out.append(decl)
                out.append("```")
                if comment:
                    out.append(fence_tables(clean_comment(comment)))
                out.append("")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
