"""``OUT/report.html``: one page over everything under an output folder.

It reads what the other commands wrote — ``experiments/*/`` (``comparison.json``, ``summary.csv``,
``meta.json``, PNGs), ``campaign.json``, ``runs/*/`` (example runs), ``bench.json`` — so it can be
regenerated without running anything. Styles are inline and images are linked by relative path,
so the folder is the whole report wherever it is copied.

Layout: a front table of every verdict across the works; then per work, per experiment, our
figure beside the paper's values or claims (the comparison table, one verdict per row, with the
reason for any difference), the scenario, seeds, code version and time, and any failed runs.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Dict, List, Optional

from ccbench.api import version
from ccbench.result import Result

#: Verdicts as experiments write them → the report's kinds (the rest count as reported). A
#: contrast row (a model or a sibling arm beside ours) is no paper claim: it is counted apart.
VERDICTS = {"agrees": "reproduced", "reproduced": "reproduced", "within tolerance": "within tolerance",
            "differs": "differs", "full run decides": "full run decides", "contrast": "contrast"}
KINDS = ("reproduced", "within tolerance", "differs", "full run decides", "reported", "contrast")

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1400px; color: #222; padding: 0 1em; }
h1 { border-bottom: 2px solid #444; } h2 { margin-top: 2em; border-bottom: 1px solid #aaa; }
h3 { margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; vertical-align: top; }
th { background: #eee; }
td.n { text-align: right; }
.pair { display: flex; gap: 1.5em; align-items: flex-start; flex-wrap: wrap; }
.pair img, .plots img { max-width: 640px; border: 1px solid #ddd; }
.plots { display: flex; flex-wrap: wrap; gap: 0.5em; }
.muted { color: #666; font-size: 0.9em; }
.v-reproduced { background: #d9f2d9; } .v-within-tolerance { background: #eef7d0; }
.v-differs { background: #fbe0d6; } .v-reported { background: #eee; }
.v-full-run-decides { background: #e6ecf7; } .v-contrast { background: #f4eefa; }
.failed { color: #a00; font-weight: bold; }
details { margin: 0.4em 0; }
"""

# A real browser's check that every image loaded; tests read it from the rendered DOM.
CHECK = """<script>
window.addEventListener("load", function () {
  var broken = Array.prototype.filter.call(document.images, function (i) {
    return !i.complete || i.naturalWidth === 0; });
  document.body.setAttribute("data-images", document.images.length);
  document.body.setAttribute("data-broken-images", broken.length);
});
</script>"""


def kind(verdict: str) -> str:
    """One of :data:`KINDS` for a verdict as written in ``comparison.md``."""
    return VERDICTS.get(str(verdict).strip().lower(), "reported")


