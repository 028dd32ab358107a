"""G14 in a replay: a recording written as the dashboard and `record` write it (samples, the run's
progress as delta "readings" lines every 30 s) holds an hour of a run that slows while the GPU
throttles. `check --replay` and the dashboard, once the replay has ended, judge the whole run and
say the same: the slowdown, when, and the clock events and clock drop seen in the same minutes.

The numbers are GB10's (docs/reference/FACTS.md): ~2405 MHz SM clock under load, ~80 W, 83-85 °C;
a SW thermal slowdown holding the clock near 1500 MHz is what G4 reads from the counters.
"""

from __future__ import annotations

import json
import time

import pytest

from sparktui.cli.main import main
from sparktui.core.readings import Reading
from sparktui.core.recording import RecordingWriter, header

T0 = 1_733_200_000.0  # 2024-12-03 04:26:40 UTC
HOT_FROM, HOT_TO = T0 + 1800, T0 + 2400  # the throttled ten minutes: half an hour in
GIB = 1024 ** 3


def _gpu(t: float, thermal_ns: int) -> dict:
    hot = HOT_FROM <= t <= HOT_TO
    return {"index": 0, "temp_c": 86 if hot else 81, "power_w": 62.0 if hot else 80.1, "power_limit_w": None,
            "sm_mhz": 1500 if hot else 2405, "gr_mhz": 1500 if hot else 2405, "mem_mhz": None, "util_gpu": 97,
            "util_mem": 0, "reasons_mask": 32 if hot else 0, "reasons": ["sw_thermal_slowdown"] if hot else [],
            "sw_power_cap_ns": 0, "sync_boost_ns": 0, "sw_thermal_ns": thermal_ns, "hw_thermal_ns": 0,
            "hw_power_brake_ns": 0, "mem_used": None, "mem_total": None, "errors": {}}


def _mem() -> dict:
    return {"MemTotal": 127_611_700 * 1024, "MemFree": 90 * GIB, "MemAvailable": 100 * GIB, "Buffers": 0,
            "Cached": 8 * GIB, "SReclaimable": GIB, "Shmem": 0, "SwapTotal": 16 * GIB, "SwapFree": 16 * GIB}


def _run_line(points: list[dict], t: float, seen: int, alive: bool = True) -> dict:
    data = {"found": True, "why": None, "pids": [4101, 4102], "command": "torchrun --nproc_per_node 1 train.py",
            "alive": alive, "started_at": T0 - 60, "log": {"kind": "fd", "path": "/home/me/runs/train.log",
                                                           "pane": None, "error": None, "size": None, "mtime": None},
            "progress": points, "first": None, "points_seen": seen, "events": [], "error": None,
            "finished": None, "lines_read": seen, "cut_lines": 0, "formats": {"tqdm": seen},
            "last_line_t": t, "read_at": t}
    return {"run": Reading("run", data, source="/home/me/runs/train.log", started_at=t).to_dict()}


def write_recording(path) -> None:
    """An hour sampled every 5 s; a step a second, two steps every five seconds while throttled."""
    w = RecordingWriter(str(path), header(interval_s=5.0, host={"hostname": "spark-1"}, static={}, version="test",
                                          started_at=T0))
    thermal_ns, step, pending = 0, 0, []
    for i in range(0, 721):
        t = T0 + 5 * i
        hot = HOT_FROM <= t <= HOT_TO
        if hot:
            thermal_ns += 4_500_000_000  # 4.5 of every 5 s held down
        w.sample({"t": t, "gpus": [_gpu(t, thermal_ns)], "mem": _mem()})
        step += 2 if hot else 5
        pending.append({"t": t, "step": step, "total": 20000, "epoch": None, "rate": None, "rate_unit": None,
                        "step_s": None, "elapsed_s": None, "loss": 2.0, "grad_norm": None, "format": "tqdm"})
        if i % 6 == 5:  # every 30 s: the progress seen since the last line (live/run.py RunWatch.recorded)
            w.readings(_run_line(pending, t, i + 1), t)  # the counts are the whole run's, as RunLog's
            pending = []
    w.readings(_run_line(pending, T0 + 3600, 721), T0 + 3600)
    w.close()


@pytest.fixture
def recording(tmp_path):
    path = tmp_path / "run.jsonl"
    write_recording(path)
    return path


def test_check_replay_judges_the_whole_run_and_names_the_throttle(recording, capsys):
    main(["check", "--replay", str(recording), "G4", "G14", "--json"])
    checks = {c["id"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    g14 = checks["G14"]
    assert g14["status"] == "warn", g14
    s = g14["summary"]
    assert s.startswith("slowdown:") and "[the whole recorded run]" in s, s
    assert "05:0" in s  # when: the throttled minutes, 04:56:40 to 05:06:40 UTC
    assert "SW thermal slowdown" in s and "2405 → 1500 MHz" in s, s
    assert checks["G4"]["status"] in ("warn", "fail")  # G4 saw the same minutes
    evidence = {e["what"]: e["value"] for e in g14["evidence"]}
    assert evidence["progress lines"].startswith("721 of 721")


def test_a_replay_of_an_older_recording_without_the_run_says_nothing_of_g14(tmp_path, capsys):
    path = tmp_path / "old.jsonl"
    w = RecordingWriter(str(path), header(interval_s=5.0, host={}, static={}, version="test", started_at=T0))
    for i in range(10):
        w.sample({"t": T0 + 5 * i, "gpus": [_gpu(T0, 0)], "mem": _mem()})
    w.close()
    main(["check", "--replay", str(path), "--json"])
    ids = [c["id"] for c in json.loads(capsys.readouterr().out)["checks"]]
    assert "G14" not in ids and {"G3", "G4", "G6"} <= set(ids)


async def test_the_dashboard_ends_a_replay_on_the_same_g14_verdict(recording, capsys):
    from sparktui.ui.app import SparkApp
    from tests.ui.waiting import wait_for

    main(["check", "--replay", str(recording), "G14", "--json"])
    cli = json.loads(capsys.readouterr().out)["checks"][0]
    app = SparkApp(replay=str(recording), speed=None, auto_checks=False, keep_session=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(pilot, lambda: app.replay_settled, timeout=60)
        v = app.board["G14"].verdict
        assert v is not None and v.status.value == cli["status"] and v.summary == cli["summary"]
    assert time.time() > T0
