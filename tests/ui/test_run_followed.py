"""The dashboard following a real run's log: a file named with `[run] log` (as `--run-log` does)
that a real process writes, in real tqdm and Trainer lines (tests/data/run_logs/, sources in the
manifests). The run panel fills as lines are written, G14 is judged with the telemetry window, and
the run's end (its CUDA OOM traceback) reaches the checklist."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.ui.app import ProcessesArrived, SparkApp
from tests.ui.test_run_panel import ClockSource, ready, telemetry
from tests.ui.waiting import screen_text, wait_for

CORPUS = Path(__file__).resolve().parents[1] / "data" / "run_logs"

WRITER = r'''
import sys, time
from pathlib import Path
log, here = sys.argv[1], Path(sys.argv[2])
with open(log, "a", buffering=1) as out:
    for line in (here / "progress.txt").read_text().splitlines():
        out.write(line + "\n")
        time.sleep(0.01)
    while not (here / "go").exists():
        time.sleep(0.02)
    out.write((here / "oom.txt").read_text())
'''


async def test_the_panel_and_g14_follow_a_written_log_to_its_cuda_oom(tmp_path):
    lines = (CORPUS / "a-plain-epoch-iter-loss-then-cuda-oom.log").read_text().splitlines()
    head = [ln for ln in lines if "[Train] Epoch" in ln]  # the run's progress lines, then its traceback
    (tmp_path / "progress.txt").write_text("\n".join(head) + "\n")
    (tmp_path / "oom.txt").write_text("\n".join(ln for ln in lines if ln not in head) + "\n")
    log = tmp_path / "train.log"
    log.write_text("")
    cfg = Config().with_overrides(run={"log": str(log)})
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(log), str(tmp_path)], stdin=subprocess.DEVNULL)
    app = SparkApp(cfg, source=ClockSource(telemetry(None)), auto_checks=False, follow_run=True)
    try:
        async with app.run_test(size=(160, 50)) as pilot:
            await ready(app, pilot)
            await wait_for(pilot, lambda: "371/4899" in screen_text(app), what="the run panel at the last step",
                           state=lambda: screen_text(app))
            assert app.run_watch.reading().data["alive"] is True  # the writer has the file open
            (tmp_path / "go").touch()
            writer.wait(10)
            await wait_for(pilot, lambda: (app.run_watch.reading().data.get("error") or {}).get("error") == "cuda_oom",
                           what="the traceback read")
            scan = {"rows": [], "t": time.time(), "nvml": {"ok": True, "error": None, "count": 0}}
            app.post_message(ProcessesArrived(scan))  # a scan: the writer is gone (its file is no longer open)
            await wait_for(pilot, lambda: app.run_watch.reading().data.get("alive") is False, what="the run gone")
            app.judge_telemetry()
            v = await wait_for(pilot, lambda: app.board["G14"].verdict, what="G14 judged")
            assert v.status is Status.FAIL and "CUDA out of memory" in v.summary and "371/4899" in v.summary
    finally:
        if writer.poll() is None:
            writer.kill()
