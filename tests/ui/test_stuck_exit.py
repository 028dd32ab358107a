"""SIGHUP (a tmux pane closed) or SIGTERM ends the dashboard even when its orderly exit is stuck:
dashboards whose terminal was gone were found alive under PID 1 after the test runs, one spinning
at 77% of a core."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from sparktui.core.config import Config
from sparktui.ui import app as app_module
from sparktui.ui.app import SparkApp
from tests.ui.test_dashboard import StillSource


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM])
async def test_a_stuck_exit_after_a_signal_still_ends_the_process(monkeypatch, sig):
    ended: list[int] = []
    monkeypatch.setattr(app_module, "HARD_EXIT_AFTER_S", 0.3)
    monkeypatch.setattr(app_module, "hard_exit", ended.append)
    app = SparkApp(Config(), source=StillSource(), auto_checks=False, keep_session=False)
    async with app.run_test(size=(80, 24)) as pilot:
        app.exit = lambda *a, **k: None  # the orderly exit never happens (a terminal that is gone)
        os.kill(os.getpid(), sig)
        for _ in range(40):
            if ended:
                break
            await asyncio.sleep(0.05)
        assert ended == [128 + sig]
        await pilot.pause(0)
    for s in (signal.SIGHUP, signal.SIGTERM):  # the handlers belonged to that app's loop
        signal.signal(s, signal.SIG_DFL)


async def test_a_verdict_judged_while_the_app_closes_is_kept_not_raised():
    """A replay's last judgement (or a check's result) can land after the screens are gone: the
    verdict is kept, and asking which screen shows it must not raise (ScreenStackError ended a
    test run on the lent H100: tests/ui/test_guard_dashboard.py under a 12-worker soak)."""
    import time

    from sparktui.core.verdict import Status, Verdict

    app = SparkApp(Config(), source=StillSource(), auto_checks=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
    assert not app.screen_stack
    app._set_verdict(Verdict("G3", Status.WARN, "pool low"), time.monotonic())
    assert app.board["G3"].verdict.summary == "pool low"
