"""`[output] pcap`: the traces of a lossy SACK run, read by tshark (Debian package `tshark`,
installed by `make build`), agree with the run's own counters.

tshark sorts a segment that does not advance the sequence into "retransmission" or
"out-of-order" by timing alone (its out-of-order threshold is the handshake RTT, or 3 ms when it
saw no handshake): a SACK sender retransmits holes while new data is still flowing, so tshark
calls many of them out-of-order. Our links never reorder, so its two labels together are its
view of retransmissions, and that must equal ours exactly.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import ccbench

TSHARK = shutil.which("tshark")
pytestmark = pytest.mark.skipif(
    TSHARK is None, reason="tshark is not installed (make build installs the Debian package)")

SCENARIO = {
    "duration": "20s", "warmup": "0s", "seed": 1,
    "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "0.5bdp", "loss": 0.01},
    "flows": [{"cca": "cubic", "count": 2}],
    "output": {"pcap": ["bottleneck", "bottleneck-rev"], "sojourn_samples": False},
}

NOT_ADVANCING = "tcp.len > 0 && (tcp.analysis.retransmission || tcp.analysis.out_of_order)"


def tshark(path, display_filter, *fields):
    """Rows of `fields` of the frames matching `display_filter`."""
    args = [TSHARK, "-r", str(path), "-Y", display_filter, "-T", "fields"]
    for f in fields or ("frame.number",):
        args += ["-e", f]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True)
    return [line.split("\t") for line in done.stdout.splitlines()]


def per_flow(rows):
    """Count of rows by the flow whose sender port (40000 + flow) is the row's first field."""
    counts = {}
    for (port,) in rows:
        counts[int(port) - 40000] = counts.get(int(port) - 40000, 0) + 1
    return counts


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    out = tmp_path_factory.mktemp("pcap")
    result = ccbench.run(SCENARIO, out=out)
    return out, result


def test_traces_land_in_the_run_folder(traced):
    out, result = traced
    for link in ("bottleneck", "bottleneck-rev"):
        assert (out / f"{link}.pcap").is_file()
        assert result.summary["pcap"][link] == str(out / f"{link}.pcap")
    saved = json.loads((out / "summary.json").read_text())
    assert saved["pcap"] == {"bottleneck": "bottleneck.pcap", "bottleneck-rev": "bottleneck-rev.pcap"}


def test_tshark_finds_nothing_malformed(traced):
    out, _ = traced
    for link in ("bottleneck", "bottleneck-rev"):
        assert tshark(out / f"{link}.pcap", "_ws.malformed || _ws.expert.severity >= error") == []


def test_every_packet_offered_to_the_link_is_traced(traced):
    out, result = traced
    for link in ("bottleneck", "bottleneck-rev"):
        frames = tshark(out / f"{link}.pcap", "ip", "tcp.len")
        assert len(frames) == result.link(link)["packets"], link
    data = tshark(out / "bottleneck.pcap", "tcp.len > 0", "tcp.len")
    syns = tshark(out / "bottleneck.pcap", "tcp.flags.syn == 1")
    assert len(data) + len(syns) == result.link("bottleneck")["packets"]
    assert {int(n) for (n,) in data} == {1448}, "full-sized segments of the default MSS"


def test_tsharks_retransmissions_are_ours(traced):
    out, result = traced
    ours = {i: f["retransmits"] for i, f in enumerate(result.summary["flows"])}
    assert all(n > 0 for n in ours.values()), ours
    seen = per_flow(tshark(out / "bottleneck.pcap", NOT_ADVANCING, "tcp.srcport"))
    assert seen == ours
    # Nothing else in the trace goes back in sequence: no spurious labels, no gaps left unfilled.
    assert tshark(out / "bottleneck.pcap", "tcp.analysis.lost_segment") == []


def test_both_directions_merged_show_fast_retransmissions_and_sack(traced, tmp_path):
    out, result = traced
    mergecap = shutil.which("mergecap")
    if mergecap is None:
        pytest.skip("mergecap (Debian package wireshark-common, a dependency of tshark) is absent")
    both = tmp_path / "both.pcap"
    subprocess.run([mergecap, "-w", str(both), str(out / "bottleneck.pcap"),
                    str(out / "bottleneck-rev.pcap")], check=True, timeout=60)
    ours = {i: f["retransmits"] for i, f in enumerate(result.summary["flows"])}
    assert per_flow(tshark(both, NOT_ADVANCING, "tcp.srcport")) == ours
    fast = per_flow(tshark(both, "tcp.analysis.fast_retransmission", "tcp.srcport"))
    assert set(fast) == set(ours) and all(0 < fast[i] <= ours[i] for i in ours), (fast, ours)
    sacks = tshark(both, "tcp.options.sack_le", "tcp.options.sack_le", "tcp.options.sack_re",
                   "tcp.window_size_scalefactor")
    assert sacks, "the receivers' ACKs carry SACK blocks"
    for left, right, scale in sacks:
        lefts, rights = left.split(","), right.split(",")
        assert all(int(a) < int(b) for a, b in zip(lefts, rights))
        # Relative numbers: byte b of the stream is b + 1; blocks cover whole segments.
        assert all((int(a) - 1) % 1448 == 0 for a in lefts)
        assert scale == "2048", "the SYN-ACK's window scale of a 64 MB buffer (shift 11)"


def test_unknown_link_is_a_one_line_scenario_error():
    bad = dict(SCENARIO, output={"pcap": ["bottleneck", "nowhere"]})
    with pytest.raises(ccbench.ScenarioError, match=r"output\.pcap\[1\]: unknown link \"nowhere\""):
        ccbench.run(bad)


def test_a_run_without_folder_keeps_its_traces_until_saved(tmp_path):
    short = dict(SCENARIO, duration="2s", output={"pcap": ["bottleneck"]})
    result = ccbench.run(short)
    temp = Path(result.summary["pcap"]["bottleneck"])
    assert temp.is_file() and temp.parent.name.startswith("ccbench-pcap-")
    result.save(tmp_path)
    assert (tmp_path / "bottleneck.pcap").is_file() and not temp.exists()
    assert result.summary["pcap"]["bottleneck"] == str(tmp_path / "bottleneck.pcap")


def test_tracing_changes_no_result():
    short = dict(SCENARIO, duration="3s")
    plain = ccbench.run(dict(short, output={"sojourn_samples": False}))
    traced = ccbench.run(short)
    shutil.rmtree(Path(traced.summary["pcap"]["bottleneck"]).parent)  # never saved: not kept
    drop = ("wall_s", "pcap")
    assert {k: v for k, v in traced.summary.items() if k not in drop} == \
        {k: v for k, v in plain.summary.items() if k not in drop}
    for name in ("flows", "links"):
        assert getattr(traced, name).equals(getattr(plain, name)), name
