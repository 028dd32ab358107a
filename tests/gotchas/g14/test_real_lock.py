"""Issue 27 item 3: a real slowdown, attributed. On the lent H100 (driver 580.159.04) a bf16 training
loop ran at ~8 steps/s, 1350-1395 MHz, power-capped (0x4); `nvidia-smi -lgc 300,600` held it at
600 MHz and 3.82 steps/s (48% of its rate) with no clock-event reason active, the driver booking the
locked time on the SW thermal slowdown counter (tests/data/h100/lgc-lock-2026-12-05.txt). `sparktui
record` sampled every 1 s and read the counters every 10 s, carrying the value between: G14 judged
each +10 s step between two samples 1 s apart as a counter "growing faster than time" and named only
the clock drop. Now it counts that growth and names the lock (no reason active while the clock fell).
"""

from __future__ import annotations

from dataclasses import replace

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from tests.gotchas.g14.test_judge import T3, gpu, pt, run, tele, verdict

LOCK_AT, LOCK_S = T3 + 300, 120


def recorded():
    """300 s at 8 steps/s (a tqdm line a second), 120 s locked at 3.8 steps/s, 40 s back at 8."""
    prog, step, t = [], 0, T3
    while t <= LOCK_AT + LOCK_S + 40:
        prog.append(pt(t, step))
        step += 4 if LOCK_AT < t + 1 <= LOCK_AT + LOCK_S and (int(t) % 5) < 4 else 8  # 3.2-4 steps/s locked
        t += 1.0
    smp = []
    for i in range(int(LOCK_AT + LOCK_S + 40 - T3) + 1):
        t = T3 + i
        locked = LOCK_AT <= t < LOCK_AT + LOCK_S
        read = T3 + (i // 10) * 10  # the counters: read every 10 s, carried between
        thermal = int(min(max(0.0, read - LOCK_AT), LOCK_S) * 1e9)
        g = gpu(sm=600 if locked else 1365, util=100, reasons=[] if locked else ["sw_power_cap"], sw_thermal=thermal,
                power_cap=int((read - T3) * 1e9))
        smp.append({"t": t, "gpus": [g], "mem": {}})
    return prog, smp


def test_the_lock_is_named_with_the_counters_and_the_clock_drop():
    prog, smp = recorded()
    cfg = replace(Config(), run=replace(Config().run, slow_window_s=30.0))
    v = verdict(run(prog, read_at=LOCK_AT + 60), cfg, telemetry=tele(smp, review=True))
    assert v.status is Status.WARN, v.summary
    s = v.summary
    assert s.startswith("slowdown:"), s
    assert "SW thermal slowdown +" in s  # the carried counter's growth counts (it was dropped before)
    # the lock leads; the counters are what the driver booked meanwhile (tests/gotchas/g14/test_lock_wording.py)
    assert "while clocks were held by a setting: SM clock under load 1365 → 600 MHz (-56%), no clock-event reason " \
           "active in 30 of 31 loaded samples (a lock with `nvidia-smi -lgc`; G4), not heat or power; " \
           "the driver booked that time as SW power capping +" in s, s


def test_a_jump_past_one_read_period_is_still_not_a_cause():
    """The guard stays: growth over the gap between samples plus one 10 s read period, at most."""
    prog, smp = recorded()
    for s in smp:
        s["gpus"][0]["sw_thermal_ns"] = 0 if s["t"] < LOCK_AT + 10 else 30_000_000_000  # +30 s in 1 s
    cfg = replace(Config(), run=replace(Config().run, slow_window_s=30.0))
    v = verdict(run(prog, read_at=LOCK_AT + 60), cfg, telemetry=tele(smp, review=True))
    assert "SW thermal slowdown" not in v.summary, v.summary
