#!/usr/bin/env bash
# scripts/doc-quotes.py passes right quotes (exact, with '...', marked excerpts, a block
# whose second command reads the file the first wrote, a relative data path, a skipped
# block) and fails each wrong one: another number, a missing line, an excerpt out of order,
# a '...' that matches nothing, stderr quoted before stdout, output of a command quoted as
# silent.
# Usage: [AMSGD=BIN] tests/doc_quotes_test.sh [PYTHON]   (default build/amsgd, python3)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
py=${1:-python3}
bin=${AMSGD:-$here/build/amsgd}
check() { "$py" "$here/scripts/doc-quotes.py" --amsgd "$bin" "$@"; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0

cat > "$t/right.md" <<'MD'
# right

```
$ amsgd mc --mu 1.5
amsgd: error: --mu must be in [0, 1), got 1.5
```

<!-- excerpt -->

    $ amsgd ode --grid 5 --time 4 --mu 0.5 --rotate 3
    t,err,norm
    4,...,0.9999999985

Exact but for `...`:

    $ amsgd ode --grid 5 --time 4 --mu 0.5 --rotate 3
    t,err,norm
    ...
    4,1.14175338...e-07,0.9999999985

A file written, then read:

    $ amsgd theory --mu 0.5 --format json -o t.json
    $ python3 -c 'import json; print(json.load(open("t.json"))["params"]["mu"])'
    0.5

A continued command line and a relative data path:

    $ amsgd staleness --model mlp:0 \
          --data idx:tests/data/idx-tiny
    amsgd: error: --model 'mlp:0': hidden widths must be in 1..65536

<!-- quote: not run (forever) -->

    $ sleep 1000
    never

Commands without output lines are a listing, not a quote:

    $ amsgd mc --help
MD
out=$(check "$t/right.md" 2>&1)
want="doc-quotes: 5 quotes run (2 of them matched as excerpts), 1 skipped (not run), 0 failed"
if [ "$out" != "$want" ]; then
    echo "doc_quotes_test: right quotes: expected '$want', got:" >&2
    echo "$out" >&2
    fail=1
fi

wrong() { # NAME: the block on stdin must fail
    { echo "# $1"; echo; cat; } > "$t/$1.md"
    local out rc
    out=$(check "$t/$1.md" 2>&1)
    rc=$?
    [ -n "${VERBOSE:-}" ] && echo "$out"
    if [ $rc -ne 1 ] || ! grep -q '1 failed$' <<< "$out"; then
        echo "doc_quotes_test: $1: expected a failure (exit 1), got exit $rc:" >&2
        echo "$out" >&2
        fail=1
    fi
}
wrong number <<'MD'
    $ amsgd mc --mu 1.5
    amsgd: error: --mu must be in [0, 1), got 1.6
MD
wrong missing-line <<'MD'
    $ amsgd ode --grid 5 --time 4 --mu 0.5 --rotate 3
    t,err,norm
    0,0.8108695723,1
MD
wrong out-of-order <<'MD'
<!-- excerpt -->

    $ amsgd ode --grid 5 --time 4 --mu 0.5 --rotate 3
    4,1.141753382e-07,0.9999999985
    t,err,norm
MD
wrong dots <<'MD'
    $ amsgd ode --grid 5 --time 4 --mu 0.5 --rotate 3
    t,err,norm
    ...
    4,...,1
MD
wrong stderr-first <<'MD'
    $ amsgd dde --lag 0.5 --mu 0.5 --time 4 --grid 5
    amsgd: warning: the delay solution diverged at t = 3.75106
    ...
MD
wrong not-silent <<'MD'
    $ amsgd theory --mu 0.5 --format json
    $ echo done
    done
MD
[ $fail -eq 0 ] && echo "doc_quotes_test: passed (1 file of right quotes, 6 wrong quotes failed)"
exit $fail
