#!/usr/bin/env bash
# make uninstall PREFIX=... [DESTDIR=...]: removes what make install put there, as its
# manifest PREFIX/share/amsgd/install-manifest lists it ("f PATH" for a file or symbolic
# link it wrote, "d PATH" for a folder it created; paths under PREFIX, without DESTDIR):
#   - every listed file (a listed path that is gone is skipped; one that is now a folder is
#     kept, with a message), and for a listed Python module NAME.py the bytecode Python wrote
#     for it, __pycache__/NAME.*.pyc (then __pycache__ itself where empty);
#   - the manifest;
#   - every listed folder that is empty, deepest first; one that holds anything else is
#     kept and named. Folders that existed before make install are not listed, not touched.
# Nothing outside the manifest is removed. Usage: uninstall.sh DESTDIR PREFIX MANIFEST.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 DESTDIR PREFIX MANIFEST" >&2; exit 2; }
destdir=$1 prefix=${2%/} manifest=$3
m=$destdir$manifest
where="PREFIX=$2${destdir:+ DESTDIR=$destdir}"
if [ ! -f "$m" ]; then
    echo "make uninstall: no $m: make install did not install into $where" >&2
    exit 1
fi

# Check the whole manifest before removing anything: absolute paths without . or ..
# components; files under PREFIX; folders under PREFIX, PREFIX itself or one of its parents.
files=() dirs=()
while IFS= read -r line || [ -n "$line" ]; do
    kind=${line%% *} path=${line#* }
    case $path/ in
        *//* | */./* | */../*) path= ;;
    esac
    case $kind:$path in
        f:"$prefix"/?*) files+=("$path") ;;
        d:"$prefix" | d:"$prefix"/?*) dirs+=("$path") ;;
        d:/?*) case $prefix/ in "$path"/*) dirs+=("$path") ;; *) path= ;; esac ;;
        *) path= ;;
    esac
    if [ -z "$path" ]; then
        echo "make uninstall: $m: not a line make install writes for $where: '$line'" >&2
        echo "make uninstall: nothing removed" >&2
        exit 1
    fi
done < "$m"

nfiles=0 ndirs=0 pycache=()
for f in ${files[@]+"${files[@]}"}; do
    p=$destdir$f
    if [ -d "$p" ] && [ ! -L "$p" ]; then
        echo "make uninstall: kept $p: a folder now, not the file make install wrote" >&2
        continue
    fi
    if [ -e "$p" ] || [ -L "$p" ]; then rm -f -- "$p"; nfiles=$((nfiles + 1)); fi
    case $f in
        *.py)
            c=$(dirname "$p")/__pycache__
            for b in "$c/$(basename "$f" .py)".*.pyc; do
                if [ -f "$b" ]; then rm -f -- "$b"; nfiles=$((nfiles + 1)); fi
            done
            pycache+=("$c") ;;
    esac
done
rm -f -- "$m"   # listed in it too; removed in any case
for c in ${pycache[@]+"${pycache[@]}"}; do
    if [ -d "$c" ] && [ -z "$(ls -A -- "$c")" ]; then rmdir -- "$c"; fi
done
# deepest first: a folder sorts after its parent
while IFS= read -r d; do
    [ -n "$d" ] || continue
    p=$destdir$d
    [ -d "$p" ] && [ ! -L "$p" ] || continue
    if [ -z "$(ls -A -- "$p")" ]; then
        rmdir -- "$p"
        ndirs=$((ndirs + 1))
    else
        echo "make uninstall: kept $p: not empty" >&2
    fi
done < <(printf '%s\n' ${dirs[@]+"${dirs[@]}"} | LC_ALL=C sort -ru)
echo "make uninstall: removed $nfiles files and $ndirs folders ($where)"
