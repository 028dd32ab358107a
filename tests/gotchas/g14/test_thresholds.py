"""G14's thresholds, each pinned just below and just above: the config's slow_ratio, slow_window_s,
late_factor and stall_after_s, the 600 s stall floor and the pace factor, the points and baseline a
slow window needs, and the causes' thresholds (clock drop, clock-event counters and reasons, PSI,
MemAvailable floor, swap growth, a process's start and a kernel event at the stretch's edges).
Runs as in test_judge.py: 1200 s at 0.1 s/step (a line every 10 s), then the slow window."""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g14_run_progress as g14
from tests.gotchas.g14.test_judge import (GIB, MEM_OK, T3, everything, gpu, klog, meminfo, proc, procs, pt, run,
                                          samples, slowed, steady, tele, verdict)


def cfg(**run_kw) -> Config:
    return Config().with_overrides(run=run_kw)


# --- the slowdown: ratio, window, points, baseline ----------------------------------------------------

@pytest.mark.parametrize("per_line,status", [(69, Status.WARN), (71, Status.OK)])
def test_slow_ratio_just_below_and_above(per_line, status):
    assert Config().run.slow_ratio == 0.7
    r, _ = slowed(per_line)
    v = verdict(r)
    assert v.status is status, v.summary
    if status is Status.WARN:
        assert "(69% of its rate, slow under 70%)" in v.summary


@pytest.mark.parametrize("ratio,status", [(0.5, Status.OK), (0.51, Status.WARN)])
def test_slow_ratio_from_the_config(ratio, status):
    r, _ = slowed(50)  # 50% of the median rate
    assert verdict(r, cfg(slow_ratio=ratio)).status is status


def sparse_tail(now: float) -> dict:
    """1100 s at 0.1 s/step, then two slow lines 150 s apart (1250, 1400)."""
    base = steady(T3, 1100, per_line=100)
    last = base[-1]["step"]
    return run(base + [pt(T3 + 1250, last + 300), pt(T3 + 1400, last + 600)], read_at=now)


@pytest.mark.parametrize("now,status", [(T3 + 1400, Status.WARN), (T3 + 1401, Status.OK)])
def test_three_points_in_the_window_one_second_makes_it_two(now, status):
    assert g14.SLOW_MIN_POINTS == 3
    v = verdict(sparse_tail(now))
    assert v.status is status, v.summary


@pytest.mark.parametrize("window,status", [(300.0, Status.WARN), (299.0, Status.OK)])
def test_slow_window_s_from_the_config(window, status):
    v = verdict(sparse_tail(T3 + 1400), cfg(slow_window_s=window))
    assert v.status is status, v.summary


@pytest.mark.parametrize("first,status", [(0.0, Status.WARN), (1.0, Status.OK)])
def test_the_baseline_spans_two_windows(first, status):
    """Window 600-900 s: the run's progress must reach back to 0 s (two windows before it)."""
    assert g14.SLOW_BASELINE_WINDOWS == 2.0
    base = [pt(T3 + first, 0)] + steady(T3 + 10, 590, per_line=100, step0=100)
    last = base[-1]["step"]
    tail = [pt(T3 + 600 + 10 * i, last + 50 * i) for i in range(1, 31)]
    v = verdict(run(base + tail, read_at=T3 + 900))
    assert v.status is status, v.summary


# --- late and stall -----------------------------------------------------------------------------------

@pytest.mark.parametrize("age,status", [(100.0, Status.OK), (101.0, Status.WARN)])
def test_late_after_late_factor_median_gaps(age, status):
    assert Config().run.late_factor == 10
    v = verdict(run(steady(T3, 1000), read_at=T3 + 1000 + age))
    assert v.status is status, v.summary


@pytest.mark.parametrize("age,status", [(75.0, Status.OK), (76.0, Status.WARN)])
def test_late_factor_from_the_config(age, status):
    v = verdict(run(steady(T3, 1000), read_at=T3 + 1000 + age), cfg(late_factor=7.5))
    assert v.status is status, v.summary


@pytest.mark.parametrize("age,status", [(60.0, Status.OK), (61.0, Status.WARN)])
def test_late_never_before_a_minute(age, status):
    """A line every 2 s: 10 x 2 s = 20 s would call a checkpoint save late; the floor is a minute."""
    assert g14.LATE_FLOOR_S == 60.0
    p = [pt(T3 + 2 * i, i) for i in range(200)]
    v = verdict(run(p, read_at=T3 + 398 + age))
    assert v.status is status, v.summary


