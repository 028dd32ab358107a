"""A real slowdown, attributed (issue 27 item 3): tests/data/h100/lgc-lock-recording-2026-12-05.jsonl.

Provenance: `sparktui record --interval 1 --run-log train.log` (tools/slowdown_on_gpu.sh, tree 88b6a1d)
on the lent H100 80GB HBM3 (driver 580.159.04), 2026-12-05 17:34-17:38 UTC, beside a bf16 matmul
training loop printing tqdm progress (~8 steps/s); `nvidia-smi -lgc 300,600` at 17:35:34 for 120 s,
then `-rgc`. Trimmed for size, nothing else changed in what is kept: every sample, with only the
MemTotal/MemAvailable/MemFree/SwapTotal/SwapFree figures of its meminfo; the header; the host and the
nine run readings (the other check readings and the process scans dropped); this machine's paths
renamed (/home/user/...). The same lock's nvidia-smi view: tests/data/h100/lgc-lock-2026-12-05.txt.
"""

from __future__ import annotations

from pathlib import Path

from sparktui.core.config import Config, load_config
from sparktui.core.recording import read_recording, readings_from_recording
from sparktui.gotchas import REGISTRY

REC = Path(__file__).parent / "data" / "h100" / "lgc-lock-recording-2026-12-05.jsonl"


def _cfg(tmp_path) -> Config:
    p = tmp_path / "c.toml"
    p.write_text("[run]\nslow_window_s = 30\n\n[thermal]\nwindow_min = 2\n")
    return load_config(p)


def test_the_recording_shows_the_lock_as_the_driver_gave_it():
    rec = read_recording(REC)
    assert rec.problems == [] and len(rec.samples) == 251
    locked = [s["gpus"][0] for s in rec.samples if s["gpus"][0]["sm_mhz"] == 600]
    assert len(locked) == 121 and all(g["util_gpu"] == 100 for g in locked)
    quiet = [g for g in locked if g["reasons"] == []]  # no clock-event reason at all ...
    assert len(quiet) == 120 and locked[0]["reasons"] == ["sw_power_cap"]  # ... but the first, as the lock came
    grown = (locked[-1]["sw_thermal_ns"] - locked[0]["sw_thermal_ns"]) / 1e9
    assert grown > 100  # the driver booked the locked time as SW thermal slowdown ...
    assert max(g["temp_c"] for g in quiet) <= 66  # ... at 56-66 °C (the run before the lock: up to 76 °C)


def test_g14_warns_of_the_slowdown_naming_the_lock_and_the_clock_drop(tmp_path):
    v = REGISTRY["G14"].judge(readings_from_recording(read_recording(REC)), _cfg(tmp_path))
    assert v.status.value == "warn"
    s = v.summary
    # the 30 s window to the second (it was "from 17:35 UTC to 17:36 UTC"): it starts as the lock came, 17:35:34
    assert s.startswith("slowdown: 3.72 steps/s from 17:35:34 to 17:36:04 UTC against the run's median 7.99 steps/s "
                        "(47% of its rate, slow under 70%) while clocks were held by a setting: "), s
    # the lock leads, every number kept; the counters are what the driver booked, not causes of their own
    assert "while clocks were held by a setting: SM clock under load 1350 → 600 MHz (-56%), no clock-event reason " \
           "active in 30 of 30 loaded samples (a lock with `nvidia-smi -lgc`; G4), not heat or power; the driver " \
           "booked that time as SW power capping +20.0 s (67% of the time) and SW thermal slowdown +20.0 s " \
           "(67% of the time) (not seen: " in s, s
    assert s[:60].startswith("slowdown: 3.72 steps/s") and s.index("nvidia-smi -lgc") < s.index("SW power capping")


def test_g4_says_clocks_set_by_hand_not_thermal_throttling(tmp_path):
    v = REGISTRY["G4"].judge(readings_from_recording(read_recording(REC)), _cfg(tmp_path))
    assert v.status.value == "warn"
    assert v.summary.startswith("clocks set by hand: SM clock held at 600 MHz of its 1980 MHz maximum under load in "
                                "90 of 121 loaded samples with no clock-event reason active (a lock with "
                                "`nvidia-smi -lgc`)"), v.summary
    assert "thermal throttling" not in v.summary and "sudo nvidia-smi -rgc" in v.summary


def test_with_the_default_windows_the_lock_is_still_named(tmp_path):
    """Default config (a 300 s slow window, 10-min G4 window): the 4-min recording is too short for
    G14's slowdown window (ok, progressing), and G4 judges what there is: the lock."""
    r = readings_from_recording(read_recording(REC))
    assert REGISTRY["G14"].judge(r, Config()).status.value == "ok"
    assert REGISTRY["G4"].judge(r, Config()).summary.startswith("clocks set by hand: SM clock held at 600 MHz")
