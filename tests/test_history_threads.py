"""The telemetry history read while the sampler thread appends (core/telemetry.py History).

A soak with two suites on two cores crashed the dashboard at mount with "deque mutated during
iteration": the sampler thread appended while the UI rebuilt samples. Without a lock a reader could
also take one column before an append and the next after it. Here a writer appends as fast as it
can, every field of sample i holding i, with new series appearing on the way, while readers use
every read the dashboard and the exporter use; the switch interval is cut so threads interleave
between almost every bytecode. Each sample read back must be whole: every field equal to its t.
"""

from __future__ import annotations

import sys
import threading
import time

import pytest

from sparktui.core.telemetry import History


def sample(i: int) -> dict:
    gpu = {"temp_c": i, "power_w": i, "sm_mhz": i, "mem_used": i}
    mem = {"MemTotal": i, "MemAvailable": i}
    if i >= 500:
        mem["SwapFree"] = i  # a series that starts mid-run (the dict of series grows under readers)
    errors = {"g0.power_w": f"err {i // 100}"} if i % 7 == 0 else {}
    return {"t": float(i), "gpus": [gpu], "mem": mem, "errors": errors}


def whole(s: dict) -> bool:
    i = s["t"]
    g = s["gpus"][0]
    fields = [g["temp_c"], g["power_w"], g["sm_mhz"], g["mem_used"], s["mem"]["MemTotal"], s["mem"]["MemAvailable"]]
    if "SwapFree" in s["mem"]:
        fields.append(s["mem"]["SwapFree"])
    return all(v == i for v in fields)


@pytest.fixture
def fast_switching():
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_readers_never_see_a_half_appended_sample(fast_switching):
    h = History(300)
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        i = 0
        try:
            while not stop.is_set():
                h.append(sample(i))
                i += 1
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    w = threading.Thread(target=writer, daemon=True)
    w.start()
    reads = torn = 0
    deadline = time.monotonic() + 1.5
    try:
        while time.monotonic() < deadline:
            for s in h.samples(last_s=120.0) + h.samples():
                reads += 1
                torn += not whole(s)
            # one read is one moment: a series comes back as consecutive samples (two reads are two
            # moments, an append may fall between them, so series are not compared across calls)
            temp = h.values("g0.temp_c")
            torn += temp != list(range(temp[0], temp[0] + len(temp))) if temp else 0
            power = h.values_from("g0.power_w", max(0, len(temp) - 50))
            torn += power != list(range(power[0], power[0] + len(power))) if power else 0
            h.plotted("g0.temp_c")
            h.trend_values("mem.MemAvailable")
            h.oldest_t()
    finally:
        stop.set()
        w.join(5)
    assert errors == []
    assert reads > 1000 and h.appended > 1000
    assert torn == 0, f"{torn} torn reads of {reads}"


def test_the_locked_reads_give_what_the_unlocked_ones_gave_on_a_quiet_history():
    h = History(100)
    for i in range(150):
        h.append(sample(i))
    assert h.values("t") == [float(i) for i in range(50, 150)]
    assert h.values_from("g0.temp_c", 95) == list(range(145, 150))
    assert h.oldest_t() == 50.0
    assert [s["t"] for s in h.samples(last_s=9.0)] == [float(i) for i in range(140, 150)]  # t >= 149 - 9
    assert all(whole(s) for s in h.samples())
    values, other = h.trend_values("g0.temp_c")
    assert values == h.trend.values("g0.temp_c") and other == h.trend.other_values("g0.temp_c")