@pytest.mark.parametrize("age,status", [(599.0, Status.WARN), (600.0, Status.FAIL)])
def test_stall_floor_600_s(age, status):
    """A line every 10 s: the pace gives 3 x 10 x 10 s = 300 s, under the floor."""
    assert g14.STALL_FLOOR_S == 600.0
    v = verdict(run(steady(T3, 1000), read_at=T3 + 1000 + age))
    assert v.status is status, v.summary


@pytest.mark.parametrize("age,status", [(899.0, Status.WARN), (900.0, Status.FAIL)])
def test_stall_from_the_pace_over_the_floor(age, status):
    """A line every 30 s: 3 x 10 x 30 s = 900 s."""
    assert g14.STALL_PACE_FACTOR == 3.0
    v = verdict(run(steady(T3, 3000, every=30.0), read_at=T3 + 3000 + age))
    assert v.status is status, v.summary
    if status is Status.FAIL:
        assert "stall after" in {e.what for e in v.evidence}
        assert [e.value for e in v.evidence if e.what == "stall after"] == ["900 s (3 x 10 x the median gap 30 s)"]


@pytest.mark.parametrize("age,status", [(119.0, Status.WARN), (120.0, Status.FAIL)])
def test_stall_after_s_from_the_config(age, status):
    v = verdict(run(steady(T3, 1000), read_at=T3 + 1000 + age), cfg(stall_after_s=120.0))
    assert v.status is status, v.summary
    if status is Status.FAIL:
        assert [e.value for e in v.evidence if e.what == "stall after"] == ["120 s (run.stall_after_s)"]


def test_with_no_pace_only_the_configured_stall_speaks():
    one = run([pt(T3, 5)], read_at=T3 + 5000)
    assert verdict(one).status is Status.UNKNOWN
    assert verdict(one, cfg(stall_after_s=600.0)).status is Status.FAIL


# --- causes at their thresholds -----------------------------------------------------------------------

START = T3 + 1200  # the slow window of slowed(): 1200-1500 s


def slow_with(**readings):
    r, now = slowed(50)
    return verdict(r, **everything(r, now, **readings))


def with_gpu(fn, step: float = 5.0):
    return {"telemetry": tele(samples(T3, 1500, fn, step=step))}


@pytest.mark.parametrize("sm,named", [(2160, True), (2161, False)])
def test_sm_clock_drop_of_ten_percent(sm, named):
    assert g14.CLOCK_DROP_SHARE == 0.10
    v = slow_with(**with_gpu(lambda t: gpu(sm=sm if t >= START else 2400)))
    assert ("SM clock under load 2400 → 2160 MHz (-10%)" in v.summary) is named, v.summary


@pytest.mark.parametrize("util,named", [(50, True), (49, False)])
def test_the_clock_counts_only_under_load(util, named):
    v = slow_with(**with_gpu(lambda t: gpu(sm=1500, util=util) if t >= START else gpu(sm=2400, util=util)))
    assert ("SM clock under load" in v.summary) is named


@pytest.mark.parametrize("key,words", [("sw_thermal", "SW thermal slowdown"), ("power_cap", "SW power capping"),
                                       ("hw_thermal", "HW thermal slowdown"), ("brake", "HW power brake")])
@pytest.mark.parametrize("total_s,named", [(3.0, True), (2.9, False)])
def test_clock_event_counter_one_percent_of_the_stretch(key, words, total_s, named):
    assert g14.CLOCK_EVENT_SHARE == 0.01
    per_s = total_s * 1e9 / 300
    v = slow_with(**with_gpu(lambda t: gpu(**{key: 7_000_000_000 + int(max(0.0, t - START) * per_s)})))
    assert (f"{words} +{total_s:.1f} s (1% of the time)" in v.summary) is named, v.summary


def test_a_counter_growing_faster_than_time_or_going_back_is_not_a_cause():
    jump = slow_with(**with_gpu(lambda t: gpu(sw_thermal=0 if t < START + 100 else 60_000_000_000)))
    assert "SW thermal slowdown" not in jump.summary
    back = slow_with(**with_gpu(lambda t: gpu(sw_thermal=9_000_000_000 if t < START + 100 else 0)))
    assert "SW thermal slowdown" not in back.summary


@pytest.mark.parametrize("n,named", [(2, True), (1, False)])
def test_a_reason_in_two_samples(n, named):
    assert g14.REASON_MIN_SAMPLES == 2
    v = slow_with(**with_gpu(lambda t: gpu(reasons=["hw_slowdown"] if START <= t < START + 5 * n else [])))
    assert (f"clock-event reason hw_slowdown in {n} of 61 samples" in v.summary) is named, v.summary


