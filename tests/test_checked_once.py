"""A reading shared by the judges of one window is checked against its shape once (core/readings.py
``checked``): the live dashboard judged G3, G4, G6 and G14 on the same 300-sample telemetry window
every 5 s and checked it once per judge, a tenth of its steady CPU. A misfit is still a misfit, and
another reading (even one equal to it) is checked on its own."""

from __future__ import annotations

from sparktui.core import readings as readings_mod
from sparktui.core.readings import Reading, checked


def _meminfo(total) -> Reading:
    return Reading("meminfo", {"MemTotal": total, "MemAvailable": 2**30}, source="/proc/meminfo")


def test_the_same_reading_is_checked_once(monkeypatch):
    calls = []
    real = readings_mod._misfit
    monkeypatch.setattr(readings_mod, "_misfit", lambda probe, data: calls.append(probe) or real(probe, data))
    r = _meminfo(2**34)
    assert checked(r) is r and checked(r) is r and checked(r) is r
    assert len(calls) == 1
    twin = _meminfo(2**34)  # equal, not the same: checked on its own
    assert checked(twin) is twin and len(calls) == 2


def test_a_misfit_stays_a_misfit_when_asked_again():
    bad = _meminfo("x")
    first, again = checked(bad), checked(bad)
    assert first.data is None and "MemTotal" in (first.error or "")
    assert again is first


def test_what_is_kept_is_bounded():
    for i in range(readings_mod.CHECKED_KEPT * 3):
        checked(_meminfo(2**30 + i))
    assert len(readings_mod._checked) <= readings_mod.CHECKED_KEPT
