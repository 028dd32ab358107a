"""Ctrl-C on a real ``sparktui``: the partial result is still shown, but the exit is 130 whatever it
judged, so `sparktui preflight && torchrun ...` never launches on a look that was cut short, and
the probe sparktui started (in a session of its own) is gone with it."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from tests.hostile.spawned import ENV_KEEP, Run, fake_ssh
from tests.standins.make import make_standin


def ctrl_c(run: Run) -> tuple[int, str, str]:
    """Wait until the stand-in probe hangs, then press Ctrl-C: SIGINT to sparktui's process group."""
    run.probe_pids()
    os.killpg(run.proc.pid, signal.SIGINT)
    return run.finish()


@pytest.fixture
def hang(tmp_path) -> str:
    return make_standin(tmp_path, "hang_grandchild")


def test_ctrl_c_during_check_shows_what_was_read_and_exits_130(tmp_path, hang):
    with Run(tmp_path, ["check", "G1", "G3", "--json", "--python", hang, "--path", str(tmp_path)]) as run:
        rc, out, err = ctrl_c(run)
        assert rc == 130, err  # it used to be 3: the cancelled probe judged as an unknown
        assert "interrupted: judging what was read so far" in err and "Traceback" not in err
        got = {c["id"]: c["status"] for c in json.loads(out)["checks"]}
        # G3 was judged from what was read (meminfo, host): ok/warn on a Spark, skip on an x86 host where
        # NVML sees no GPU (no unified pool, since e92ef60); never the cancelled probe's unknown
        assert got["G1"] == "unknown" and got["G3"] in ("ok", "warn", "skip")
        assert run.left_running() == []


def test_ctrl_c_during_preflight_fails_the_gate_and_says_not_checked(tmp_path, hang):
    """--allow-unknown let the cancelled probe's unknown through: PASSED, exit 0, and the job launched."""
    with Run(tmp_path, ["preflight", "G1", "G3", "--allow-unknown", "--python", hang, "--path", str(tmp_path)]) as run:
        rc, out, err = ctrl_c(run)
        assert rc == 130, out + err
        assert "PASSED" not in out and "PASSED" not in err
        assert out.splitlines()[-1].startswith("preflight: interrupted: not checked")
        assert run.left_running() == []


def test_ctrl_c_during_preflight_json_says_not_passed(tmp_path, hang):
    with Run(tmp_path, ["preflight", "G1", "--allow-unknown", "--json", "--python", hang, "--path", str(tmp_path)]) as run:
        rc, out, err = ctrl_c(run)
        doc = json.loads(out)
        assert (rc, doc["passed"], doc["exit_code"]) == (130, False, 130), err


def test_ctrl_c_during_report_writes_the_partial_report_and_exits_130(tmp_path, hang):
    with Run(tmp_path, ["report", "G1", "G3", "--python", hang, "--path", str(tmp_path)]) as run:
        rc, out, err = ctrl_c(run)
        assert rc == 130, err
        assert "G3" in out and "Traceback" not in err


def test_ctrl_c_while_a_peer_hangs_exits_130_and_kills_its_ssh(tmp_path):
    ok = make_standin(tmp_path, "ok_gb10")
    bindir = fake_ssh(tmp_path / "bin")
    run = Run(tmp_path, ["peers", "G3", "--peer", "spark-2", "--python", ok, "--path", str(tmp_path)],
              env={"PATH": f"{bindir}:{ENV_KEEP.get('PATH', '')}"})
    try:
        run.probe_pids()  # the fake ssh and its grandchild are running
        time.sleep(0.5)  # the local checks are done; sparktui waits for the peer
        os.killpg(run.proc.pid, signal.SIGINT)
        rc, _, err = run.finish()
        assert rc == 130, err
        assert run.left_running() == []
    finally:
        run.cleanup()


@pytest.mark.parametrize("duration, code", [(["--duration", "600"], 130), ([], 0)])
def test_ctrl_c_ends_record_cut_short_130_open_ended_0(tmp_path, duration, code):
    """Open-ended, Ctrl-C is how a recording ends (exit 0); with --duration it cuts it short (130).
    Either way the file is whole."""
    out = tmp_path / "run.jsonl"
    ok = make_standin(tmp_path, "ok_gb10")  # the check readings it takes are done in a second
    with Run(tmp_path, ["record", "-o", str(out), "--interval", "0.2", "--python", ok, "--path", str(tmp_path), *duration]) as run:
        deadline = time.monotonic() + 30
        while (not out.exists() or out.read_text().count("\n") < 4) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # recording for a while: past its start, waiting for the end
        os.killpg(run.proc.pid, signal.SIGINT)
        rc, _, err = run.finish(timeout=90)
        assert rc == code, err
        assert all(json.loads(line) for line in out.read_text().splitlines())
