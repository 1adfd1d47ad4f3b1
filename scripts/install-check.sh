#!/usr/bin/env bash
# Installs amsgd into a temporary prefix and uses it from outside the source tree:
#   1. checks that share/amsgd/install-manifest lists exactly the files installed; builds
#      examples/embed.c with pkg-config against libamsgd.so.0, against the archive
#      (libamsgd.a, the rest shared) and all static (-static), checks how each is linked
#      and that libgsl's cblas_* bind to GSL's CBLAS (not to OpenBLAS's, as in build/amsgd),
#      and runs all three (exit 0 when the stationary error matches theory);
#   2. builds the C program of each page of docs/ that has one (sde.md, statistics.md;
#      scripts/doc-c-examples.py) with every command the page documents, exactly as
#      written: the pkg-config ones against the install (shared, and -static with
#      --static), the source-tree one in a folder laid out as the tree (its headers and
#      build/ linked in); each binary must be linked as its command says and print what the
#      page quotes;
#   3. runs the installed `amsgd figures --only runtime` from an empty folder (the gnuplot
#      scripts come from PREFIX/share/amsgd/docs/figures) and checks the figure it writes;
#   4. imports the installed Python package (PYTHONPATH=PREFIX/lib/python3/dist-packages,
#      writing bytecode) and checks one call against the installed command's JSON;
#   5. runs make uninstall and fails if anything is left under the prefix, or if a second
#      one does not refuse; then installs twice with DESTDIR into a stage whose bin/ already
#      holds a file of someone else's, adds a file to an installed folder, uninstalls, and
#      fails unless exactly those two files and their folders are left.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}
prefix=$(mktemp -d)
work=$(mktemp -d)
stage=$(mktemp -d)
trap 'rm -rf "$prefix" "$work" "$stage"' EXIT
make -C "$here" --no-print-directory install PREFIX="$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cd "$work"   # nothing below may depend on the source tree (but the source-tree builds of 2.)

fail() { echo "install-check: FAIL: $*" >&2; exit 1; }
for f in lib/libamsgd.a lib/libamsgd.so.0 lib/libamsgd.so lib/libamsgd-cli.so.0 \
         include/amsgd/amsgd.h share/man/man1/amsgd.1 share/amsgd/docs/README.md \
         share/amsgd/docs/figures/runtime.gp lib/python3/dist-packages/amsgd/__init__.py; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
