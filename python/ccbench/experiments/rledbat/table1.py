"""rLEDBAT paper, Table 1 (first row): completion time of a lone 262 KB CUBIC download.

The flow starts with the three-way handshake, so the FCT includes one extra RTT, as in the paper.
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment, mean_spread

RTTS_MS = [20, 100, 200, 300]
#: Table 1, "Cubic alone" row (seconds).
PAPER_FCT_S = [0.16, 0.62, 1.22, 1.82]


def _apply(point: dict) -> dict:
    return {"bottleneck.rtt": f"{point['rtt_ms']}ms"}


def _metric(result, point: dict) -> dict:
    return {"fct_s": result.flow("download")["fct_s"]}


def _compare(summary):
    summary = summary.copy()
    summary["relative_error"] = (summary["fct_s"] - summary["paper_fct_s"]) / summary["paper_fct_s"]
    return summary


#: Tolerance of the paper check (tests/python/test_paper.py): relative error of the FCT.
TOLERANCE = 0.15


def _comparison(summary) -> list:
    rows = []
    for _, r in summary.iterrows():
        err = (r["fct_s"] - r["paper_fct_s"]) / r["paper_fct_s"]
        ok = abs(err) <= TOLERANCE
        rows.append({
            "what": f"FCT, 262 KB CUBIC alone, RTT {r['rtt_ms']:g} ms",
            "paper": f"{r['paper_fct_s']:.2f} s", "ours": mean_spread(r, "fct_s", unit="s", note=f"{err:+.0%}"),
            "verdict": "agrees" if ok else "differs",
            "reason": "" if ok else f"outside the ±{TOLERANCE:.0%} tolerance of the paper check",
        })
    return rows


def _figure(summary, out_dir: Path) -> Path:
    import numpy as np

    from ccbench.plot import pyplot, save

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    x = np.arange(len(summary))
    ax.bar(x - 0.2, summary["paper_fct_s"], 0.4, label="paper (Table 1)", color="C7")
    ax.bar(x + 0.2, summary["fct_s"], 0.4, label="ccbench", color="C0")
    ax.set_xticks(x)
    ax.set_xticklabels([f"{r:g} ms" for r in summary["rtt_ms"]])
    ax.set_xlabel("base RTT")
    ax.set_ylabel("completion time (s)")
    ax.set_title("rLEDBAT Table 1: 262 KB CUBIC flow alone, 20 Mbps")
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    return save(fig, out_dir / "rledbat-table1.png")


EXPERIMENT = Experiment(
    name="rledbat-table1",
    description="rLEDBAT Table 1, first row: FCT of a lone 262 KB CUBIC flow (with handshake) "
                "at 20 Mbps for RTT 20/100/200/300 ms",
    base={
        "duration": "10s",
        "warmup": "0s",
        "seed": 1,
        "bottleneck": {"rate": "20Mbps", "rtt": "100ms", "buffer": "500ms", "aqm": "droptail"},
        "flows": [{"name": "download", "cca": "cubic", "size": "262KB", "handshake": True}],
        "output": {"sojourn_samples": False},
    },
    grid={"rtt_ms": RTTS_MS},
    seeds=(1, 2, 3, 4, 5),  # the spread over seeds goes into summary.csv and comparison.md
    quick_seeds=(1, 2),
    apply=_apply,
    metric=_metric,
    reference={"rtt_ms": RTTS_MS, "paper_fct_s": PAPER_FCT_S},
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
