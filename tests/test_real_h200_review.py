"""Review mode on a real GPU's recording (tests/data/h200/load-matmul-counters.jsonl: an H200 under
a torch matmul load, recorded with the five clock-event counters). Not a GB10, but real NVML
answers: the verdicts a recording gets must come from its worst window, with when."""

from __future__ import annotations

import json
from pathlib import Path

from sparktui.cli.main import main
from sparktui.core.config import Config, load_config
from sparktui.core.recording import read_recording, readings_from_recording
from sparktui.gotchas import REGISTRY

DATA = Path(__file__).parent / "data" / "h200"
REC = DATA / "load-matmul-counters.jsonl"
FIVE = ("sw_power_cap_ns", "sync_boost_ns", "sw_thermal_ns", "hw_thermal_ns", "hw_power_brake_ns")


def test_the_real_recording_carries_all_five_counters_as_numbers():
    rec = read_recording(REC)
    assert rec.problems == [] and len(rec.samples) == 195
    for s in rec.samples:
        g = s["gpus"][0]
        assert all(isinstance(g[k], int) for k in FIVE), g  # read, never None, on an H200
    first, last = rec.samples[0]["gpus"][0], rec.samples[-1]["gpus"][0]
    assert (last["sw_power_cap_ns"] - first["sw_power_cap_ns"]) / 1e9 > 140  # the whole load at the 700 W cap
    assert all(last[k] == first[k] for k in FIVE if k != "sw_power_cap_ns")


def _cfg(tmp_path, window_min: float) -> Config:
    p = tmp_path / "c.toml"
    p.write_text(f"[thermal]\nwindow_min = {window_min}\n")
    return load_config(p)


def test_g4_reports_the_worst_window_of_the_real_load_with_when(tmp_path):
    v = REGISTRY["G4"].judge(readings_from_recording(read_recording(REC)), _cfg(tmp_path, 2))
    assert v.status.value == "warn" and v.summary.startswith("power capping")
    ev = {e.what: e.value for e in v.evidence}
    assert "UTC" in ev["worst window"] and "(+00:0" in ev["worst window"]
    assert ev["SW thermal slowdown (NVML field 269)"].startswith("+0.0 s")
    assert ev["HW power brake (NVML field 271)"].startswith("+0.0 s")


def test_a_window_longer_than_the_recording_is_not_judged_ok(tmp_path):
    # 3.2 min recorded, 10 min asked: no full window, but the capping the counter saw decides at once
    v = REGISTRY["G4"].judge(readings_from_recording(read_recording(REC)), _cfg(tmp_path, 10))
    assert v.status.value == "warn" and v.summary.startswith("power capping")


def test_check_replay_of_the_real_recording(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[thermal]\nwindow_min = 2\n")
    main(["--config", str(cfg), "check", "--replay", str(REC), "G3", "G4", "G6", "--json"])
    got = {c["id"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    # an H200 has its own memory (NVML reports it): no unified pool, G3 does not apply (issue 24, Seen 12)
    assert got["G3"]["status"] == "skip" and "discrete GPU" in got["G3"]["summary"]
    assert got["G4"]["status"] == "warn"
    assert got["G6"]["status"] == "unknown" and "not visible" in got["G6"]["summary"]  # the H200 runs in a container
