"""Plots of one run (``cwnd.png``, ``rate.png``, ``queue.png``) with matplotlib's Agg backend."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Union

from ccbench.result import Result

#: Scatter plots of per-packet sojourn times are thinned to at most this many points.
MAX_POINTS = 20_000

#: The link whose rate the goodput plot marks (a dumbbell's data-direction bottleneck).
BOTTLENECK = "bottleneck"

#: Columns the plots draw, by series.
NEEDED = {"flows": ("t_s", "flow", "cwnd_bytes", "goodput_mbps"), "links": ("t_s", "link", "queue_packets"),
          "sojourn": ("t_s", "flow", "sojourn_ms")}


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (files only; never needs a display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: Path) -> Path:
    """Lay out, write (PNG, 110 dpi) and close a figure; returns ``path``."""
    from ccbench.files import write_with

    fig.tight_layout()
    # Rendered to memory and written whole: a link planted at `path` is replaced, not followed.
    write_with(path, lambda buffer: fig.savefig(buffer, dpi=110, format="png"))
    pyplot().close(fig)
    return path


def _per(df, key):
    """Group a series table by flow/link name, keeping first-appearance order."""
    if df.empty:
        return []
    return [(name, df[df[key] == name]) for name in dict.fromkeys(df[key])]


def plot_cwnd(result: Result, path: Path) -> Path:
    fig, ax = pyplot().subplots(figsize=(8, 4))
    for name, df in _per(result.flows, "flow"):
        ax.plot(df["t_s"], df["cwnd_bytes"] / 1000, label=str(name), lw=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (kB)")
    ax.set_title("Congestion window")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    return save(fig, path)


def plot_rate(result: Result, path: Path) -> Path:
    fig, ax = pyplot().subplots(figsize=(8, 4))
    for name, df in _per(result.flows, "flow"):
        ax.plot(df["t_s"], df["goodput_mbps"], label=str(name), lw=1)
    for link in result.summary.get("links", []):
        if link.get("name") == BOTTLENECK and isinstance(link.get("rate_mbps"), (int, float)):
            ax.axhline(link["rate_mbps"], color="grey", ls=":", lw=1, label=f"{BOTTLENECK} rate")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("goodput (Mbps)")
    ax.set_title("Goodput per flow")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    return save(fig, path)


def plot_queue(result: Result, path: Path) -> Path:
    import numpy as np

    fig, (occ, delay, cdf) = pyplot().subplots(3, 1, figsize=(8, 9))
    for name, df in _per(result.links, "link"):
        occ.plot(df["t_s"], df["queue_packets"], label=str(name), lw=1)
    occ.set_xlabel("time (s)")
    occ.set_ylabel("queue (packets)")
    occ.set_title("Queue occupancy (mean over each bin)")
    if occ.get_legend_handles_labels()[0]:
        occ.legend(fontsize="small")

    soj = result.sojourn
    if soj.empty:
        for ax in (delay, cdf):
            ax.text(0.5, 0.5, "no sojourn samples (set output.sojourn_samples = true)", ha="center", va="center",
                    transform=ax.transAxes)
    else:
        step = max(1, len(soj) // MAX_POINTS)
        for name, df in _per(soj, "flow"):
            thin = df.iloc[::step]
            delay.scatter(thin["t_s"], thin["sojourn_ms"], s=1, alpha=0.4)
            x = np.sort(df["sojourn_ms"].to_numpy())
            cdf.plot(x, np.arange(1, len(x) + 1) / len(x), label=str(name), lw=1)
        if len(soj["flow"].unique()) <= 10:
            cdf.legend(fontsize="small")
    delay.set_xlabel("time (s)")
    delay.set_ylabel("sojourn (ms)")
    delay.set_title("Queueing delay of each packet")
    cdf.set_xlabel("sojourn (ms)")
    cdf.set_ylabel("CDF")
    cdf.set_title("Queueing delay distribution")
    return save(fig, path)


def _check_columns(result: Result, source) -> None:
    """Every column the plots draw is there (a Parquet file of some other program is not)."""
    from ccbench.errors import RunFolderError

    for name, columns in NEEDED.items():
        missing = [c for c in columns if c not in getattr(result, name).columns]
        if missing:
            where = f"{source / (name + '.parquet')}" if source is not None else f"the {name} series"
            raise RunFolderError(f"{where}: no column {missing[0]!r}; not a ccbench run's {name} series")


def plot_run(result: Union[Result, str, "os.PathLike[str]"], out_dir=None) -> List[Path]:
    """Draw ``cwnd.png``, ``rate.png`` and ``queue.png`` for a Result or a saved run directory.

    The PNGs go to ``out_dir`` (default: the run directory itself).
    """
    from ccbench.errors import ArgumentError, ArgumentTypeError

    source = None
    if not isinstance(result, Result):
        if not isinstance(result, (str, os.PathLike)):
            raise ArgumentTypeError(f"result must be a Result or a run folder path, not {type(result).__name__}")
        source = Path(result)
        out_dir = out_dir or result
        result = Result.load(result)
    if out_dir is None:
        raise ArgumentError("out_dir is required when plotting an in-memory Result")
    if not isinstance(out_dir, (str, os.PathLike)):
        raise ArgumentTypeError(f"out_dir must be a folder path, not {type(out_dir).__name__}")
    _check_columns(result, source)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [plot_cwnd(result, out / "cwnd.png"), plot_rate(result, out / "rate.png"),
            plot_queue(result, out / "queue.png")]
