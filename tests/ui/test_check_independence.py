"""No check waits behind another's slow probe, and c stops the G10 scan (issue 13 item 7).

The slow G10 scan is injected at the probe boundary (``tpscan.read`` waits for the test before it
scans for real), or is a real scan of big files in tmp_path; every other probe runs as it does
live (the training interpreter is a path that does not exist, so that probe fails at once).
"""

from __future__ import annotations

import threading
import time

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.probes import tpscan
from sparktui.ui.app import SparkApp
from tests.ui.test_dashboard import StillSource
from tests.ui.waiting import settled, wait_for

SERVE = "#!/bin/bash\nvllm serve m --tensor-parallel-size @2\n".replace("@", "")


def live_app(tmp_path, **scan) -> SparkApp:
    cfg = Config().with_overrides(target={"python": str(tmp_path / "no-python")},
                                  scan={"paths": [str(tmp_path / "proj")], **scan})
    return SparkApp(cfg, source=StillSource(), auto_checks=False)



async def test_g8_verdict_arrives_while_a_slow_g10_scan_still_runs_and_is_completed_after(tmp_path, monkeypatch):
    """R: G8 (which reads the scan only for suggestions) shows its verdict while the scan is held;
    once the scan is in, G10 is judged and G8 is judged again with the launch script's suggestion."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "serve.sh").write_text(SERVE)
    started, release = threading.Event(), threading.Event()
    real_read = tpscan.read

    def slow_read(cfg, cancel=None):
        started.set()
        release.wait(20)
        return real_read(cfg, cancel)

    monkeypatch.setattr(tpscan, "read", slow_read)
    for size in ((80, 24), (200, 60)):
        started.clear()
        release.clear()
        await _rerun_all_with_the_scan_held(live_app(tmp_path), size, started, release)


async def _rerun_all_with_the_scan_held(app: SparkApp, size: tuple[int, int], started, release) -> None:
    async with app.run_test(size=size) as pilot:
        await pilot.press("R")
        await wait_for(pilot, lambda: app.board["G8"].verdict is not None, what="G8's verdict while the scan is held")
        assert started.is_set() and not release.is_set()
        assert app.board["G10"].running_since is not None and app.board["G10"].verdict is None
        g8_first = app.board["G8"].verdict
        assert g8_first.status is Status.SKIP and "launch scripts suggest" not in g8_first.summary
        assert app.board["G1"].verdict is not None  # the failed interpreter probe is not held either
        release.set()
        await wait_for(pilot, lambda: app.board["G10"].verdict is not None, what="G10's verdict once the scan is in")
        await wait_for(pilot, lambda: "launch scripts suggest" in app.board["G8"].verdict.summary,
                       what="G8 judged again with the scan", state=lambda: app.board["G8"].verdict)
        await settled(pilot)
        assert app.board["G10"].verdict.status is Status.OK  # serving with TP=2
        assert "launch scripts suggest: --playbook vllm" in app.board["G8"].verdict.summary


async def test_c_stops_a_real_g10_scan_within_a_second_and_says_cancelled(tmp_path, monkeypatch):
    """Big launch configs (a setting in each, no context words) keep the scan busy for many
    seconds; c ends it within one, and G10 says it was cancelled. The second is timed from the key
    to the scan's return (the real scan, only timed), not to when the test next looks."""
    ran: dict[str, float] = {}
    real_read = tpscan.read

    def timed_read(cfg, cancel=None):
        ran["start"] = time.monotonic()
        try:
            return real_read(cfg, cancel)
        finally:
            ran["end"] = time.monotonic()

    monkeypatch.setattr(tpscan, "read", timed_read)
    proj = tmp_path / "proj"
    filler = "the run log says nothing about the job here\n" * 24000  # ~1 MB a file
    for i in range(30):
        d = proj / f"d{i % 5}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"c{i}.yaml").write_text("tp_size: 2\n" + filler)
    app = live_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.run_checks(["G10"])
        await wait_for(pilot, lambda: "start" in ran and time.monotonic() - ran["start"] >= 0.5,
                       what="the scan half a second in", state=lambda: (ran, app.board["G10"].verdict))
        assert "end" not in ran, "the scan ended before the test could cancel it"
        t0 = time.monotonic()
        await pilot.press("c")
        await wait_for(pilot, lambda: app.board["G10"].running_since is None, timeout=5, what="G10 no longer running")
        await app.workers.wait_for_complete()
        took = ran["end"] - t0
        assert took < 1.0, f"the scan ran {took:.2f} s after c"
        v = app.board["G10"].verdict
        assert v.status is Status.UNKNOWN and "cancelled" in v.summary