done
soname=$(readelf -d "$prefix/lib/libamsgd.so.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libamsgd.so.0 ] || fail "soname of libamsgd.so.0 is '$soname'"
manifest=$prefix/share/amsgd/install-manifest
[ -f "$manifest" ] || fail "no share/amsgd/install-manifest"
diff <(sed -n 's/^f //p' "$manifest" | LC_ALL=C sort) \
     <(find "$prefix" \( -type f -o -type l \) | LC_ALL=C sort) >&2 ||
    fail "share/amsgd/install-manifest does not list exactly the files installed (< listed, > installed)"

# GSL's linear algebra must call GSL's own CBLAS, as in build/amsgd (tests/test_models.c):
# libopenblas exports cblas_* too and wins where it is loaded first. With every symbol bound
# at start-up, the loader's log says where each of libgsl's cblas_* references went.
check_gsl_cblas() {
    local b bad
    b=$(LD_BIND_NOW=1 LD_DEBUG=bindings "$1" 2>&1 >/dev/null |
        grep -E "binding file [^ ]*/libgsl\.so[^ ]* .* normal symbol .cblas_" || true)
    [ -n "$b" ] || fail "$1: libgsl binds no cblas_* symbol (not loaded?)"
    bad=$(grep -v ' to [^ ]*/libgslcblas\.so' <<<"$b" || true)
    if [ -n "$bad" ]; then
        sed 3q <<<"$bad" >&2
        fail "$1: libgsl's cblas_* bind to another library than libgslcblas ($(wc -l <<<"$bad") symbols; the first above)"
    fi
    echo "install-check: $1: libgsl's $(wc -l <<<"$b") cblas_* bind to libgslcblas"
}
# The same in a -static link: the linker's map names the archive member that each cblas_*
# reference was resolved from.
check_static_cblas() {
    local from
    from=$(awk '/^Archive member included/ { f = 1; next } /^[A-Z]/ { f = 0 }
                f && /^[^ ]/ { member = $1 } f && /\(cblas_[a-z0-9_]*\)/ { print member }' "$1" |
           sed 's/(.*//' | sort | uniq -c)
    grep -q 'libgslcblas\.a$' <<<"$from" || fail "$1: no cblas_* from libgslcblas.a"
    if grep -v 'libgslcblas\.a$' <<<"$from" >&2; then
        fail "$1: cblas_* from another archive than libgslcblas.a (above)"
    fi
    echo "install-check: $1: every cblas_* comes from libgslcblas.a"
}

# 1. embed.c, shared, against the archive and all static
cc -std=gnu11 -O2 -Wall -Wextra "$here/examples/embed.c" $(pkg-config --cflags --libs amsgd) \
    -Wl,-rpath,"$prefix/lib" -o embed-shared
cc -std=gnu11 -O2 -Wall -Wextra "$here/examples/embed.c" \
    $(pkg-config --cflags --static --libs amsgd | sed 's/-lamsgd /-l:libamsgd.a /') -o embed-static
cc -std=gnu11 -O2 -Wall -Wextra -static "$here/examples/embed.c" \
    $(pkg-config --cflags --static --libs amsgd) -Wl,-Map,embed-allstatic.map -o embed-allstatic \
    2>embed-allstatic.err ||
    { cat embed-allstatic.err >&2; fail "embed.c does not link with -static"; }
readelf -d embed-shared | grep -q 'NEEDED.*\[libamsgd\.so\.0\]' || fail "embed-shared does not load libamsgd.so.0"
if readelf -d embed-static | grep -q 'NEEDED.*libamsgd'; then fail "embed-static loads libamsgd.so"; fi
if readelf -d embed-allstatic | grep -q NEEDED; then fail "embed-allstatic loads a shared library"; fi
./embed-shared
./embed-static
./embed-allstatic
check_gsl_cblas ./embed-shared
check_gsl_cblas ./embed-static
check_static_cblas embed-allstatic.map

# 2. the C programs of the docs, built with the commands the pages give
"$PYTHON" "$here/scripts/doc-c-examples.py" "$here/docs" "$work/doc"
npages=0
for d in "$work"/doc/*/; do
    d=${d%/} page=docs/$(basename "$d").md kinds=
    mkdir "$d/tree"
    for x in amsgd.h core theory solvers montecarlo models validate studies build; do
        ln -s "$here/$x" "$d/tree/$x"
    done
    while IFS= read -r cmd; do
        case $cmd in
            *pkg-config*--static*) kind=static dir=$d/installed ;;
            *pkg-config*) kind=shared dir=$d/installed ;;
            *) kind=tree dir=$d/tree ;;
        esac
        kinds="$kinds $kind"
        mkdir -p "$dir"
        cp "$d/example.c" "$dir/example.c"
        rm -f "$dir/example"
        (cd "$dir" && bash -c "$cmd") || fail "$page: does not build: $cmd"
        case $kind in
            static) if readelf -d "$dir/example" | grep -q NEEDED; then fail "$page: not static: $cmd"; fi ;;
            shared) readelf -d "$dir/example" | grep -q 'NEEDED.*\[libamsgd\.so\.0\]' ||
                        fail "$page: does not load libamsgd.so.0: $cmd" ;;
            tree) if readelf -d "$dir/example" | grep -q 'NEEDED.*libamsgd'; then
                      fail "$page: loads libamsgd.so: $cmd"
                  fi ;;
        esac
        (cd "$dir" && ./example) > "$d/printed" || fail "$page: ./example exits $?: $cmd"
        diff "$d/expected" "$d/printed" >&2 || fail "$page: ./example does not print what the page quotes (< page, > printed): $cmd"
        echo "install-check: $page, $kind build: prints what the page quotes"
    done < "$d/commands"
    [ "$(tr ' ' '\n' <<<"$kinds" | LC_ALL=C sort | tr '\n' ' ')" = " shared static tree " ] ||
        fail "$page: documents the builds ($kinds ), not one shared, one static and one source-tree build"
    npages=$((npages + 1))
done
[ "$npages" -ge 2 ] || fail "the C programs of $npages pages of docs/ built, expected sde.md and statistics.md"

# 3. the installed command and its figures, outside the source tree
man -l "$prefix/share/man/man1/amsgd.1" >/dev/null 2>&1 || test -s "$prefix/share/man/man1/amsgd.1"
"$prefix/bin/amsgd" --version
"$prefix/bin/amsgd" figures --only runtime
[ -s "$prefix/share/amsgd/docs/figures/runtime.png" ] || fail "amsgd figures wrote no runtime.png"
[ "$(find "$prefix/share/amsgd/docs/figures" -name runtime.png -newer "$prefix/bin/amsgd")" ] ||
    fail "runtime.png was not regenerated"

# 4. the installed Python package (its bytecode written, which make uninstall removes)
env -u PYTHONDONTWRITEBYTECODE PYTHONPATH="$prefix/lib/python3/dist-packages" \
    AMSGD_BIN="$prefix/bin/amsgd" "$PYTHON" - <<'PY'
import json, os, subprocess
import numpy as np
import amsgd
pkg = os.path.dirname(amsgd.__file__)
prefix = os.path.normpath(os.path.join(pkg, "..", "..", "..", ".."))
assert pkg.startswith(prefix + os.sep), pkg
r = amsgd.mc(delay="const:4", time=1, replicas=200, grid=11)
ref = json.loads(subprocess.run([os.environ["AMSGD_BIN"], "mc", "--delay", "const:4", "--time", "1",
                                 "--replicas", "200", "--grid", "11", "--format", "json"],
                                check=True, capture_output=True, text=True).stdout)
assert list(r) == list(ref), (list(r), list(ref))
assert np.array_equal(r["err_mean"], np.array(ref["err_mean"])), "err_mean differs"
try:
    amsgd.mc(mu=1.5)
    raise AssertionError("mu = 1.5 accepted")
except ValueError as e:
    assert str(e) == "--mu must be in [0, 1), got 1.5", str(e)
print(f"import amsgd: {pkg}, mc err_mean[-1] = {r['err_mean'][-1]:.6f} (same as the command)")
PY
compgen -G "$prefix/lib/python3/dist-packages/amsgd/__pycache__/*.pyc" >/dev/null ||
    fail "import amsgd wrote no bytecode"

# 5. make uninstall: nothing left in the prefix (mktemp made it empty, so make install
# created every folder in it), and a second make uninstall refuses
make -C "$here" --no-print-directory uninstall PREFIX="$prefix"
left=$(find "$prefix" -mindepth 1)
[ -z "$left" ] || { echo "$left" >&2; fail "make uninstall left the above in PREFIX"; }
if make -C "$here" --no-print-directory -s uninstall PREFIX="$prefix" 2>"$work/err"; then
    fail "a second make uninstall succeeded"
fi
grep -q 'no .*install-manifest' "$work/err" || fail "a second make uninstall says: $(cat "$work/err")"

# ... and staged with DESTDIR, installed twice, into a stage whose PREFIX/bin exists with a
# file of someone else's; a file of the user's goes into an installed folder. Exactly those
# two files stay, with their folders.
mkdir -p "$stage$prefix/bin"
echo keep > "$stage$prefix/bin/other-tool"
for i in 1 2; do
    make -C "$here" --no-print-directory install DESTDIR="$stage" PREFIX="$prefix" >/dev/null
done
[ -x "$stage$prefix/bin/amsgd" ] && [ -f "$stage$prefix/lib/libamsgd.a" ] ||
    fail "DESTDIR install: no bin/amsgd or lib/libamsgd.a under DESTDIR/PREFIX"
grep -qx "prefix=$prefix" "$stage$prefix/lib/pkgconfig/amsgd.pc" ||
    fail "DESTDIR install: the prefix of amsgd.pc is not PREFIX"
if grep -q "$stage" "$stage$prefix/share/amsgd/install-manifest"; then
    fail "DESTDIR install: the manifest names DESTDIR"
fi
echo mine > "$stage$prefix/share/amsgd/docs/notes.txt"
make -C "$here" --no-print-directory uninstall DESTDIR="$stage" PREFIX="$prefix" 2>"$work/err" ||
    { cat "$work/err" >&2; fail "DESTDIR: make uninstall failed"; }
cat "$work/err" >&2
left=$(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort)
want=$(for f in "${prefix#/}/bin/other-tool" "${prefix#/}/share/amsgd/docs/notes.txt"; do
           while [ "$f" != . ]; do echo "./$f"; f=$(dirname "$f"); done
       done | LC_ALL=C sort -u)
diff <(echo "$want") <(echo "$left") >&2 ||
    fail "DESTDIR: make uninstall did not leave exactly the two files and their folders (< wanted, > left)"
grep -q "kept $stage$prefix/share/amsgd/docs: not empty" "$work/err" ||
    fail "DESTDIR: make uninstall did not name the folder it kept"
echo "install-check: make uninstall removed what make install wrote, and nothing else"
echo "install-check: ok"
