"""The dashboard gives freed heap back: a trim after the start-up burst and each minute."""

import ctypes

from sparktui.core.config import Config
from sparktui.ui import malloc
from sparktui.ui.app import SparkApp
from tests.ui.test_dashboard import StillSource


def test_give_back_freed_runs_malloc_trim_on_glibc():
    assert ctypes.CDLL(None).malloc_trim  # this CI is glibc: the trim must really run here
    assert malloc.give_back_freed() is True


async def test_the_dashboard_trims_ten_seconds_in_and_then_each_minute(monkeypatch):
    calls = []
    monkeypatch.setattr(malloc, "give_back_freed", lambda: calls.append(1) or True)
    app = SparkApp(Config(), source=StillSource(), auto_checks=False)
    async with app.run_test(size=(80, 24)):
        app.tick_n = 0
        for _ in range(130):
            app.tick()
            if app.tick_n in (9, 10, 69, 70):
                assert len(calls) == {9: 0, 10: 1, 69: 1, 70: 2}[app.tick_n], app.tick_n
    assert len(calls) == 3  # ticks 10, 70 and 130
