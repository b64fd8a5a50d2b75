"""ABE paper §II, Fig. 2: utilization of one AIMD (NewReno) flow vs. buffer size, per beta.

The simulated points are compared with the model of eq. (6) (:func:`ccbench.models.aimd_utilization`).
Delayed ACKs are off because the model assumes the window grows by one segment per RTT.
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.models import aimd_utilization

BETAS = [0.5, 0.7, 0.9]


def buffer_spec(buffer_over_bdp: float) -> str:
    # A zero-length queue would drop every packet that meets a busy link; one packet is the
    # smallest real buffer and is what "0 BDP" means in the paper's plot.
    return "1p" if buffer_over_bdp == 0 else f"{buffer_over_bdp:g}bdp"


def _apply(point: dict) -> dict:
    return {"bottleneck.buffer": buffer_spec(point["buffer_bdp"]), "flows[0].cc.beta": point["beta"]}


def _metric(result, point: dict) -> dict:
    return {"utilization": result.link("bottleneck")["utilization"]}


def _compare(summary):
    summary = summary.copy()
    summary["model"] = aimd_utilization(summary["beta"].to_numpy(), summary["buffer_bdp"].to_numpy())
    summary["difference"] = summary["utilization"] - summary["model"]
    return summary


#: Tolerance of the paper check (tests/python/test_paper.py): utilization points off the model.
TOLERANCE = 0.03


def _comparison(summary) -> list:
    checks = []
    for _, r in summary.iterrows():
        model = float(aimd_utilization(r["beta"], r["buffer_bdp"]))
        check = Check(f"utilization, beta {r['beta']:g}, buffer {r['buffer_bdp']:g} BDP", f"{model:.3f}",
                      "Fig. 2, eq. (6), L100–L116", float(r["utilization"]),
                      Claim("≈", round(model, 6), agree=TOLERANCE, relative=False), shown=mean_spread(r, "utilization"))
        if check.verdict != "agrees":
            check.reason = f"{check.ours - model:+.3f} off the model, outside the ±{TOLERANCE * 100:.0f}-point tolerance"
        checks.append(check)
    return [check.row() for check in checks]


def _figure(summary, out_dir: Path) -> Path:
    import numpy as np

    from ccbench.plot import pyplot, save

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = np.linspace(0, max(1.6, float(summary["buffer_bdp"].max())), 300)
    for i, (beta, df) in enumerate(summary.groupby("beta", sort=True)):
        colour = f"C{i}"
        ax.plot(x, aimd_utilization(beta, x), color=colour, lw=1.2, label=f"model β={beta:g}")
        ax.plot(df["buffer_bdp"], df["utilization"], "o", color=colour, label=f"sim β={beta:g}")
    ax.set_xlabel("buffer (fraction of BDP)")
    ax.set_ylabel("bottleneck utilization")
    ax.set_title("ABE Fig. 2: one NewReno flow, 10 Mbps, RTT 100 ms, DropTail")
    ax.set_ylim(0.5, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", ncol=2, loc="lower right")
    return save(fig, out_dir / "abe-fig2.png")


EXPERIMENT = Experiment(
    name="abe-fig2",
    description="ABE §II Fig. 2: utilization of one NewReno flow vs. buffer (fraction of BDP) "
                "for beta 0.5/0.7/0.9, against the AIMD model of eq. (6)",
    base={
        "duration": "300s",
        "warmup": "50s",
        "seed": 1,
        # Eq. (6) is the deterministic AIMD sawtooth: a loss only when the window exceeds
        # BDP + buffer. Host timing noise (docs/model.md) bunches packets, and with the
        # one-packet "0 BDP" buffer that alone drops them (utilization 5%, not 76%), so this
        # figure runs the exact periodic model, as the paper's ns-2 (overhead_ = 0) did.
        "host_noise": "off",
        "bottleneck": {"rate": "10Mbps", "rtt": "100ms", "buffer": "1bdp", "aqm": "droptail"},
        "flows": [{"cca": "newreno", "delayed_ack": False, "cc": {"beta": 0.5}}],
        "output": {"sojourn_samples": False},
    },
    grid={"beta": BETAS, "buffer_bdp": [0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5]},
    quick_grid={"beta": BETAS, "buffer_bdp": [0, 0.25, 0.5, 1.0]},
    # Without host noise nothing in these runs is random: one seed is the whole answer.
    seeds=(1,),
    quick_overrides={"duration": "120s", "warmup": "30s"},
    apply=_apply,
    metric=_metric,
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
