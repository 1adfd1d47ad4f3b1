#!/usr/bin/env bash
# Checks that the demo's HTML report renders: opens OUT/report.html in headless Chromium,
# takes a screenshot and checks that it is not blank (many distinct colours, not one uniform
# colour), that the HTML embeds every figure as inline SVG, and that its verdict table has
# the rows of validate.json (documented findings and replicas needed shown). The PNG is decoded with the
# Python standard library (zlib), so no imaging package is needed.
# Usage: scripts/report-check.sh OUT [MIN_FIGURES]   (needs scripts/install-deps.sh --report)
set -euo pipefail
out=${1:-out}
min_fig=${2:-4}
html="$out/report.html"
shot="$out/report-screenshot.png"
[ -s "$html" ] || { echo "report-check: $html is missing or empty" >&2; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "report-check: chromium not found (scripts/install-deps.sh --report)" >&2; exit 1; }
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
rm -f "$shot"
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --screenshot="$(cd "$(dirname "$shot")" && pwd)/$(basename "$shot")" \
    --window-size=1200,3000 "file://$(cd "$(dirname "$html")" && pwd)/$(basename "$html")" \
    >/dev/null 2>&1 || true
[ -s "$shot" ] || { echo "report-check: chromium wrote no screenshot" >&2; exit 1; }
python3 - "$html" "$shot" "$min_fig" <<'PY'
import struct, sys, zlib

html, shot, min_fig = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = open(html, encoding="utf-8").read()
nsvg = text.count("<svg")
nfig = text.count("<figure id=")

def png_pixels(path):
    """Width, height, channels and the unfiltered rows of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "unsupported PNG type %d/%d" % (depth, ctype)
            ch = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * ch
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0
            b = prev[i]
            c = prev[i - ch] if i >= ch else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, ch, rows

w, h, ch, rows = png_pixels(shot)
colours = set()
nonwhite = 0
for y in range(0, h, 3):
    r = rows[y]
    for x in range(0, w, 3):
        px = r[x * ch:x * ch + 3]
        colours.add(px)
        if px != b"\xff\xff\xff":
            nonwhite += 1
sampled = ((h + 2) // 3) * ((w + 2) // 3)
share = nonwhite / sampled
print("report-check: %s: %d <svg>, %d figures; screenshot %dx%d, %d distinct colours, "
      "%.1f%% non-white" % (html, nsvg, nfig, w, h, len(colours), 100 * share))
bad = []
if nsvg < min_fig: bad.append("fewer than %d inline SVG figures" % min_fig)
# the verdict table: one row per check of validate.json, a FAIL that a documented finding
# explains marked so, an INCONCLUSIVE row with the replicas it needs
import json, os, re
vpath = os.path.join(os.path.dirname(html), "validate.json")
if os.path.exists(vpath):
    checks = json.load(open(vpath)).get("checks", [])
    rows = re.findall(r"<tr class='(pass|fail|inconclusive)'>(.*?)</tr>", text, re.S)
    if len(rows) != len(checks):
        bad.append("verdict table has %d rows, validate.json %d checks" % (len(rows), len(checks)))
    for (cls, row), c in zip(rows, checks):
        if cls != c.get("verdict", "").lower():
            bad.append("row %s shows %s, validate.json says %s" % (c.get("name"), cls,
                                                                     c.get("verdict")))
            break
        if c.get("finding") and "(documented finding)" not in row:
            bad.append("FAIL row %s not marked as a documented finding" % c.get("name"))
            break
        need = c.get("replicas_needed") or 0
        if cls == "inconclusive" and need > 0 and "<td>%.0f</td>" % need not in row:
            bad.append("INCONCLUSIVE row %s lacks the replicas it needs" % c.get("name"))
            break
if len(colours) < 64: bad.append("screenshot nearly uniform (%d colours)" % len(colours))
if share < 0.05: bad.append("screenshot nearly blank (%.1f%% non-white)" % (100 * share))
if bad:
    print("report-check: FAIL: " + "; ".join(bad), file=sys.stderr)
    sys.exit(1)
print("report-check: PASS")
PY
