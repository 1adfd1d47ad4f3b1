#!/usr/bin/env python3
"""check-layers.py -- ARCHITECTURE.md's include rules checked against the code.

Reads the table under "## Layers" of ARCHITECTURE.md: its first column names a folder, its
last column ("may include") the project folders that folder's files may include, as
`folder/` names and the phrase "everything above" (every library folder in a row above).
"the library's public headers" (cli/) allows every library folder but no private header
(`*_impl.h`). Then checks every `#include "../DIR/..."` of every .c and .h file in those
folders, and that amsgd.h includes every public header of the library (each .h of the
library folders but the private `*_impl.h`), and nothing else.

Exit status 0 when the code keeps the rules, 1 with one line per broken rule.
Usage: scripts/check-layers.py [ROOT]   (default: the checkout this script is in)
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), '..'))
INCLUDE = re.compile(r'^\s*#\s*include\s+"\.\./([a-z]+)/([^"]+)"', re.M)


def layer_rules():
    """[(folder, allowed folders, public-only)] in table order."""
    text = open(os.path.join(ROOT, 'ARCHITECTURE.md'), encoding='utf-8').read()
    section = text.split('## Layers', 1)[1].split('\n## ', 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        m = re.fullmatch(r'`([a-z]+)/`', cells[0]) if len(cells) >= 3 else None
        if not m:
            continue
        folder, may = m.group(1), cells[-1]
        allowed = set(re.findall(r'`([a-z]+)/`', may))
        library = [r[0] for r in rows if not r[2]]
        if 'everything above' in may:
            allowed.update(library)
        public_only = "library's public headers" in may
        if public_only:
            allowed.update(library)
        rows.append((folder, allowed, public_only))
    return rows


def sources(folder):
    d = os.path.join(ROOT, folder)
    if not os.path.isdir(d):
        return []
    return sorted(os.path.join(folder, f) for f in os.listdir(d) if f.endswith(('.c', '.h')))


def main():
    rows = layer_rules()
    if not rows:
        print('check-layers: no layer table found in ARCHITECTURE.md')
        return 1
    broken = []
    for folder, allowed, public_only in rows:
        for path in sources(folder):
            text = open(os.path.join(ROOT, path), encoding='utf-8').read()
            for dep, header in INCLUDE.findall(text):
                if dep not in allowed:
                    broken.append(f'{path} includes {dep}/{header}: {folder}/ may include '
                                  f'{", ".join(sorted(allowed)) or "no project folder"}')
                elif public_only and header.endswith('_impl.h'):
                    broken.append(f'{path} includes the private header {dep}/{header}')
    library = [f for f, _, public_only in rows if not public_only and sources(f)]
    public = {p for f in library for p in sources(f)
              if p.endswith('.h') and not p.endswith('_impl.h')}
    umbrella = open(os.path.join(ROOT, 'amsgd.h'), encoding='utf-8').read()
    included = set(re.findall(r'^\s*#\s*include\s+"([^"]+)"', umbrella, re.M))
    for p in sorted(public - included):
        broken.append(f'amsgd.h does not include the public header {p}')
    for p in sorted(included - public):
        broken.append(f'amsgd.h includes {p}, which is not a public header of the library')
    for b in broken:
        print('check-layers: ' + b)
    nfiles = sum(len(sources(f)) for f, _, _ in rows)
    print(f'check-layers: {nfiles} files in {len(rows)} folders, {len(public)} public headers: '
          f'{len(broken)} broken rules')
    return 1 if broken else 0


if __name__ == '__main__':
    sys.exit(main())
