#!/usr/bin/env bash
# Installs amsgd into a temporary prefix and uses it from outside the source tree:
#   1. builds examples/embed.c with pkg-config against libamsgd.so.0 and against the
#      archive (libamsgd.a, the rest shared), checks how each is linked and that libgsl's
#      cblas_* bind to GSL's CBLAS (not to OpenBLAS's, as in build/amsgd), and runs both
#      (exit 0 when the stationary error matches theory);
#   2. runs the installed `amsgd figures --only runtime` from an empty folder (the gnuplot
#      scripts come from PREFIX/share/amsgd/docs/figures) and checks the figure it writes;
#   3. imports the installed Python package (PYTHONPATH=PREFIX/lib/python3/dist-packages)
#      and checks one call against the installed command's JSON.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
make -C "$here" --no-print-directory install PREFIX="$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cd "$work"   # nothing below may depend on the source tree

fail() { echo "install-check: FAIL: $*" >&2; exit 1; }
for f in lib/libamsgd.a lib/libamsgd.so.0 lib/libamsgd.so lib/libamsgd-cli.so.0 \
         include/amsgd/amsgd.h share/man/man1/amsgd.1 share/amsgd/docs/README.md \
         share/amsgd/docs/figures/runtime.gp lib/python3/dist-packages/amsgd/__init__.py; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
done
soname=$(readelf -d "$prefix/lib/libamsgd.so.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libamsgd.so.0 ] || fail "soname of libamsgd.so.0 is '$soname'"

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

# 1. embed.c, shared and against the archive
cc -std=gnu11 -O2 -Wall -Wextra "$here/examples/embed.c" $(pkg-config --cflags --libs amsgd) \
    -Wl,-rpath,"$prefix/lib" -o embed-shared
cc -std=gnu11 -O2 -Wall -Wextra "$here/examples/embed.c" \
    $(pkg-config --cflags --static --libs amsgd | sed 's/-lamsgd /-l:libamsgd.a /') -o embed-static
readelf -d embed-shared | grep -q 'NEEDED.*\[libamsgd\.so\.0\]' || fail "embed-shared does not load libamsgd.so.0"
if readelf -d embed-static | grep -q 'NEEDED.*libamsgd'; then fail "embed-static loads libamsgd.so"; fi
./embed-shared
./embed-static
check_gsl_cblas ./embed-shared
check_gsl_cblas ./embed-static

# 2. the installed command and its figures, outside the source tree
man -l "$prefix/share/man/man1/amsgd.1" >/dev/null 2>&1 || test -s "$prefix/share/man/man1/amsgd.1"
"$prefix/bin/amsgd" --version
"$prefix/bin/amsgd" figures --only runtime
[ -s "$prefix/share/amsgd/docs/figures/runtime.png" ] || fail "amsgd figures wrote no runtime.png"
[ "$(find "$prefix/share/amsgd/docs/figures" -name runtime.png -newer "$prefix/bin/amsgd")" ] ||
    fail "runtime.png was not regenerated"

# 3. the installed Python package
PYTHONPATH="$prefix/lib/python3/dist-packages" AMSGD_BIN="$prefix/bin/amsgd" "$PYTHON" - <<'PY'
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
echo "install-check: ok"
