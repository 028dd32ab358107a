"""Issue 27 item 3, what was left open: G14's words for a clock lock, and a short window's times.

On the real H100 a `nvidia-smi -lgc` lock showed no clock-event reason at all while the driver booked
the locked time on the SW thermal slowdown and SW power capping counters. G14 named those counters
first, as causes of their own, and the lock last. Now, when the clocks were held by a setting (the SM
clock under load dropped with no slowdown reason active), the lock leads and the counters are said as
what the driver booked meanwhile; with a real slowdown reason active the order and words stay.
A review's slowdown window shorter than SHORT_WINDOW_S prints its ends to the second: a 30 s window
said "from 17:35 UTC to 17:36 UTC".
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g14_run_progress as g14
from tests.gotchas.g14.test_judge import T3, pt, run, samples, steady, tele, verdict
from tests.gotchas.g14.test_real_lock import LOCK_AT, recorded

LOCKED = "clocks were held by a setting: SM clock under load 1365 → 600 MHz (-56%), no clock-event reason active in "


def _cfg(window: float = 30.0) -> Config:
    return replace(Config(), run=replace(Config().run, slow_window_s=window))


def _live(smp) -> str:
    prog, _ = recorded()
    return verdict(run(prog, read_at=LOCK_AT + 60), _cfg(), telemetry=tele(smp, review=False)).summary


# --- the lock leads; the counters are what the driver booked ------------------------------------------

def test_the_lock_leads_and_the_counters_are_booked_by_the_driver():
    _, smp = recorded()
    s = _live(smp)
    assert s.startswith("slowdown: ") and "steps/s over the last 30 s" in s[:60], s
    assert f"while {LOCKED}31 of 31 loaded samples (a lock with `nvidia-smi -lgc`; G4), not heat or power; " \
           "the driver booked that time as SW power capping +" in s, s
    assert s.index("clocks were held by a setting") < s.index("SW power capping +") < s.index("SW thermal slowdown +")
    assert "meanwhile: clocks held by a setting" not in s  # the old clause, after the counters


def test_a_lock_with_no_counter_grown_names_no_booking():
    _, smp = recorded()
    for x in smp:
        x["gpus"][0].update(sw_thermal_ns=0, sw_power_cap_ns=0)
    s = _live(smp)
    assert f"while {LOCKED}31 of 31 loaded samples (a lock with `nvidia-smi -lgc`; G4), not heat or power" in s, s
    assert "booked" not in s and "SW thermal" not in s


def test_a_reason_active_in_some_locked_samples_stays_a_cause_of_its_own():
    """The lock still leads (the clock held with no reason in most samples), but a reason active in some
    is a cause of its own: the counters are not said to be the lock's, nor "not heat or power"."""
    _, smp = recorded()
    hot = [x for x in smp if LOCK_AT + 40 <= x["t"] < LOCK_AT + 45]
    for x in hot:
        x["gpus"][0]["reasons"] = ["sw_thermal_slowdown"]
    s = _live(smp)
    assert f"while {LOCKED}26 of 31 loaded samples (a lock with `nvidia-smi -lgc`; G4); " \
           "clock-event reason sw_thermal_slowdown in 5 of 31 samples; SW power capping +" in s, s
    assert "booked" not in s and "not heat or power" not in s


def test_a_real_thermal_reason_keeps_the_counters_first_and_names_no_lock():
    """Not a lock: the reason active in every loaded sample of the window. Words and order as before."""
    _, smp = recorded()
    for x in smp:
        if x["gpus"][0]["sm_mhz"] == 600:
            x["gpus"][0]["reasons"] = ["sw_thermal_slowdown"]
    s = _live(smp)
    assert re.search(r"\) while SW power capping \+[0-9.]+ s \(\d+% of the time\); SW thermal slowdown \+[0-9.]+ s "
                     r"\(\d+% of the time\); clock-event reason sw_thermal_slowdown in 31 of 31 samples; "
                     r"SM clock under load 1365 → 600 MHz \(-56%\)", s), s
    assert "held by a setting" not in s and "booked" not in s and "nvidia-smi" not in s


def test_two_gpus_each_say_their_own_lock():
    _, smp = recorded()
    for x in smp:
        g = x["gpus"][0]
        x["gpus"] = [dict(g, index=0), dict(g, index=1)]
    s = _live(smp)
    assert f"while GPU 0 {LOCKED}31 of 31" in s and f"; GPU 1 {LOCKED}31 of 31" in s, s
    assert s.count("the driver booked that time as SW power capping +") == 2


# --- a short window's times to the second -----------------------------------------------------------

def _review(window: float) -> str:
    """1200 s at 10 steps/s (a line a second), then 400 s at 3 steps/s; the whole recording reviewed."""
    base = steady(T3, 1200, every=1.0, per_line=10)
    last = base[-1]["step"]
    tail = [pt(T3 + 1200 + i, last + 3 * i) for i in range(1, 401)]
    v = verdict(run(base + tail, read_at=T3 + 1600), _cfg(window), telemetry=tele(samples(T3, 1600), review=True))
    assert v.status is Status.WARN, v.summary
    return v.summary


def test_short_window_cut_off_is_five_minutes():
    assert g14.SHORT_WINDOW_S == 300.0 and Config().run.slow_window_s == g14.SHORT_WINDOW_S


@pytest.mark.parametrize("window,when", [
    (30.0, "from 03:20:00 to 03:20:30 UTC"),
    (299.0, "from 03:20:00 to 03:24:59 UTC"),  # just under SHORT_WINDOW_S: to the second
    (300.0, "from 03:20 UTC to 03:25 UTC"),  # at it (the default window): minute clocks, as before
    (301.0, "from 03:20 UTC to 03:25 UTC"),  # just above
])
def test_a_window_under_the_cut_off_prints_seconds(window, when):
    s = _review(window)
    assert s.startswith(f"slowdown: 3 steps/s {when} against the run's median 10 steps/s (30% of its rate"), s


def test_live_still_says_the_window_by_its_length():
    base = steady(T3, 1200, every=1.0, per_line=10)
    tail = [pt(T3 + 1200 + i, base[-1]["step"] + 3 * i) for i in range(1, 61)]
    v = verdict(run(base + tail, read_at=T3 + 1260), _cfg(30.0), telemetry=tele(samples(T3, 1260)))
    assert v.summary.startswith("slowdown: 3 steps/s over the last 30 s against"), v.summary
