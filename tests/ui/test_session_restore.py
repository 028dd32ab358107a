"""The dashboard keeps its session and shows it again after a restart (NVML faked as a GB10 at its
boundary; the SIGKILL case runs the real `sparktui` in real tmux)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sys
import time
from pathlib import Path

import pytest

from sparktui.cli import main as cli_main
from sparktui.core.config import Config
from sparktui.core.events import Change
from sparktui.core.recording import header, read_recording
from sparktui.core.session import SessionWriter, session_files, sessions_dir
from sparktui.core.verdict import Status, Verdict
from sparktui.probes import nvml
from sparktui.ui.app import SparkApp
from sparktui.ui.screens import EventsScreen
from sparktui.live.sources import LiveSource
from sparktui.testing import fake_nvml
from tests.ui.test_tmux_e2e import Tmux, sparktui_cmd
from tests.ui.waiting import shows, until, wait_for

DEMO = Path(__file__).resolve().parents[2] / "src" / "sparktui" / "data" / "gb10-demo.jsonl"


@pytest.fixture
def gb10():
    nvml.set_backend(fake_nvml.gb10_loaded())
    yield
    nvml.set_backend(None)


def live_cfg(**session) -> Config:
    return Config().with_overrides(telemetry={"interval_s": 0.05, "processes_every_s": 0.2}, session=session)


async def wait_samples(app, pilot, n: int) -> None:
    await wait_for(pilot, lambda: len(app.source.history) >= n, what=f"{n} samples",
                   state=lambda: len(app.source.history))


def previous_session() -> SessionWriter:
    """An earlier session of this host: the demo's samples and two verdict changes of G4."""
    rec = read_recording(DEMO)
    w = SessionWriter(Config().session, header(interval_s=1.0, host={"hostname": socket.gethostname()},
                                               static=rec.header.get("static"), version="test"), socket.gethostname())
    for s in rec.samples:
        w.sample(s)
    end = rec.samples[-1]["t"]
    w.verdict(end - 60, "G4", None, "ok", "no throttling in the window")
    w.verdict(end, "G4", "ok", "warn", "SW thermal slowdown for 4 min at 86 °C")
    w.close()
    return w


