#!/usr/bin/env python3
"""report-html.py -- the demo's HTML report: the verdict table of `amsgd validate` (from its
JSON), the parameters of every run (from the JSON files' "params"), and every figure inline
(SVG embedded as markup, PNG as a data URI when no SVG twin exists), each with the command
that made it. Python standard library only.

Usage: scripts/report-html.py OUT_DIR [--title TEXT] > OUT_DIR/report.html
       scripts/report-html.py OUT_DIR -o OUT_DIR/report.html

OUT_DIR holds validate.json, the other results (*.json) and the figures (*.svg, *.png). An
optional OUT_DIR/figures.txt lists the figures in order, one per line:
"BASENAME<TAB>caption<TAB>command"; figures not listed follow in name order.
"""
import argparse
import base64
import html
import json
import os
import re
import sys


def esc(x):
    return html.escape(str(x), quote=True)


def fmt(x):
    if x is None:
        return "null"
    if isinstance(x, float):
        return "%.4g" % x
    return str(x)


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def svg_inline(path):
    """The SVG markup without its XML prolog and DOCTYPE, scaled to the page width."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    start = text.find("<svg")
    if start < 0:
        return None
    text = text[start:]
    # scale with the page: keep the viewBox, drop fixed width/height from the root element
    head_end = text.find(">")
    head = text[:head_end]
    m_w = re.search(r'\swidth="([\d.]+)', head)
    m_h = re.search(r'\sheight="([\d.]+)', head)
    if "viewBox" not in head and m_w and m_h:
        head += ' viewBox="0 0 %s %s"' % (m_w.group(1), m_h.group(1))
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    head += ' style="width:100%;height:auto;max-width:1000px"'
    return head + text[head_end:]


def verdict_table(v):
    """The verdicts with the columns of `amsgd validate --format table`: the measured value
    with the half-width h of the interval that decides, the prediction (with its standard
    error), tolerance, minimum detectable difference, the power (the verdicts against the
    prediction 20 % lower / higher, '-' on the side a one-sided bound cannot fail), the verdict
    (a documented finding and a one-sided rule marked), the replicas an INCONCLUSIVE row needs,
    the note (with the verdict against the undelayed prediction for a delayed row)."""
    checks = v.get("checks", []) if v else []
    rows = []
    for c in checks:
        verdict = c.get("verdict", "?")
        shown = verdict
        if c.get("finding"):
            shown += " (documented finding)"
        if c.get("rule") == "one-sided":
            shown += ", one-sided"
        pred = fmt(c.get("predicted"))
        if (c.get("predicted_sem") or 0) > 0:
            pred += " &plusmn; " + fmt(c.get("predicted_sem"))
        need = c.get("replicas_needed") or 0
        note = c.get("note", "")
        if c.get("finding"):
            note = c["finding"] + ("; " + note if note else "")
        if c.get("vs_undelayed"):
            note = "against the undelayed prediction: %s; %s" % (c["vs_undelayed"], note)
        power = "%s / %s" % (c.get("power_low") or "-", c.get("power_high") or "-")
        rows.append(
            "<tr class='%s'><td>%s</td><td>%s</td><td>%s &plusmn; %s</td><td>%s</td>"
            "<td>%s</td><td>%s</td><td>%s</td><td><b>%s</b></td><td>%s</td>"
            "<td class='note'>%s</td></tr>"
            % (
                esc(verdict.lower()),
                esc(c.get("name", "")),
                esc(c.get("params", "")),
                esc(fmt(c.get("measured"))),
                esc(fmt(c.get("halfwidth"))),
                pred if "&plusmn;" in pred else esc(pred),
                esc(fmt(c.get("tolerance"))),
                esc(fmt(c.get("mdd"))),
                esc(power),
                esc(shown),
                esc("%.0f" % need) if verdict == "INCONCLUSIVE" and need > 0 else "",
                esc(note),
            )
        )
    summary = ""
    if v:
        summary = ("<p>%s PASS, %s FAIL (%s of them documented findings), %s INCONCLUSIVE "
                   "(amsgd %s, params %s).</p>") % (
            esc(v.get("pass", "?")),
            esc(v.get("fail", "?")),
            esc(v.get("fail_findings", "?")),
            esc(v.get("inconclusive", "?")),
            esc(v.get("version", "?")),
            esc(json.dumps(v.get("params", {}))),
        )
    else:
        summary = "<p><b>validate.json is missing or unreadable.</b></p>"
    return (
        summary
        + "<table class='verdicts'><thead><tr><th>check</th><th>parameters</th>"
        "<th>measured &plusmn; h</th><th>predicted</th><th>tolerance</th><th>mdd</th>"
        "<th>power &minus;20 % / +20 %</th><th>verdict</th><th>replicas needed</th>"
        "<th>note</th></tr></thead><tbody>\n"
        + "\n".join(rows) + "\n</tbody></table>"
    )


def params_section(out_dir):
    items = []
    for name in sorted(os.listdir(out_dir)):
        if not name.endswith(".json"):
            continue
        d = load_json(os.path.join(out_dir, name))
        if not isinstance(d, dict) or "params" not in d:
            continue
        items.append(
            "<details><summary><code>%s</code>: amsgd %s %s</summary><pre>%s</pre></details>"
            % (
                esc(name),
                esc(d.get("command", "?")),
                esc(d.get("version", "")),
                esc(json.dumps(d["params"], indent=1)),
            )
        )
    return "\n".join(items) if items else "<p>No JSON results with parameters.</p>"


def figure_list(out_dir):
    listed = []
    path = os.path.join(out_dir, "figures.txt")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if parts and parts[0]:
                    listed.append((parts[0], parts[1] if len(parts) > 1 else "",
                                   parts[2] if len(parts) > 2 else ""))
    seen = {b for b, _, _ in listed}
    bases = sorted({os.path.splitext(n)[0] for n in os.listdir(out_dir)
                    if n.endswith((".svg", ".png"))})
    # the report's own screenshot (scripts/report-check.sh) is no figure
    listed += [(b, "", "") for b in bases if b not in seen and not b.startswith("report")]
    return listed


def figures_section(out_dir):
    blocks = []
    for base, caption, command in figure_list(out_dir):
        svg = os.path.join(out_dir, base + ".svg")
        png = os.path.join(out_dir, base + ".png")
        body = None
        if os.path.exists(svg):
            body = svg_inline(svg)
        if body is None and os.path.exists(png):
            with open(png, "rb") as f:
                data = base64.b64encode(f.read()).decode("ascii")
            body = "<img alt='%s' src='data:image/png;base64,%s' style='max-width:100%%'>" % (
                esc(base), data)
        if body is None:
            body = "<p><b>missing figure %s</b></p>" % esc(base)
        cmd = "<pre class='cmd'>%s</pre>" % esc(command) if command else ""
        blocks.append("<figure id='%s'>%s<figcaption><b>%s</b> %s</figcaption>%s</figure>"
                      % (esc(base), body, esc(base), esc(caption), cmd))
    return "\n".join(blocks)


STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table.verdicts { border-collapse: collapse; font-size: 0.85em; width: 100%; }
table.verdicts th, table.verdicts td { border: 1px solid #ccc; padding: 3px 6px;
  vertical-align: top; text-align: left; }
table.verdicts th { background: #eee; cursor: pointer; }
tr.pass td:nth-child(7) { background: #c8f0c8; }
tr.fail td:nth-child(7) { background: #f6c0c0; }
tr.inconclusive td:nth-child(7) { background: #f6e7a8; }
td.note { color: #555; font-size: 0.9em; }
figure { margin: 1.5em 0; padding: 0.5em; border: 1px solid #ddd; background: #fff; }
figcaption { margin-top: 0.4em; } pre.cmd { background: #f4f4f4; padding: 0.4em;
  white-space: pre-wrap; font-size: 0.85em; }
"""

