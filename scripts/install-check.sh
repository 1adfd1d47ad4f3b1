#!/usr/bin/env bash
# Installs amsgd into a temporary prefix, builds examples/embed.c against the installed
# library with pkg-config, and runs it (exit 0 when its stationary error matches theory).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
make -C "$here" --no-print-directory install PREFIX="$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cc -std=gnu11 -O2 -Wall -Wextra "$here/examples/embed.c" $(pkg-config --cflags --libs amsgd) -o "$prefix/embed"
"$prefix/embed"
man -l "$prefix/share/man/man1/amsgd.1" >/dev/null 2>&1 || test -s "$prefix/share/man/man1/amsgd.1"
"$prefix/bin/amsgd" --version
echo "install-check: ok"
