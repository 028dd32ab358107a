"""The dashboard ends a replay on the verdicts `check --replay` gives for the same file (issue 12,
class 11), and a recording made by `sparktui record` carries what every check needs, so
`check --replay` says what the live checks said during the run (Done-when).

The recordings here hover at each threshold, where a trailing window or the last sample would
disagree with a review of the whole file: G3 at its floor and at the page-cache rule, G4 at its
temperature, power, utilization and clock thresholds with a throttling stretch in the middle of the
run, G6 at the server-cap share. Figures are GB10's (FACTS.md, FIELD-FACTS.md).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from sparktui.cli.main import main
from sparktui.core.config import Config
from sparktui.core.recording import RecordingWriter, header
from sparktui.testing import fake_nvml
from tests.ui.waiting import settled, wait_for

DEMO = Path(__file__).resolve().parents[1] / "src" / "sparktui" / "data" / "gb10-demo.jsonl"
GIB = 1024 ** 3
T0 = 1_764_000_000.0
TOTAL = int(121.7 * GIB)
STATIC = {"driver_version": {"value": "580.95.05"}, "cuda_driver_version": {"value": "13.0"},
          "devices": [{"index": 0, "name": {"value": "NVIDIA GB10"}, "compute_capability": {"value": [12, 1]},
                       "memory": {"error": "NOT_SUPPORTED (Not Supported)"}}]}
NS = "NOT_SUPPORTED (Not Supported)"
SW_THERMAL = 0x20


def mem(avail_gib: float, free_gib: float | None = None, cached_gib: float = 4.0) -> dict:
    free = free_gib if free_gib is not None else avail_gib - 3.0
    return {"MemTotal": TOTAL, "MemFree": int(free * GIB), "MemAvailable": int(avail_gib * GIB),
            "Buffers": int(0.3 * GIB), "Cached": int(cached_gib * GIB), "SReclaimable": int(1.0 * GIB),
            "KReclaimable": int(1.2 * GIB), "Shmem": int(0.8 * GIB), "AnonPages": int(30 * GIB), "Unevictable": 0,
            "Mlocked": 0, "SwapTotal": 0, "SwapFree": 0, "SwapCached": 0, "HugePages_Total": 0, "HugePages_Free": 0,
            "Hugepagesize": 2048 * 1024, "CmaTotal": 0, "CmaFree": 0, "Dirty": 0, "Mapped": GIB}


def gpu(temp: float, power: float, sm: int, util: int, reasons: int = 0, thermal_ns: int = 0) -> dict:
    return {"index": 0, "temp_c": int(round(temp)), "power_w": round(power, 2), "power_limit_w": None,
            "sm_mhz": sm, "gr_mhz": sm, "mem_mhz": None, "util_gpu": util, "util_mem": 0, "reasons_mask": reasons,
            "reasons": ["sw_thermal_slowdown"] if reasons & SW_THERMAL else [], "thermal_viol_ns": thermal_ns,
            "power_viol_ns": 0, "mem_used": None, "mem_total": None,
            "errors": {"power_limit_w": NS, "mem_mhz": NS, "mem_used": NS, "mem_total": NS}}


def server_row(pid: int, fraction: float, gpu_gib: float) -> dict:
    cap = {"state": "set", "fraction": fraction, "source": f"--gpu-memory-utilization {fraction:g}", "detail": ""}
    return {"pid": pid, "ppid": 1, "user": "spark", "kind": "server", "server": "vllm", "name": "VLLM::EngineCore",
            "process_name": "VLLM::EngineCor", "command": f"vllm serve Qwen/Qwen3-8B --gpu-memory-utilization {fraction:g}",
            "gpu_mem_bytes": int(gpu_gib * GIB), "on_gpu": True, "gpu_list": "compute", "rss_bytes": int(3.4 * GIB),
            "age_s": 600.0, "cap": cap, "env": {}, "group": pid}


def trainer_row(pid: int, gpu_gib: float) -> dict:
    return {"pid": pid, "ppid": 1, "user": "spark", "kind": "training", "server": None, "name": "train_lora.py",
            "process_name": "train_lora.py", "command": "python -u train_lora.py", "gpu_mem_bytes": int(gpu_gib * GIB),
            "on_gpu": True, "gpu_list": "compute", "rss_bytes": int(6.8 * GIB), "age_s": 900.0, "cap": None,
            "group": pid}


def snapshot(t: float, rows: list[dict]) -> dict:
    return {"rows": rows, "nvml": {"ok": True, "error": None, "count": len(rows)},
            "container": {"inside": False, "markers": [], "cgroup_words": [], "pid1": "systemd"},
            "skipped": {"vanished": 0, "denied": 0}, "scanned": 400, "t": t}


def write_recording(path: Path, n: int, interval: float, sample_at, procs_at=None, every: int = 6) -> Path:
    head = header(interval_s=interval, host={"hostname": "spark-hover"}, static=STATIC, version="test",
                  started_at=T0, processes_every_s=interval * every if procs_at else None)
    with RecordingWriter(path, head) as w:
        for i in range(n):
            t = T0 + i * interval
            w.sample({"t": t, **sample_at(i, t)})
            if procs_at is not None and i % every == 0:
                w.processes(snapshot(t, procs_at(i, t)))
    return path


def hover_g3_floor(tmp: Path) -> Path:
    """MemAvailable wobbling 7.8-8.3 GiB around the 8 GiB floor, the last sample above it."""
    wobble = [8.3, 8.1, 7.8, 8.2, 8.0, 7.9, 8.3, 8.2]
    idle = gpu(45, 6.0, 208, 0, 0x1)
    return write_recording(tmp / "g3-floor.jsonl", 240, 1.0, lambda i, t: {"gpus": [idle], "mem": mem(wobble[i % 8])})


def hover_g3_cache(tmp: Path) -> Path:
    """60 GiB of reclaimable page cache (the unsloth #10704 shape), MemFree hovering at the floor."""
    frees = [8.2, 7.9, 8.1, 7.8, 8.4]
    idle = gpu(45, 6.0, 208, 0, 0x1)
    return write_recording(tmp / "g3-cache.jsonl", 240, 1.0,
                           lambda i, t: {"gpus": [idle], "mem": mem(70.0, frees[i % 5], cached_gib=60.0)})


def hover_g4(tmp: Path) -> Path:
    """25 min under load at 5 s: temperature 84-86 °C (hot: 85), power around 105 W (0.75 x 140 W),
    utilization 48-52 % (load: 50), SM clock near 1000 MHz (fault clock) for a while, and SW thermal
    slowdown growing only in the middle of the run: the last 10 minutes alone look clean."""
    rnd = random.Random(12)
    state = {"ns": 0}

    def at(i: int, t: float) -> dict:
        minute = i * 5 / 60
        throttling = 5 <= minute < 14
        reasons = SW_THERMAL if throttling and rnd.random() < 0.7 else 0
        if reasons:
            state["ns"] += int(rnd.uniform(2.0, 5.0) * 1e9)
        sm = rnd.choice((990, 1010)) if 3 <= minute < 5 else (2000 if reasons else 2405)
        g = gpu(85 + rnd.uniform(-1.2, 1.2), 105 + rnd.uniform(-2, 2), sm, rnd.randint(48, 52), reasons, state["ns"])
        return {"gpus": [g], "mem": mem(60.0)}

    return write_recording(tmp / "g4-hover.jsonl", 300, 5.0, at)


def hover_g6(tmp: Path) -> Path:
    """A vLLM server at the server-cap share (0.51, then 0.5: the last snapshot at it) beside a training
    job; MemAvailable fine."""
    def procs(i: int, t: float) -> list[dict]:
        fraction = 0.51 if (i // 6) % 2 == 0 else 0.5
        return [server_row(2290, fraction, 56.8), trainer_row(3325, 15.2)]

    return write_recording(tmp / "g6-hover.jsonl", 240, 1.0,
                           lambda i, t: {"gpus": [gpu(70, 80.0, 2405, 97)], "mem": mem(30.0)}, procs)


def check_replay(path: Path, capsys) -> dict[str, tuple[str, str]]:
    main(["check", "--replay", str(path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    return {v["id"]: (v["status"], v["summary"]) for v in doc["checks"]}


async def dashboard_end(path: Path, ids: list[str]) -> dict[str, tuple[str, str]]:
    """The verdicts the dashboard shows once it has replayed ``path`` (as fast as it can)."""
    from sparktui.ui.app import SparkApp

    app = SparkApp(Config(), replay=str(path), speed=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.replay_settled and all(app.board[i].verdict is not None for i in ids)
                       and not app.board.running(), timeout=30, what="the replay settled and every check judged",
                       state=lambda: (app.replay_settled, [i for i in ids if app.board[i].verdict is None]))
        await settled(pilot)
        return {i: (app.board[i].verdict.status.value, app.board[i].verdict.summary)
                for i in ids if app.board[i].verdict is not None}


TELEMETRY = ("G3", "G4", "G6")


def assert_agree(cli: dict, dash: dict) -> None:
    assert set(dash) == set(cli), (sorted(cli), sorted(dash))
    for gid, (status, summary) in cli.items():
        assert dash[gid][0] == status, (gid, cli[gid], dash[gid])
        if gid in TELEMETRY:
            assert dash[gid][1] == summary, (gid, cli[gid], dash[gid])


async def test_the_shipped_recording_ends_on_the_same_verdicts(capsys):
    cli = check_replay(DEMO, capsys)
    assert len(cli) == 11  # the demo carries no kernel-log, link or driver-flavour reading: G11-G13 are not judged; its run is (G14)
    assert_agree(cli, await dashboard_end(DEMO, list(cli)))


@pytest.mark.parametrize("make", [hover_g3_floor, hover_g3_cache, hover_g4, hover_g6],
                         ids=["g3-floor", "g3-cache", "g4-window", "g6-cap"])
async def test_recordings_hovering_at_a_threshold_end_on_the_same_verdicts(tmp_path, capsys, make):
    path = make(tmp_path)
    cli = check_replay(path, capsys)
    assert list(cli) == list(TELEMETRY)
    assert_agree(cli, await dashboard_end(path, list(cli)))


def test_hovering_at_the_g3_floor_is_judged_at_its_lowest_with_when(tmp_path, capsys):
    cli = check_replay(hover_g3_floor(tmp_path), capsys)
    status, summary = cli["G3"]
    # the last sample (8.2 GiB) alone is over the floor: the review sees the 7.8 GiB moments
    assert status == "warn" and summary.startswith("lowest MemAvailable 7.8 GiB of 121.7 GiB at 16:00:02 UTC (+00:00:02)")


def test_the_page_cache_rule_is_reviewed_at_its_lowest_memfree(tmp_path, capsys):
    status, summary = check_replay(hover_g3_cache(tmp_path), capsys)["G3"]
    # MemAvailable never came near the floor; MemFree (what CUDA sees) fell to 7.8 GiB at +00:00:03
    assert status == "warn" and summary.startswith("reclaimable page cache holds 60.7 GiB (50% of memory)")  # 0.3 + 60 - 0.8 + 1.2
    assert "sees only MemFree 7.8 GiB at 16:00:03 UTC (+00:00:03) (MemAvailable 70.0 GiB)" in summary


def test_a_recording_made_by_record_replays_to_the_live_verdicts(tmp_path, capsys):
    """`sparktui record` with a GB10 behind NVML, then `check --replay`: every check the live
    `check` judged from its own probes gets the same verdict from the file."""
    out = tmp_path / "run.jsonl"
    py = ["--python", sys.executable]
    with fake_nvml.installed(fake_nvml.gb10_loaded()):
        rc = main(["record", "-o", str(out), "--interval", "0.05", "--duration", "0.3", "--processes-every", "0.1", *py])
        assert rc == 0
        err = capsys.readouterr().err
        assert "check readings" in err and "not taken" not in err, err
        main(["check", "--json", *py])
        live = {v["id"]: v for v in json.loads(capsys.readouterr().out)["checks"]}
    main(["check", "--replay", str(out), "--json"])
    replayed = {v["id"]: v for v in json.loads(capsys.readouterr().out)["checks"]}
    assert list(replayed) == [f"G{i}" for i in range(1, 15)]
    # checks judged from probe readings (not the samples): the same verdict, the same words
    for gid in ("G1", "G2", "G5", "G7", "G8", "G9", "G10"):
        assert replayed[gid]["status"] == live[gid]["status"], (gid, live[gid]["summary"], replayed[gid]["summary"])
        assert replayed[gid]["summary"] == live[gid]["summary"], gid
