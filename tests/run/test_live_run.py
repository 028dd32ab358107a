"""G14 live, end to end: a stand-in run (a real process named like a training script, its output
redirected to a file) writes real-format lines, stalls, prints a non-finite loss, then dies with a
CUDA OOM traceback. The run watch (live/run.py) finds it from a real process scan, follows its log,
and G14 is judged at each stage as the dashboard judges it.

The lines are real public text from the corpus (tests/data/run_logs/, sources in its manifests):
the tqdm updates of a-tqdm-caret-m-one-line (its ``^M`` are the carriage returns tqdm writes), the
``avr_loss=nan`` bar of a-tqdm-avr-loss-nan, and the traceback of a-traceback-cuda-oom.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import psutil
import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Status
from sparktui.live.run import RunWatch
from sparktui.probes import processes
from sparktui.runner import judge

CORPUS = Path(__file__).resolve().parents[1] / "data" / "run_logs"

STANDIN = r'''
import sys, time
from pathlib import Path
here = Path(sys.argv[1])
updates = (here / "updates.txt").read_text().split("\n")
for u in updates:                      # tqdm writes "\r" + the bar, no newline, to a file
    sys.stderr.write("\r" + u)
    sys.stderr.flush()
    time.sleep(0.03)
sys.stderr.write("\n")
sys.stderr.flush()
while not (here / "go-nan").exists():  # the stall
    time.sleep(0.02)
sys.stderr.write((here / "nan.txt").read_text())
sys.stderr.flush()
while not (here / "go-die").exists():
    time.sleep(0.02)
sys.stderr.write((here / "oom.txt").read_text())
sys.stderr.flush()
sys.exit(1)
'''


def _until(cond, timeout=10.0, every=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(every)
    return cond()


def _g14(watch: RunWatch, cfg: Config):
    from sparktui.gotchas import REGISTRY

    return judge(REGISTRY["G14"], Readings({"run": watch.reading()}), cfg)


@pytest.fixture
def standin(tmp_path):
    updates = (CORPUS / "a-tqdm-caret-m-one-line.log").read_text().strip().split("^M")
    (tmp_path / "updates.txt").write_text("\n".join(u for u in updates if u.strip()))
    nan = next(ln for ln in (CORPUS / "a-tqdm-avr-loss-nan.log").read_text().splitlines() if "avr_loss=nan" in ln)
    (tmp_path / "nan.txt").write_text(nan + "\n")
    (tmp_path / "oom.txt").write_text((CORPUS / "a-traceback-cuda-oom.log").read_text())
    script = tmp_path / "train.py"  # named as a training script: G6's classifier calls it training
    script.write_text(STANDIN)
    log = tmp_path / "train.log"
    # started by a shell that exits at once: the run is not a child of this process (sparktui's own
    # children are never taken for the user's workload), as a real run started in another pane is not
    sh = subprocess.run(["sh", "-c", f'"{sys.executable}" train.py "{tmp_path}" > train.log 2>&1 < /dev/null & echo $!'],
                        cwd=tmp_path, capture_output=True, text=True, check=True)
    proc = psutil.Process(int(sh.stdout.strip()))
    yield proc, tmp_path, log
    if proc.is_running():
        proc.kill()


@pytest.mark.skipif(not Path("/proc/self/fd/1").exists(), reason="needs /proc")
def test_a_run_that_progresses_stalls_goes_nan_and_dies_is_judged_at_each_stage(standin):
    proc, here, log = standin
    cfg = Config()
    cfg = replace(cfg, run=replace(cfg.run, stall_after_s=1.5, tmux=False))
    watch = RunWatch(cfg, pid=proc.pid)  # this stand-in, whatever else trains beside the tests
    watch.start()
    try:
        def scan():
            watch.saw_processes(processes.read(cfg).data)

        # 1. found from a real process scan, its redirected stderr followed: progress, ok
        scan()
        got = _until(lambda: (watch.reading().data.get("progress") or [{}])[-1].get("step") == 84)
        assert got, watch.reading().data
        r = watch.reading().data
        assert r["pids"][0] == proc.pid and r["alive"] is True
        assert r["log"]["kind"] == "fd" and r["log"]["path"] == str(log)
        v = _g14(watch, cfg)
        assert v.status is Status.OK, v
        assert "84" in v.summary and "804" in v.summary

        # 2. no line for longer than stall_after_s while the process lives: a stall
        time.sleep(1.7)
        scan()
        v = _until(lambda: (lambda v: v if v.status is Status.FAIL else None)(_g14(watch, cfg)), timeout=5)
        assert v is not None and "no progress" in v.summary, _g14(watch, cfg)

        # 3. a non-finite loss
        (here / "go-nan").touch()
        assert _until(lambda: any(e.get("kind") == "nonfinite" for e in watch.reading().data.get("events") or []))
        v = _g14(watch, cfg)
        assert v.status is Status.FAIL and "nan" in v.summary.lower(), v

        # 4. the CUDA OOM traceback, the process gone: died, with the error
        (here / "go-die").touch()
        assert _until(lambda: not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE)
        assert _until(lambda: (watch.reading().data.get("error") or {}).get("error") == "cuda_oom")
        scan()
        assert _until(lambda: watch.reading().data.get("alive") is False)
        v = _g14(watch, cfg)
        assert v.status is Status.FAIL and "out of memory" in v.summary.lower(), v
    finally:
        watch.stop()


@pytest.mark.skipif(not Path("/proc/self/fd/1").exists(), reason="needs /proc")
def test_record_follows_the_run_and_check_replay_judges_it(standin, tmp_path, capsys):
    """`sparktui record` beside the stand-in: its progress is written as run lines (at the end here:
    every 30 s in a longer recording), so `check --replay` judges G14 on the run it recorded."""
    import json

    from sparktui.cli.main import main

    proc, here, log = standin
    rec = tmp_path / "rec.jsonl"
    # the log named (as --run-log does): the run is its writer, whatever else trains beside the tests
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[run]\nlog = "{log}"\n')
    assert main(["--config", str(cfg), "record", "-o", str(rec), "--duration", "3", "--interval", "0.5",
                 "--processes-every", "0.5"]) == 0
    lines = [json.loads(ln) for ln in rec.read_text().splitlines()]
    runs = [ln["readings"]["run"]["data"] for ln in lines if ln.get("type") == "readings" and "run" in ln["readings"]]
    assert runs and runs[-1]["pids"][0] == proc.pid and runs[-1]["log"]["path"] == str(log)
    capsys.readouterr()
    main(["--config", str(cfg), "check", "--replay", str(rec), "G14", "--json"])
    g14 = json.loads(capsys.readouterr().out)["checks"][0]
    assert g14["id"] == "G14" and g14["status"] != "skip", g14
    assert "84/804" in g14["summary"] or "84" in json.dumps(g14["evidence"]), g14


def test_the_watch_tells_of_lines_at_most_once_a_second_and_marks_the_rest(tmp_path):
    """A tqdm bar writes ten times a second; each on_change wakes the dashboard's loop, so the watch
    calls it at most once every TELL_EVERY_S and marks what came since for the dashboard's tick."""
    from sparktui.live import run as live_run

    log = tmp_path / "train.log"
    log.write_text("")
    told = []
    watch = RunWatch(Config().with_overrides(run={"log": str(log)}), lambda: told.append(time.monotonic()))
    watch.start()
    try:
        assert _until(lambda: watch.scans == 1)
        told.clear()
        with open(log, "a", buffering=1) as out:
            for i in range(1, 31):  # three seconds of a bar at ten updates a second
                out.write(f"step {i}/300 loss=2.0\n")
                time.sleep(0.1)
        assert _until(lambda: (watch.reading().data.get("progress") or [{}])[-1].get("step") == 30)
        assert 1 <= len(told) <= 3 / live_run.TELL_EVERY_S + 1, told
        assert all(b - a >= live_run.TELL_EVERY_S * 0.99 for a, b in zip(told, told[1:]))
        assert watch.take_changed() is True and watch.take_changed() is False
    finally:
        watch.stop()
