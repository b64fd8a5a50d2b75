"""The check type and the one function that decides verdicts (issue 25, item 2), computed by hand."""

import json
import math

import pytest

from ccbench.experiments.checks import VERDICTS, Check, Claim, check_rows, decide, redecide


@pytest.mark.parametrize("ours, verdict", [(8.23, "agrees"), (8.64, "agrees"), (8.65, "within tolerance"),
                                           (9.05, "within tolerance"), (9.06, "differs"), (1.23, "differs"),
                                           (7.82, "agrees"), (7.41, "within tolerance"), (7.40, "differs")])
def test_about_a_value_with_relative_bands(ours, verdict):
    # 8.23 ± 5 % agrees (7.8185 .. 8.6415), ± 10 % within (7.407 .. 9.053).
    assert decide(Claim("≈", 8.23, agree=0.05, within=0.10), ours) == verdict


def test_about_a_value_with_absolute_bands():
    claim = Claim("≈", 30.83, agree=0.05, within=0.2, relative=False)
    assert [decide(claim, x) for x in (30.86, 30.95, 31.1)] == ["agrees", "within tolerance", "differs"]


@pytest.mark.parametrize("claim, ours, verdict", [
    (Claim("≤", 10.0), 10.0, "agrees"), (Claim("≤", 10.0), 10.5, "differs"),
    (Claim("≤", 10.0, within=0.1), 10.5, "within tolerance"), (Claim("≤", 10.0, within=0.1), 11.5, "differs"),
    (Claim("≥", 0.9), 0.95, "agrees"), (Claim("≥", 0.9), 0.89, "differs"),
    (Claim("≥", 0.9, within=0.05), 0.86, "within tolerance"),
    (Claim("in", (3.0, 4.0)), 3.5, "agrees"), (Claim("in", (3.0, 4.0)), 4.1, "differs"),
    (Claim("in", (3.0, 4.0), within=0.5, relative=False), 4.4, "within tolerance"),
    (Claim("in", (3.0, 4.0), within=0.5, relative=False), 2.4, "differs"),
])
def test_bounds_and_ranges(claim, ours, verdict):
    assert decide(claim, ours) == verdict


@pytest.mark.parametrize("claim, ours", [(None, 1.0), (Claim("≈", 1.0, 0.1), None),
                                         (Claim("≈", 1.0, 0.1), math.nan), (Claim("≈", 1.0, 0.1), "n/a")])
def test_nothing_to_judge_is_reported(claim, ours):
    assert decide(claim, ours) == "reported"


def test_bad_claims_are_refused():
    with pytest.raises(ValueError, match="relation"):
        Claim("~", 1.0)
    with pytest.raises(ValueError, match="empty"):
        Claim("in", (2.0, 1.0))
    with pytest.raises(ValueError, match="non-negative"):
        Claim("≈", 1.0, agree=-0.1)


def test_a_row_carries_what_decides_it_again():
    check = Check("abe-fig10: throughput at β 0.8", "8.23 Mbit/s", "Fig. 10, L412", 8.0,
                  Claim("≈", 8.23, agree=0.05, within=0.10), shown="8.00 ± 0.02 Mbit/s (5 seeds)")
    row = json.loads(json.dumps(check.row()))
    assert row["verdict"] == "agrees" and row["paper"] == "8.23 Mbit/s (Fig. 10, L412)"
    assert row["ours"] == "8.00 ± 0.02 Mbit/s (5 seeds)" and row["value"] == 8.0
    assert redecide(row, row["value"]) == "agrees"
    assert redecide(row, row["value"] / 2) == "differs" and redecide(row, row["value"] * 2) == "differs"
    check_rows("abe-fig10", [row])


def test_a_misspelt_or_hand_written_verdict_is_an_error():
    good = {"what": "x", "paper": "p", "ours": "o", "verdict": "agrees"}
    check_rows("e", [good] + [dict(good, verdict=v, unsettled="1 seed") for v in VERDICTS])
    with pytest.raises(ValueError, match="verdict 'agree' is not one of"):
        check_rows("e", [dict(good, verdict="agree")])
    with pytest.raises(ValueError, match="no verdict"):
        check_rows("e", [{"what": "x", "paper": "p", "ours": "o"}])
    typed = Check("x", "p", "s", 2.0, Claim("≈", 1.0, agree=0.1)).row()
    with pytest.raises(ValueError, match="not what its claim decides"):
        check_rows("e", [dict(typed, verdict="agrees")])


