"""SIAD delay jitter (Fig. 4.18): every row's reason is computed from the summary whatever the
verdict, so a full sweep whose SIAD runs do not step up with Num_RTT still writes its comparison
(a wrong call in a reason once failed the experiment's analysis only in the full run)."""

import pandas as pd

from ccbench.experiments.siad import delay_jitter as dj


def _summary(util) -> pd.DataFrame:
    rows = [{"scheme": s, "jitter_ms": j, "utilization": util(s, j), "retransmits": 40.0, "queue_drops": 10.0}
            for s in dj.SCHEMES for j in dj.JITTER_MS]
    return pd.DataFrame(rows)


def _by_what(rows):
    return {r["what"]: r for r in rows}


def test_steps_that_fall_differ_with_counts_in_the_reason():
    # SIAD's utilization at 5 ms falls as Num_RTT grows: the opposite of L2423's claim.
    fall = {"SIAD(10)": 0.95, "SIAD(20)": 0.90, "SIAD(30)": 0.85, "SIAD(40)": 0.80}
    rows = _by_what(dj._comparison(_summary(lambda s, j: fall.get(s, 0.97) if j == 5 else 0.98)))
    step = rows["SIAD at 5 ms by Num_RTT 10/20/30/40: steps up with Num_RTT"]
    assert step["verdict"] == "differs"
    assert "SIAD(10) 40/10" in step["reason"] and "SIAD(40) 40/10" in step["reason"]


def test_steps_that_rise_agree():
    rise = {"SIAD(10)": 0.80, "SIAD(20)": 0.85, "SIAD(30)": 0.90, "SIAD(40)": 0.92}
    rows = _by_what(dj._comparison(_summary(lambda s, j: rise.get(s, 0.97) if j == 5 else 0.98)))
    assert rows["SIAD at 5 ms by Num_RTT 10/20/30/40: steps up with Num_RTT"]["verdict"] == "agrees"
