"""``out/report.html``: one self-contained page over everything under an output directory.

It reads what the other commands wrote (``runs/*/summary.json`` + PNGs, ``experiments/*/summary.csv``
+ PNG, ``bench.json``) so it can be regenerated without re-running anything. Images are linked by
relative path, so the page works wherever the output directory is copied.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import List

from ccbench.api import version
from ccbench.result import Result

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1300px; color: #222; }
h1 { border-bottom: 2px solid #444; } h2 { margin-top: 2em; border-bottom: 1px solid #aaa; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th { background: #eee; }
.pair { display: flex; gap: 1.5em; align-items: flex-start; flex-wrap: wrap; }
.pair img, .plots img { max-width: 620px; border: 1px solid #ddd; }
.plots { display: flex; flex-wrap: wrap; gap: 0.5em; }
.muted { color: #666; }
"""


def _table(df) -> str:
    return df.to_html(index=False, float_format=lambda v: f"{v:.4g}", na_rep="–", border=0)


def _img(path: Path, root: Path) -> str:
    rel = path.relative_to(root).as_posix()
    return f'<img src="{html.escape(rel)}" alt="{html.escape(path.stem)}">'


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


def _experiments(root: Path) -> List[str]:
    import pandas as pd

    from ccbench.experiments.registry import experiments

    known = experiments()
    parts = []
    for exp_dir in sorted(p.parent for p in root.glob("experiments/*/summary.csv")):
        exp = known.get(exp_dir.name)
        parts.append(f"<h3>{html.escape(exp_dir.name)}</h3>")
        if exp is not None and exp.description:
            parts.append(f'<p class="muted">{html.escape(exp.description)}</p>')
        summary = pd.read_csv(exp_dir / "summary.csv")
        images = "".join(_img(p, root) for p in sorted(exp_dir.glob("*.png")))
        parts.append(f'<div class="pair"><div>{_table(summary)}</div><div>{images}</div></div>')
        results = exp_dir / "results.csv"
        if results.exists():
            failed = pd.read_csv(results, keep_default_na=False).get("error", pd.Series(dtype=str))
            n_failed = int((failed.astype(str) != "").sum())
            if n_failed:
                parts.append(f"<p><b>{n_failed} run(s) failed</b>; see results.csv.</p>")
    return parts


def _bench(root: Path) -> List[str]:
    path = root / "bench.json"
    if not path.exists():
        return []
    import pandas as pd

    data = json.loads(path.read_text())
    return [_table(pd.DataFrame(data["results"]))]


def write_report(out_dir="out") -> Path:
    """Write ``<out_dir>/report.html`` and return its path."""
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    body = [f"<h1>ccbench report</h1><p class=\"muted\">core {html.escape(version())}</p>"]
    for title, parts in (("Example runs", _runs(root)), ("Experiments", _experiments(root)),
                         ("Benchmark", _bench(root))):
        if parts:
            body.append(f"<h2>{title}</h2>")
            body.extend(parts)
    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ccbench report</title>"
            f"<style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
    path = root / "report.html"
    path.write_text(page, encoding="utf-8")
    return path