async def test_the_live_dashboard_keeps_samples_verdict_changes_and_events(gb10):
    app = SparkApp(live_cfg(), auto_checks=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_samples(app, pilot, 5)
        app.judge_telemetry()
        await pilot.press("p")
        await pilot.press("p")
        path = app.source.session.path
    rec = read_recording(path)
    assert rec.problems == [] and len(rec.samples) >= 5 and rec.header["host"]["hostname"] == socket.gethostname()
    assert {"G3", "G4"} <= {v["id"] for v in rec.verdicts}
    assert [e["text"] for e in rec.events] == ["sampling paused", "sampling resumed"]


def test_each_checks_first_verdict_is_kept_then_only_its_changes(gb10):
    src = LiveSource(live_cfg(), lambda s: None, lambda p: None)
    src.start()
    try:
        warn = Verdict("G4", Status.WARN, "hot")
        src.keep_verdict(warn, 1.0, None)  # unchanged from a restored session's warn: still this file's first
        assert src.session_ready.wait(5)  # a verdict from before the session opened waited for it
        src.keep_verdict(warn, 2.0, None)
        fail = Verdict("G4", Status.FAIL, "power-delivery fault")
        src.keep_verdict(fail, 3.0, Change(3.0, "G4", Status.WARN, Status.FAIL, fail.summary))
    finally:
        src.stop()
    kept = [(v["t"], v["old"], v["status"]) for v in read_recording(src.session.path).verdicts]
    assert kept == [(1.0, "warn", "warn"), (3.0, "warn", "fail")]


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_a_restart_shows_the_previous_history_and_its_events(gb10, size):
    before = previous_session()
    n_before = len(read_recording(before.path).samples)
    app = SparkApp(live_cfg(), auto_checks=False)
    async with app.run_test(size=size) as pilot:
        await wait_samples(app, pilot, n_before + 3)
        assert app.source.restored.session == before.path.stem
        times = app.source.history.values("t")
        temps = app.source.history.values("g0.temp_c")
        gap = n_before  # the restored samples, then the empty one that marks the gap, then live ones
        assert times[gap - 1] == read_recording(DEMO).samples[-1]["t"] and temps[gap] is None
        assert times[gap + 1] >= app.source.live_since and temps[gap + 1] == 72
        assert "got worse" not in str(app.query_one("#header").render())  # old news is not announced
        await pilot.press("e")
        await shows(pilot, EventsScreen)
        table = app.screen.query_one("#events-table")
        rows = [" ".join(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]
        assert "not watching" in rows[0] and before.path.stem[:16] in rows[0]
        assert "warn" in rows[1] and "G4" in rows[1]
        await pilot.press("escape")
        app.judge_telemetry()  # this run's first verdicts: kept even where the status did not change
    newest = session_files()[0]
    assert newest != before.path
    kept = read_recording(newest)
    assert kept.events[0]["text"] == f"continues after session {before.path.stem}"
    assert {"G3", "G4"} <= {v["id"] for v in kept.verdicts}


async def test_a_session_older_than_restore_within_min_is_not_restored(gb10):
    before = previous_session()
    old = time.time() - 2 * 3600
    os.utime(before.path, (old, old))
    app = SparkApp(live_cfg(restore_within_min=60.0), auto_checks=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_samples(app, pilot, 2)
        assert app.source.restored is None and len(app.events) == 0


async def test_an_unwritable_state_folder_is_a_notification_and_the_dashboard_keeps_running(gb10):
    sessions_dir().parent.mkdir(parents=True, exist_ok=True)
    sessions_dir().write_text("a file where the sessions folder should be\n")
    app = SparkApp(live_cfg(), auto_checks=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_samples(app, pilot, 5)  # still watching
        assert app.source.session is None
        assert any(n.title == "session" and "session not kept" in n.message for n in app.said)


async def test_a_mangled_previous_session_is_named_and_a_new_one_is_kept(gb10):
    before = previous_session()
    before.path.write_text("someone's notes, not a recording\n")
    app = SparkApp(live_cfg(), auto_checks=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_samples(app, pilot, 3)
        assert app.source.restored is None and app.source.session is not None
        assert any(n.title == "session" and "previous session not restored" in n.message and before.path.name in n.message
                   for n in app.said)
    assert before.path.read_text() == "someone's notes, not a recording\n"
    assert len(read_recording(session_files()[0]).samples) >= 3


async def test_no_session_and_keep_false_write_nothing(gb10, monkeypatch):
    for app in (SparkApp(live_cfg(), auto_checks=False, keep_session=False),
                SparkApp(live_cfg(keep=False), auto_checks=False)):
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_samples(app, pilot, 3)
    assert not sessions_dir().exists()
    seen = {}
    monkeypatch.setattr("sparktui.ui.app.run_dashboard", lambda cfg, **kw: seen.update(kw) or 0)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    assert cli_main.main(["--no-session"]) == 0 and seen["keep_session"] is False


def children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def start_dashboard(tmux: Tmux, tmp_path: Path) -> None:
    """The real `sparktui` in a pane that stays after it exits, so a crash's traceback is on the
    screen the failure message shows."""
    tmux.start(sparktui_cmd(tmp_path), width=100, height=30)
    tmux.run("set-option", "-t", tmux.name, "remain-on-exit", "on")
    tmux.wait_for("G10")




@pytest.mark.slow
def test_sigkill_of_a_real_dashboard_leaves_whole_lines_and_the_next_one_restores_it(tmp_path, monkeypatch):
    assert shutil.which("tmux"), "tmux is needed for this test (apt-get install tmux)"
    # the real process, with NVML faked as a GB10 at its boundary (a sitecustomize)
    monkeypatch.setenv("PYTHONPATH", fake_nvml.subprocess_env(tmp_path, "gb10_loaded()")["PYTHONPATH"])
    conf = Path(os.environ["XDG_CONFIG_HOME"]) / "sparktui" / "config.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text("[telemetry]\ninterval_s = 0.05\nprocesses_every_s = 0.5\n")
    first = Tmux(tmp_path)
    try:
        start_dashboard(first, tmp_path)
        until(lambda: (files := session_files()) and files[0].read_bytes().count(b'{"type":"sample"') >= 40,
              what="40 samples kept in the session file")
        shell = int(first.run("display-message", "-p", "-t", first.name, "#{pane_pid}").strip())
        (pid,) = children(shell)
        os.kill(pid, signal.SIGKILL)
        until(lambda: (tmp_path / "exit.txt").exists(), what="the pane's exit status")
        assert (tmp_path / "exit.txt").read_text().strip() == "EXITED 137"
    finally:
        first.kill()
    (killed,) = session_files()
    raw = killed.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.decode().splitlines()
    assert all(isinstance(json.loads(line), dict) for line in lines)
    rec = read_recording(killed)
    assert rec.problems == [] and not rec.torn_tail and len(rec.samples) >= 40
    assert rec.samples[-1]["gpus"][0]["temp_c"] == 72  # the fake GB10 it watched

    second = Tmux(tmp_path)
    try:
        start_dashboard(second, tmp_path)
        second.keys("e")
        screen = second.wait_for("not watching")
        assert killed.stem[:16] in screen
        second.keys("Escape")
        second.wait_for("Processes (G6)")
        time.sleep(0.3)  # the terminal's timing, not the app's: a key right after Escape would read as Alt+key
        second.keys("q")
        until(lambda: "EXITED 0" in (tmp_path / "exit.txt").read_text(), what="the second dashboard's exit 0",
              timeout=15)
    finally:
        second.kill()
    assert len(session_files()) == 2 and read_recording(session_files()[0]).samples


async def test_the_events_view_follows_the_log_while_open(gb10):
    """Opened before the restored session's rows arrive (a real dashboard opens its session in a
    thread), the view shows them when they do, not "no changes yet" until reopened; the cursor
    stays on the row it was on. The dashboard is live here: rows of the machine's own (a training
    process another test started, found by the run watch; a kernel log line) may come between, so
    the rows are found by their words, newest first (a 12-worker soak on the lent H100 saw them)."""
    app = SparkApp(live_cfg(), auto_checks=False, keep_session=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_samples(app, pilot, 2)
        await pilot.press("e")
        await shows(pilot, EventsScreen)
        table = app.screen.query_one("#events-table")

        def rows() -> list[str]:
            return [" ".join(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]

        def at(words: str) -> int:
            return next((i for i, r in enumerate(rows()) if words in r), -1)

        if not len(app.events):
            assert "no changes yet" in rows()[0]
        app.events.observe(Verdict("G4", Status.WARN, "clocks capped"), time.time())
        await wait_for(pilot, lambda: at("clocks capped") >= 0, what="the new change on the open events view",
                       state=rows)
        app.events.observe(Verdict("G3", Status.FAIL, "pool exhausted"), time.time() + 1)
        await wait_for(pilot, lambda: at("pool exhausted") >= 0, what="the second change", state=rows)
        assert at("pool exhausted") < at("clocks capped")  # newest first
        assert not any("no changes yet" in r for r in rows())
        table.move_cursor(row=at("clocks capped"))
        app.events.observe(Verdict("G6", Status.WARN, "two jobs"), time.time() + 2)
        await wait_for(pilot, lambda: at("two jobs") >= 0, what="the third change", state=rows)
        assert "clocks capped" in rows()[table.cursor_row]