@pytest.mark.parametrize("n,named", [(4, True), (3, False)])
def test_a_reason_in_one_percent_of_the_samples(n, named):
    v = slow_with(**with_gpu(lambda t: gpu(reasons=["sw_power_cap"] if START <= t < START + n else []), step=1.0))
    assert (f"clock-event reason sw_power_cap in {n} of 301 samples" in v.summary) is named, v.summary


def test_idle_and_other_reasons_are_no_cause():
    v = slow_with(**with_gpu(lambda t: gpu(reasons=["gpu_idle", "sync_boost", "applications_clocks_setting"])))
    assert "clock-event reason" not in v.summary


@pytest.mark.parametrize("kind", ["some", "full"])
@pytest.mark.parametrize("avg", ["avg10", "avg60"])
@pytest.mark.parametrize("pct,named", [(2.0, True), (1.99, False)])
def test_psi_at_two_percent(kind, avg, pct, named):
    assert g14.PSI_CAUSE_PCT == 2.0
    v = slow_with(meminfo=meminfo(psi={kind: {avg: pct}}))
    assert (f"memory pressure: PSI {kind} {avg} {pct:.1f}%" in v.summary) is named, v.summary


def test_psi_outside_0_to_100_or_in_a_review_is_no_cause():
    assert "PSI" not in slow_with(meminfo=meminfo(psi={"some": {"avg10": 150.0}})).summary
    r, now = slowed(50)
    assert "PSI" not in verdict(r, meminfo=meminfo(review=True, psi={"some": {"avg10": 50.0}})).summary


@pytest.mark.parametrize("avail,named", [(8 * GIB - 1024 ** 2, True), (8 * GIB, False)])
def test_mem_available_under_the_floor(avail, named):
    assert Config().memory.available_floor_gib == 8.0
    v = slow_with(**with_gpu(None) | {"telemetry": tele(samples(T3, 1500, mem=lambda t: {**MEM_OK, "MemAvailable": avail if t >= START + 50 else 100 * GIB}))})
    assert ("MemAvailable down to" in v.summary) is named, v.summary


def test_mem_available_from_the_meminfo_series_and_the_live_reading():
    series = {"series": [[START + 10, 5 * GIB, 4 * GIB], [START - 10, 1 * GIB, 1 * GIB]]}
    assert "MemAvailable down to 5.0 GiB" in slow_with(meminfo=meminfo(**series)).summary
    r, now = slowed(50)
    v = verdict(r, meminfo=meminfo(MemAvailable=int(3 * GIB)))
    assert "MemAvailable down to 3.0 GiB at 03:25 UTC (floor 8 GiB)" in v.summary


@pytest.mark.parametrize("grown,named", [(0.25, True), (0.24, False)])
def test_swap_growing_a_quarter_gib(grown, named):
    assert g14.SWAP_GROWTH_GIB == 0.25

    def m(t):
        return {**MEM_OK, "SwapFree": int(16 * GIB - (grown * GIB if t >= START + 100 else 0))}

    v = slow_with(telemetry=tele(samples(T3, 1500, mem=m)))
    assert ("swap in use grew" in v.summary) is named, v.summary


@pytest.mark.parametrize("age,named", [(300.0, True), (301.0, False), (0.0, True)])
def test_a_process_started_within_the_window(age, named):
    v = slow_with(processes=procs(proc(5120, age), t=T3 + 1500))
    assert ("vllm serve (pid 5120, vllm)" in v.summary) is named, v.summary


def test_a_long_process_name_is_cut():
    v = slow_with(processes=procs(proc(5120, 10.0, name="x" * 200), t=T3 + 1500))
    assert g14.NAME_CHARS == 60
    assert "x" * 59 + "… (pid 5120" in v.summary and "x" * 60 not in v.summary


def test_a_process_seen_in_a_reviewed_recordings_history():
    hist = [procs(proc(5120, 5.0), t=START + 50), procs(t=T3 + 1500)]
    r, now = slowed(50)
    v = verdict(r, processes=dict(hist[-1], history=hist, review=True))
    assert "vllm serve (pid 5120, vllm) started at 03:20 UTC" in v.summary


@pytest.mark.parametrize("t,named", [(START, True), (START - 1, False), (T3 + 1500, True)])
def test_a_kernel_event_at_the_window_edges(t, named):
    v = slow_with(kernel_log=klog({"kind": "soft_lockup", "t": t, "cpu": 3, "stuck_s": 22}))
    assert ("CPU lockup at" in v.summary) is named, v.summary