def natural(name: str) -> list:
    """Sort key that puts fig5 before fig10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _esc(value) -> str:
    return html.escape(str(value))


def _table(df) -> str:
    return df.to_html(index=False, float_format=lambda v: f"{v:.4g}", na_rep="–", border=0)


def _img(path: Path, root: Path) -> str:
    rel = path.relative_to(root).as_posix()
    return f'<img src="{html.escape(rel)}" alt="{html.escape(path.stem)}">'


def _read_json(path: Path, default=None):
    from ccbench.files import read_json

    try:
        return read_json(path)
    except (OSError, ValueError):
        return default


def _comparison(rows: List[dict]) -> str:
    out = ['<table><tr><th>what</th><th>paper</th><th>ours</th><th>tolerance</th><th>verdict</th>'
           '<th>reason</th></tr>']
    for r in rows:
        k = kind(r.get("verdict", ""))
        out.append(f'<tr><td>{_esc(r.get("what", ""))}</td><td>{_esc(r.get("paper", ""))}</td>'
                   f'<td>{_esc(r.get("ours", ""))}</td><td>{_esc(r.get("tolerance") or "—")}</td>'
                   f'<td class="v-{k.replace(" ", "-")}">'
                   f'{_esc(r.get("verdict", ""))}</td><td>{_esc(r.get("reason") or "—")}</td></tr>')
    return "".join(out) + "</table>"


def _meta(meta: dict) -> str:
    if not meta:
        return ""
    seeds = ", ".join(str(s) for s in meta.get("seeds", []))
    code = f"core {meta.get('core', '?')}" + (f", git {meta['git']}" if meta.get("git") else "")
    runs = f"{meta.get('runs', 0)} runs ({meta.get('cached', 0)} from the cache)"
    times = f"{meta.get('run_seconds', 0):.1f} s of run time, {meta.get('output_seconds', 0):.1f} s of analysis"
    scenario = json.dumps(meta.get("base", {}), indent=1, default=str)
    points = json.dumps(meta.get("points", []), default=str)
    mode = "quick" if meta.get("quick") else "full"
    return (f'<p class="muted">{mode}; {len(meta.get("points", []))} grid points × seeds {_esc(seeds)}; '
            f'{_esc(runs)}; {_esc(times)}; {_esc(code)}</p>'
            f'<details><summary>scenario and grid</summary><pre>{_esc(scenario)}</pre>'
            f'<pre>{_esc(points)}</pre></details>')


def _failures(meta: dict) -> str:
    failures = (meta or {}).get("failures") or []
    if not failures:
        return ""
    items = "".join(f"<li>run {f['run']} (seed {f['seed']}, {_esc(f['point'])}): {_esc(f['error'])}</li>"
                    for f in failures[:20])
    more = f"<li>… and {len(failures) - 20} more</li>" if len(failures) > 20 else ""
    return f'<p class="failed">{len(failures)} run(s) failed</p><ul>{items}{more}</ul>'


class _Experiment:
    """What the report knows of one experiment folder."""

    def __init__(self, folder: Path, known: dict):
        self.folder, self.name = folder, folder.name
        exp = known.get(self.name)
        self.meta = _read_json(folder / "meta.json", {}) or {}
        self.work = self.meta.get("work") or (exp.work if exp is not None else "") or "other"
        self.description = self.meta.get("description") or (exp.description if exp else "")
        self.rows = _read_json(folder / "comparison.json", []) or []
        self.counts = {k: 0 for k in KINDS}
        for row in self.rows:
            self.counts[kind(row.get("verdict", ""))] += 1

    def section(self, root: Path) -> str:
        import pandas as pd

        images = "".join(_img(p, root) for p in sorted(self.folder.glob("*.png")))
        table = _comparison(self.rows) if self.rows else '<p class="muted">no comparison table</p>'
        parts = [f'<h3 id="{_esc(self.name)}">{_esc(self.name)}</h3>',
                 f"<p>{_esc(self.description)}</p>" if self.description else "",
                 f'<div class="pair"><div>{images}</div><div>{table}</div></div>',
                 _failures(self.meta), _meta(self.meta)]
        summary = self.folder / "summary.csv"
        if summary.is_file():
            parts.append(f"<details><summary>summary.csv</summary>{_table(pd.read_csv(summary))}</details>")
        return "\n".join(parts)


def _front(groups: Dict[str, List[_Experiment]], titles: Dict[str, str]) -> List[str]:
    head = "".join(f"<th>{k}</th>" for k in KINDS)
    out = [f"<table><tr><th>work</th><th>experiment</th>{head}<th>failed runs</th></tr>"]
    grand = {k: 0 for k in KINDS}
    for work, exps in groups.items():
        total = {k: sum(e.counts[k] for e in exps) for k in KINDS}
        failed = sum(e.meta.get("failed", 0) for e in exps)
        cells = "".join(f'<td class="n v-{k.replace(" ", "-")}">{total[k]}</td>' for k in KINDS)
        out.append(f'<tr><th><a href="#work-{_esc(work)}">{_esc(work)}</a></th><th>all {len(exps)}</th>'
                   f'{cells}<td class="n">{failed}</td></tr>')
        for e in exps:
            cells = "".join(f'<td class="n">{e.counts[k] or ""}</td>' for k in KINDS)
            fails = e.meta.get("failed", 0)
            out.append(f'<tr><td></td><td><a href="#{_esc(e.name)}">{_esc(e.name)}</a></td>{cells}'
                       f'<td class="n{" failed" if fails else ""}">{fails or ""}</td></tr>')
        for k in KINDS:
            grand[k] += total[k]
    cells = "".join(f'<td class="n">{grand[k]}</td>' for k in KINDS)
    out.append(f"<tr><th>all</th><th></th>{cells}<td></td></tr></table>")
    return out


def _experiments(root: Path) -> List[str]:
    from ccbench.campaign.works import WORKS
    from ccbench.experiments.registry import experiments

    known = experiments()
    folders = sorted((p.parent for p in root.glob("experiments/*/summary.csv")), key=lambda p: natural(p.name))
    found = [_Experiment(folder, known) for folder in folders]
    if not found:
        return []
    order = list(WORKS) + sorted({e.work for e in found} - set(WORKS))
    groups = {w: [e for e in found if e.work == w] for w in order}
    groups = {w: exps for w, exps in groups.items() if exps}
    parts = ["<h2>Verdicts</h2>", *_front(groups, WORKS)]
    for work, exps in groups.items():
        parts.append(f'<h2 id="work-{_esc(work)}">{_esc(WORKS.get(work, work))}</h2>')
        parts.extend(e.section(root) for e in exps)
    return parts


def where_time_went(info: dict) -> str:
    """One sentence from ``campaign.json``: the phases' wall time, then the workers' time by part."""
    profile = info.get("profile", {})
    real = info.get("real_stack_s", 0) or 0
    return (f'Starting the cluster took {info.get("cluster_start_s", 0):.1f} s, the simulated runs '
            f'{info.get("runs_wall_s", 0) - real:.0f} s and the real-time runs {real:.0f} s of wall time; '
            f'computed runs spent {profile.get("event_loop_s", 0):.0f} s of worker time in the event loop, '
            f'{profile.get("scenario_and_results_s", 0):.0f} s building scenarios and converting results and '
            f'{profile.get("metric_s", 0):.0f} s in metrics; the coordinating process used '
            f'{info.get("coordinator_cpu_s", 0):.0f} s of CPU (keys, cache, progress, scheduling, and the analyses '
            f'no worker took); writing the analyses and figures took {info.get("outputs_s", 0):.0f} s, on the '
            f'workers while runs were under way where there were any')


def _campaign(root: Path) -> List[str]:
    info = _read_json(root / "campaign.json")
    if not info:
        return []
    skipped = "".join(f"<li>{_esc(n)}: {_esc(r)}</li>" for n, r in (info.get("skipped") or {}).items())
    broken = "".join(f"<li>{_esc(n)}: {_esc(r)}</li>" for n, r in (info.get("broken") or {}).items())
    return [f'<p>Campaign <b>{_esc(info.get("work"))}</b> ({"quick" if info.get("quick") else "full"}), '
            f'started {_esc(info.get("started"))}: {info.get("experiments")} experiments, '
            f'{info.get("runs")} runs ({info.get("cached")} from the cache), '
            f'{sum((info.get("failed_runs") or {}).values())} failed; '
            f'{info.get("wall_s", 0):.0f} s wall time. {_esc(where_time_went(info))}.</p>',
            f"<p>Skipped:</p><ul>{skipped}</ul>" if skipped else "",
            f'<p class="failed">Analysis failed:</p><ul>{broken}</ul>' if broken else ""]


def _runs(root: Path) -> List[str]:
    parts = []
    for run_dir in sorted(p.parent for p in root.glob("runs/*/summary.json")):
        result = Result.load(run_dir)
        parts.append(f"<h3>{html.escape(run_dir.name)}</h3>")
        parts.append(f"<pre>{html.escape(repr(result))}</pre>")
        parts.append(_table(result.flow_summary))
        parts.append(_table(result.link_summary))
        pngs = [run_dir / f"{n}.png" for n in ("rate", "cwnd", "queue") if (run_dir / f"{n}.png").exists()]
        parts.append('<div class="plots">' + "".join(_img(p, root) for p in pngs) + "</div>")
    return parts


def _bench(root: Path) -> List[str]:
    path = root / "bench.json"
    if not path.exists():
        return []
    import pandas as pd

    data = _read_json(path, {"results": []})
    return [_table(pd.DataFrame(data["results"]))]


def write_report(out_dir="out", title: Optional[str] = None) -> Path:
    """Write ``<out_dir>/report.html`` (atomically) and return its path."""
    from ccbench.campaign.files import write_text

    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    body = [f"<h1>{_esc(title or 'ccbench report')}</h1><p class=\"muted\">core {_esc(version())}</p>"]
    body.extend(_campaign(root))
    for heading, parts in (("", _experiments(root)), ("Example runs", _runs(root)),
                           ("Benchmark", _bench(root))):
        if parts:
            if heading:
                body.append(f"<h2>{heading}</h2>")
            body.extend(parts)
    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ccbench report</title>"
            f"<style>{CSS}</style>{CHECK}</head><body>\n" + "\n".join(body) + "\n</body></html>\n")
    return write_text(root / "report.html", page)
