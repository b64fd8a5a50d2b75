"""A real-stack run's cache key covers the programs it executes: rebuilding `ccbench-emu` or
`rledbatd` recomputes those runs instead of serving numbers the old programs made (issue 38)."""

from __future__ import annotations

import os

SCENARIO = 'duration = "2s"\n[bottleneck]\nrate = "10Mbps"\nrtt = "20ms"\n[[flows]]\ncca = "cubic"\n'


def _key(engine: str) -> str:
    from ccbench.campaign.runner import prepare
    from ccbench.campaign.tasks import Task

    task = Task(lambda result, point: {}, SCENARIO, [], {}, 1, engine=engine)
    prepare([task])
    assert task.key, task.invalid
    return task.key


def test_the_emulator_and_daemon_binaries_enter_the_key(tmp_path, monkeypatch):
    emu, daemon = tmp_path / "ccbench-emu", tmp_path / "rledbatd"
    for program in (emu, daemon):
        program.write_bytes(b"#!/bin/sh\nexit 0\n")
        os.chmod(program, 0o755)
    monkeypatch.setenv("CCBENCH_EMU", str(emu))
    monkeypatch.delenv("CCBENCH_RLEDBATD", raising=False)
    first, simulated = _key("emu"), _key("sim")
    emu.write_bytes(b"#!/bin/sh\nexit 0 # rebuilt\n")
    assert _key("emu") != first
    second = _key("emu")
    daemon.write_bytes(b"#!/bin/sh\nexit 1\n")
    assert _key("emu") != second
    assert _key("sim") == simulated, "the simulator's runs do not depend on the real stack's programs"