SORT = """
document.querySelectorAll('table.verdicts th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var asc = th.dataset.asc !== '1'; th.dataset.asc = asc ? '1' : '0';
    rows.sort(function (a, b) {
      var x = a.cells[col].textContent, y = b.cells[col].textContent;
      var nx = parseFloat(x), ny = parseFloat(y);
      var r = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
      return asc ? r : -r;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--title", default="amsgd demo report")
    ap.add_argument("--intro", default="")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    v = load_json(os.path.join(a.out_dir, "validate.json"))
    page = [
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>",
        "<title>%s</title><style>%s</style></head><body>" % (esc(a.title), STYLE),
        "<h1>%s</h1>" % esc(a.title),
        "<p>%s</p>" % esc(a.intro) if a.intro else "",
        "<p><a href='#figures'>Figures</a> &middot; <a href='#checks'>Theorem checks</a> "
        "&middot; <a href='#params'>Parameters</a></p>",
        "<h2 id='figures'>Figures</h2>",
        figures_section(a.out_dir),
        "<h2 id='checks'>Theorem checks (amsgd validate)</h2>",
        "<p>Every row as <code>amsgd validate --format table</code> shows it: the measured "
        "value with the half-width h of the interval that decides (h = z &radic;(SE<sub>m"
        "</sub><sup>2</sup> + SE<sub>p</sub><sup>2</sup>)), the prediction, the tolerance, the "
        "minimum detectable difference, the verdict (a FAIL that docs/validate.md explains is "
        "marked as a documented finding) and, for an INCONCLUSIVE row, the replicas it would "
        "need. Click a column head to sort.</p>",
        verdict_table(v),
        "<h2 id='params'>Parameters of every run</h2>",
        params_section(a.out_dir),
        "<script>%s</script></body></html>" % SORT,
    ]
    text = "\n".join(page) + "\n"
    if a.output:
        tmp = "%s.tmp.%d" % (a.output, os.getpid())
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, a.output)
    else:
        sys.stdout.write(text)
    return 0 if v else 1


if __name__ == "__main__":
    sys.exit(main())
