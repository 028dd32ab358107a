"""The live dashboard judges G3 with the host and pool facts `check` reads (issue 26: the whole
pool; issue 24: G3 says skip off unified memory): read in the sampler's thread with a process
scan, at most every POOL_EVERY_S, never in a replay. NVML is the fake (no driver here); the host,
/proc/mounts and /dev/shm are this machine's own."""

from __future__ import annotations

import platform

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.live import sources
from sparktui.probes import nvml
from sparktui.testing import fake_nvml
from sparktui.ui.app import SparkApp
from tests.ui.waiting import wait_for


def live_cfg() -> Config:
    return Config().with_overrides(telemetry={"interval_s": 0.05, "processes_every_s": 0.2})


async def judged_g3(app, pilot):
    await wait_for(pilot, lambda: app.source.side_readings().keys() >= {"host", "pool"}, what="host and pool read",
                   state=lambda: list(app.source.side_readings()))
    app.judge_telemetry()
    return app.board["G3"].verdict


async def test_a_gb10_is_judged_with_this_hosts_pool_facts():
    nvml.set_backend(fake_nvml.gb10_loaded())
    try:
        app = SparkApp(live_cfg(), auto_checks=False, keep_session=False)
        async with app.run_test(size=(80, 24)) as pilot:
            v = await judged_g3(app, pilot)
            assert v.status is not Status.SKIP  # NVML's GB10 holds no memory of its own: the one pool
            assert app.source.side_readings()["pool"].ok
            seen = " ".join(f"{e.what} {e.source} {e.value}" for e in v.evidence)
            assert "/dev/shm" in seen, seen  # this machine's tmpfs, in G3's evidence as `check` shows it
    finally:
        nvml.set_backend(None)


@pytest.mark.skipif(platform.machine() in ("aarch64", "arm64"), reason="the case of an x86 host")
async def test_an_x86_host_without_a_gpu_is_skip_in_the_dashboard_as_in_check():
    nvml.set_backend(fake_nvml.FakeNvml([], library_missing=True))
    try:
        app = SparkApp(live_cfg(), auto_checks=False, keep_session=False)
        async with app.run_test(size=(80, 24)) as pilot:
            v = await judged_g3(app, pilot)
            assert v.status is Status.SKIP, v.summary
    finally:
        nvml.set_backend(None)


def test_the_pool_is_read_at_most_every_pool_every_s(monkeypatch):
    reads = []
    monkeypatch.setattr("sparktui.probes.pool.read", lambda cfg: reads.append(1) or __import__(
        "sparktui.core.readings", fromlist=["Reading"]).Reading("pool", {}))
    src = sources.LiveSource(Config(), on_sample=lambda s: None, on_processes=lambda p: None, keep_session=False)
    for _ in range(5):
        src._read_side()
    assert len(reads) == 1 and set(src.side_readings()) == {"host", "pool"}
    src._pool_due = 0.0
    src._read_side()
    assert len(reads) == 2
    assert sources.QuietSource().side_readings() == {}  # a replay judges what it recorded
