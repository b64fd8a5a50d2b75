"""SIAD delay jitter (Figs. 4.17/4.18): every row's reason is computed from the summary whatever
the verdict, so a full sweep whose SIAD runs do not step up with Num_RTT still writes its
comparison (a wrong call in a reason once failed the experiment's analysis only in the full run);
the schemes the thesis gives no number for at 3 ms are judged by what it says of them (L2413,
L2421), and the reasons quote this run's retransmissions, drops and Additional Decreases."""

import pandas as pd

from ccbench.experiments.siad import delay_jitter as dj


def _summary(util, jitters=dj.JITTER_MS) -> pd.DataFrame:
    rows = [{"scheme": s, "jitter_ms": j, "utilization": util(s, j), "retransmits": 40.0, "queue_drops": 10.0,
             "loss_events": 7.0, "additional_decreases": 0.0}
            for s in dj.SCHEMES for j in jitters]
    rows.append({"scheme": "NewReno", "jitter_ms": 0, "utilization": util("NewReno", 0), "retransmits": 8.0,
                 "queue_drops": 8.0, "loss_events": 7.0, "additional_decreases": 0.0})
    return pd.DataFrame(rows)


def _by_what(rows):
    return {r["what"]: r for r in rows}


def test_steps_that_fall_differ_with_counts_in_the_reason():
    # SIAD's utilization at 5 ms falls as Num_RTT grows: the opposite of L2421's claim.
    fall = {"SIAD(10)": 0.95, "SIAD(20)": 0.90, "SIAD(30)": 0.85, "SIAD(40)": 0.80}
    rows = _by_what(dj._comparison(_summary(lambda s, j: fall.get(s, 0.97) if j == 5 else 0.98)))
    step = rows["SIAD at 5 ms by Num_RTT 10/20/30/40: steps up with Num_RTT"]
    assert step["verdict"] == "differs"
    assert "SIAD(10) 95.0%, 40/10, 0 AD" in step["reason"] and "SIAD(40) 80.0%, 40/10, 0 AD" in step["reason"]


def test_steps_that_rise_agree():
    rise = {"SIAD(10)": 0.80, "SIAD(20)": 0.85, "SIAD(30)": 0.90, "SIAD(40)": 0.92}
    rows = _by_what(dj._comparison(_summary(lambda s, j: rise.get(s, 0.97) if j == 5 else 0.98)))
    assert rows["SIAD at 5 ms by Num_RTT 10/20/30/40: steps up with Num_RTT"]["verdict"] == "agrees"


def test_quick_run_judges_every_scheme_at_3_ms():
    # The quick points: every scheme at 3 ms and NewReno at 0 ms. No row is left reported.
    util = {"NewReno": 0.95, "Cubic": 0.99, "H-TCP": 0.99, "SIAD(10)": 0.97, "SIAD(20)": 0.99, "SIAD(30)": 0.99,
            "SIAD(40)": 0.995}
    rows = dj._comparison(_summary(lambda s, j: util[s], jitters=(3,)))
    assert all(r["verdict"] != "reported" for r in rows)
    by = _by_what(rows)
    assert by["SIAD at 3 ms by Num_RTT 10/20/30/40: steps up with Num_RTT"]["verdict"] == "agrees"
    assert by["NewReno: utilization at 3 ms jitter, against ours without jitter"]["verdict"] == "agrees"
    siad = by["SIAD(20): utilization, RTT 100–103 ms per packet, 0.5 BDP"]
    assert siad["verdict"] == "differs"
    # The reason names the thesis's mechanism and this run's counts, not a recovery the thesis did not run.
    assert "RFC 6675" not in siad["reason"] and "Additional Decrease" in siad["reason"]
    assert "40 packets for 10 drops" in siad["reason"]


def test_newreno_influenced_by_jitter_differs():
    util = {"NewReno": 0.90, "Cubic": 0.99, "H-TCP": 0.99, "SIAD(10)": 0.97, "SIAD(20)": 0.99, "SIAD(30)": 0.99,
            "SIAD(40)": 0.995}
    rows = _by_what(dj._comparison(_summary(lambda s, j: 0.95 if (s, j) == ("NewReno", 0) else util[s],
                                            jitters=(3,))))
    assert rows["NewReno: utilization at 3 ms jitter, against ours without jitter"]["verdict"] == "differs"