def test_claims_read_as_written():
    assert Claim("≈", 8.23, agree=0.05, within=0.10).text() == "≈ 8.23 (agrees ±5 %, within ±10 %)"
    assert Claim("≥", 0.9).text() == "≥ 0.9"
    assert Claim("≈", 90.0, within=5.0, relative=False).text() == "≈ 90 (within ±5)"
    assert Claim("in", (3.0, 4.0), within=0.5, relative=False).text() == "in [3, 4] (within ±0.5)"


def test_a_quick_run_leaves_to_the_full_run_only_what_it_lacks():
    from ccbench.experiments.checks import quick_lacks, settle_quick

    claim = Claim("≈", 10.0, agree=0.05, within=0.1)
    # 20 lies 9 outside the within band [9, 11]: more seeds that could move it by 12 may decide.
    seeds = Check("mean over seeds", "10", "Fig. 1", 20.0, claim, reason="far", needs=("seeds",), movable=12.0).row()
    longer = Check("long-run mean", "10", "Fig. 1", 20.0, claim, reason="far", needs=("duration",), movable=12.0).row()
    plain = Check("no needs", "10", "Fig. 1", 20.0, claim, reason="far").row()
    agreeing = Check("agrees anyway", "10", "Fig. 1", 10.0, claim, needs=("seeds",)).row()
    lacks = quick_lacks(1, 20, "60s", "600s")
    assert lacks == {"seeds": "1 seed (full run: 20)", "duration": "60s runs (full run: 600s)"}
    rows = settle_quick([seeds, longer, plain, agreeing], {"seeds": lacks["seeds"]})
    assert [r["verdict"] for r in rows] == ["full run decides", "differs", "differs", "agrees"]
    assert rows[0]["reason"].startswith("quick run: 1 seed (full run: 20); ours is 9 outside the claim, within the 12")
    check_rows("e", rows)
    # Decided again, the row keeps its quick-run meaning; at the paper's value it agrees.
    assert redecide(rows[0], 20.0) == "full run decides" and redecide(rows[0], 10.0) == "agrees"
    # Farther than the missing seeds could move it, the quick run judges it.
    assert redecide(rows[0], 30.0) == "differs"
    # A full run (nothing lacking) judges every row.
    assert [r["verdict"] for r in settle_quick([seeds, longer], {})] == ["differs", "differs"]
    assert quick_lacks(3, 3, None, "600s") == {}


def test_a_row_far_outside_what_the_full_run_could_move_is_judged():
    """rLEDBAT Table 2's BBRv1 queue: 44 ms against the paper's 100 ms is no seed's doing."""
    from ccbench.experiments.checks import settle_quick

    claim = Claim("≈", 100.0, agree=0.1, within=0.25)
    near = Check("queue", "100 ms", "Table 2", 70.0, claim, reason="r", needs=("seeds",), movable=8.0).row()
    far = Check("queue", "100 ms", "Table 2", 44.0, claim, reason="r", needs=("seeds",), movable=8.0).row()
    silent = Check("queue", "100 ms", "Table 2", 70.0, claim, reason="r", needs=("seeds",)).row()
    rows = settle_quick([near, far, silent], {"seeds": "1 seed (full run: 5)"})
    assert [r["verdict"] for r in rows] == ["full run decides", "differs", "differs"]
    assert "beyond the 8 those could move it" in rows[1]["reason"]
    assert "no reach stated" in rows[2]["reason"]
    check_rows("e", rows)


def test_a_contrast_row_is_shown_never_judged():
    row = Check("AIMD model, Eq. (5) with our queue", "model: 0.83", "Eq. (5)", 0.80, contrast=True).row()
    assert row["verdict"] == "contrast"
    check_rows("e", [row])
    with pytest.raises(ValueError, match="contrast"):
        Check("x", "model", "Eq. (5)", 0.8, Claim("≈", 0.83, within=0.1), contrast=True)
    with pytest.raises(ValueError, match="contrast"):
        check_rows("e", [dict(row, claim=Claim("≈", 0.83).as_dict())])


def test_full_run_decides_needs_a_quick_run_that_lacks_something():
    row = Check("x", "10", "Fig. 1", 20.0, Claim("≈", 10.0, 0.05, 0.1), reason="far", needs=("seeds",)).row()
    with pytest.raises(ValueError, match="only a quick run"):
        check_rows("e", [dict(row, verdict="full run decides")])
    with pytest.raises(ValueError, match="needs"):
        Check("x", "10", "Fig. 1", 20.0, needs=("patience",))
