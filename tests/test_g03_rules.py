"""G3's rules at and around every threshold, on GB10 figures (FACTS.md, FIELD-FACTS.md).

GB10: MemTotal 121.7 GiB usable; NVML reports no device memory; CUDA's free-memory call follows
MemFree. Each threshold (the floor, the page-cache share, the hysteresis margin and hold, the share
from which a holder is named, the measurement-error bounds) is tested just below and just above.
"""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.recording import MEM_SERIES_S, readings_from_samples
from sparktui.gotchas import g03_unified_memory as g3
from sparktui.gotchas.g03_unified_memory import judge
from sparktui.probes.host import parse_meminfo
from tests.conftest import readings_of

GIB = 1024 ** 3
TOTAL = 121.7  # GiB, GB10 usable (MemTotal 127611680 kB)
NVML_GB10 = {"devices": [{"index": 0, "name": {"value": "NVIDIA GB10"},
                          "memory": {"value": None, "error": "NOT_SUPPORTED (Not Supported)"}}]}
CFG = Config()
DROP = "/proc/sys/vm/drop_caches"  # the command, offered only for reclaimable cache


def mi(*, avail: float, free: float, anon: float | None = 20.0, shmem: float | None = 0.5, cached: float = 10.0,
       buffers: float = 0.3, kre: float | None = 1.2, sre: float = 1.0, huge_n: int | None = 0, huge_kb: int = 2048,
       unevictable: float = 0.0, total: float = TOTAL, **extra) -> dict:
    """A /proc/meminfo reading in bytes from GiB figures; HugePages_* are counts, Hugepagesize kB -> bytes."""
    g = lambda x: None if x is None else int(x * GIB)  # noqa: E731
    m = {"MemTotal": g(total), "MemFree": g(free), "MemAvailable": g(avail), "Buffers": g(buffers),
         "Cached": g(cached), "SReclaimable": g(sre), "KReclaimable": g(kre), "Shmem": g(shmem), "AnonPages": g(anon),
         "Unevictable": g(unevictable), "Mlocked": g(unevictable), "SwapTotal": 0, "SwapFree": 0, "SwapCached": 0,
         "HugePages_Total": huge_n, "HugePages_Free": huge_n, "Hugepagesize": huge_kb * 1024,
         "CmaTotal": 0, "CmaFree": 0, "Dirty": g(0.01), "Mapped": g(1.0)}
    m.update({k: g(v) if isinstance(v, float) else v for k, v in extra.items()})
    return {k: v for k, v in m.items() if v is not None}


def v_of(mem: dict, cfg: Config = CFG):
    return judge(readings_of(meminfo=mem, nvml=NVML_GB10), cfg)


def status(mem: dict, cfg: Config = CFG) -> str:
    return v_of(mem, cfg).status.value


def ev(v, what):
    return next(e.value for e in v.evidence if e.what.startswith(what))


# -- the floor (memory.available_floor_gib, 8 GiB) ------------------------------------------------
@pytest.mark.parametrize("avail,expected", [(7.99, "warn"), (8.0, "ok"), (8.01, "ok")])
def test_available_floor_boundary(avail, expected):
    assert status(mi(avail=avail, free=avail - 3.0, anon=100.0)) == expected


def test_floor_follows_the_config_just_below_and_above():
    cfg = Config().with_overrides(memory={"available_floor_gib": 20.0})
    assert status(mi(avail=19.9, free=15.0, anon=90.0), cfg) == "warn"
    assert status(mi(avail=20.1, free=15.0, anon=90.0), cfg) == "ok"


# -- reclaimable page cache share (memory.cache_warn_fraction, 0.25) -------------------------------
def _cache_mem(share: float, free: float = 3.0) -> dict:
    # reclaimable = Buffers 0.3 + Cached - Shmem 0.5 + KReclaimable 1.2
    cached = share * TOTAL - 0.3 + 0.5 - 1.2
    return mi(avail=60.0, free=free, cached=cached, anon=20.0)


@pytest.mark.parametrize("share,expected", [(0.24, "ok"), (0.26, "warn")])
def test_cache_share_boundary_with_memfree_under_the_floor(share, expected):
    v = v_of(_cache_mem(share))
    assert v.status.value == expected
    if expected == "warn":
        assert v.summary.startswith("reclaimable page cache holds 31.6 GiB (26% of memory)")
        assert "MemFree 3.0 GiB" in v.summary and DROP in v.fix


@pytest.mark.parametrize("free,expected", [(7.9, "warn"), (8.1, "ok")])
def test_memfree_floor_boundary_when_the_cache_is_big(free, expected):
    assert status(_cache_mem(0.40, free=free)) == expected


def test_unsloth_10704_sixty_gb_written_leaves_memavailable_fine():
    """A 60 GB file written: CUDA-free (MemFree) 103 -> 42 GiB while MemAvailable stays ~116 GiB."""
    before = mi(avail=116.5, free=103.0, cached=3.0, anon=4.0)
    after = mi(avail=116.0, free=42.0, cached=3.0 + 60e9 / GIB, anon=4.0)
    vb, va = v_of(before), v_of(after)
    assert vb.status.value == "ok" and "page cache" not in vb.summary and DROP not in vb.fix
    assert va.status.value == "ok"  # nothing will OOM: the kernel gives the cache back
    assert "reclaimable page cache holds 59.9 GiB (49% of memory)" in va.summary
    assert "sees only MemFree 42.0 GiB" in va.summary and DROP in va.fix


# -- Shmem is not page cache (class 7) --------------------------------------------------------------
def test_shmem_filling_the_cache_is_named_and_drop_caches_not_offered():
    # 70 GiB "cached", 62 GiB of it /dev/shm: free -g shows buff/cache 71 GiB, but no drop frees it.
    mem = mi(avail=6.5, free=3.0, cached=70.0, shmem=62.0, anon=40.0)
    v = v_of(mem)
    assert v.status.value == "warn"
    assert "under the 8 GiB floor; held by shmem/tmpfs (/dev/shm) 62.0 GiB, processes' own memory (AnonPages) 40.0 GiB" \
        in v.summary
    assert "page cache holds" not in v.summary
    assert DROP not in v.fix and "/dev/shm" in v.fix and "`drop_caches` frees none of it" in v.fix
    assert ev(v, "reclaimable page cache") == "9.5 GiB"  # 0.3 + 70 - 62 + 1.2
    assert ev(v, "buff/cache") == "71.3 GiB"  # what free -g shows: the shared part is in it


def test_shmem_with_memavailable_fine_is_ok_but_said():
    v = v_of(mi(avail=30.0, free=3.0, cached=70.0, shmem=62.0, anon=40.0))
    assert v.status.value == "ok" and "shmem/tmpfs holds 62.0 GiB (no cache drop frees it)" in v.summary
    assert DROP not in v.fix


def test_without_shmem_the_cache_is_not_called_reclaimable_and_every_fix_is_offered():
    mem = mi(avail=85.0, free=3.0, cached=80.0, shmem=None)
    v = v_of(mem)
    assert v.status.value == "warn" and v.summary.startswith("page cache holds 81.3 GiB")
    assert "tmpfs" in ev(v, "Shmem") and v.fix == g3.FIX


# -- what holds the memory, and the fix that fits ------------------------------------------------
def test_gpu_allocations_outside_any_rss_are_the_kernel_and_driver_share():
    # vllm #54200: a process with 1.8 GiB RSS holding 77 GiB of the pool through the driver
    mem = mi(avail=5.0, free=2.0, cached=4.0, anon=30.0)
    v = v_of(mem)
    # kernel = 121.7 - 2 - 0.3 - 4 - 1.2 - 30 = 84.2
    assert "held by kernel and driver (GPU allocations among them) 84.2 GiB, processes' own memory (AnonPages) 30.0 GiB" \
        in v.summary
    assert "gpu-memory-utilization" in v.fix and DROP not in v.fix and "/dev/shm" not in v.fix


@pytest.mark.parametrize("anon,named", [(12.0, False), (12.4, True)])
def test_a_holder_is_named_from_ten_percent_of_memtotal(anon, named):
    # 10% of 121.7 GiB = 12.17 GiB; the kernel/driver share is the largest either way
    v = v_of(mi(avail=5.0, free=2.0, cached=4.0, anon=anon))
    assert ("AnonPages" in v.summary) is named and "kernel and driver" in v.summary


def test_the_largest_holder_is_named_even_under_ten_percent():
    held = {g3.ANON: 5 * GIB, g3.SHMEM: 1 * GIB, g3.HUGE: 0, g3.KERNEL: 3 * GIB, g3.CACHE: 100 * GIB}
    assert g3.named_holders(held, TOTAL * GIB) == [g3.ANON]
    assert g3.named_holders({**held, g3.ANON: 0, g3.KERNEL: 0, g3.SHMEM: 0}, TOTAL * GIB) == []


def test_hugepages_are_counts_times_their_size():
    text = ("MemTotal:       127611680 kB\nMemFree:         2097152 kB\nMemAvailable:    4194304 kB\n"
            "Buffers:          314572 kB\nCached:          4194304 kB\nShmem:            524288 kB\n"
            "AnonPages:      31457280 kB\nKReclaimable:    1048576 kB\nHugePages_Total:   20480\n"
            "HugePages_Free:    20480\nHugepagesize:       2048 kB\n")
    mem = parse_meminfo(text)
    assert mem["HugePages_Total"] == 20480 and mem["Hugepagesize"] == 2048 * 1024
    v = v_of(mem)
    assert ev(v, "hugepages reserved") == "40.0 GiB" and "hugepages reserved 40.0 GiB" in v.summary
    assert "nr_hugepages" in v.fix


def test_unevictable_memory_is_evidence():
    v = v_of(mi(avail=50.0, free=40.0, anon=30.0, unevictable=16.0))
    assert ev(v, "Unevictable") == "16.0 GiB" and ev(v, "Mlocked") == "16.0 GiB"


def test_without_anonpages_what_holds_it_is_said_unread_and_every_fix_offered():
    v = v_of(mi(avail=5.0, free=2.0, anon=None))
    assert "what holds it was not read (no AnonPages in this reading)" in v.summary and v.fix == g3.FIX


# -- measurement errors (class 3) ------------------------------------------------------------------
@pytest.mark.parametrize("change,why", [
    ({"MemTotal": 0}, "MemTotal 0.0 GiB is outside what a DGX Spark-class machine can have"),
    ({"MemTotal": 2 * 1024 ** 4 + GIB}, "MemTotal 2049.0 GiB is outside"),
    ({"MemAvailable": -1}, "MemAvailable -0.0 GiB is outside"),
    ({"MemAvailable": int(TOTAL * GIB) + GIB}, "MemAvailable 122.7 GiB is outside"),
    ({"Shmem": int(TOTAL * GIB) + GIB}, "Shmem 122.7 GiB is outside"),
    ({"MemFree": -5 * GIB}, "MemFree -5.0 GiB is outside"),
    ({"SwapTotal": 4 * GIB, "SwapFree": 5 * GIB}, "SwapFree 5.0 GiB with SwapTotal 4.0 GiB"),
    ({"HugePages_Total": 10, "HugePages_Free": 11}, "HugePages_Free 11 with HugePages_Total 10"),
    ({"HugePages_Total": 70000, "HugePages_Free": 0}, "70000 hugepages of 0.0 GiB are more than MemTotal"),
    ({"MemAvailable": "N/A"}, "MemAvailable is 'N/A', not a number"),
    ({"Cached": True}, "Cached is True, not a number"),
])
def test_figures_the_machine_cannot_produce_are_a_measurement_error(change, why):
    v = v_of({**mi(avail=60.0, free=40.0), **change})
    assert v.status.value == "unknown" and "measurement error" in v.summary and why in v.summary, v.summary


@pytest.mark.parametrize("total_gib,expected", [(2048.0, "ok"), (2048.01, "unknown")])
def test_memtotal_bound_is_two_tib(total_gib, expected):
    mem = mi(avail=60.0, free=40.0)
    mem["MemTotal"] = int(total_gib * GIB)
    assert status(mem) == expected


def test_memavailable_equal_to_memtotal_is_possible():
    mem = mi(avail=TOTAL, free=TOTAL - 0.5, anon=0.1, cached=0.1)
    mem["MemAvailable"] = mem["MemTotal"]
    assert status(mem) == "ok"


# -- hysteresis at the floor (class 11) ------------------------------------------------------------
def with_series(mem: dict, points: list[tuple[float, float]], free: float | None = None) -> dict:
    """``points``: (t, MemAvailable GiB); the last is now."""
    return {**mem, "series": [[t, int(a * GIB), int((free if free is not None else a - 3) * GIB)] for t, a in points]}


def test_without_a_series_the_plain_threshold():
    assert status(mi(avail=8.1, free=5.0, anon=100.0)) == "ok"


def test_hovering_at_the_floor_holds_the_warning():
    pts = [(t, 7.9 if t % 10 < 5 else 8.1) for t in range(0, 60)] + [(60, 8.1)]
    v = v_of(with_series(mi(avail=8.1, free=5.0, anon=100.0), pts))
    assert v.status.value == "warn"
    assert "the warning holds until it stays above 10 GiB for 30 s" in v.summary
    assert "recent MemAvailable" in [e.what.split(" (")[0] for e in v.evidence]


@pytest.mark.parametrize("last_t,expected", [(30.0, "warn"), (31.0, "ok")])
def test_hold_time_boundary(last_t, expected):
    # under the floor at t=0, then 10.5 GiB from t=1: the run spans last_t - 1 seconds
    pts = [(0.0, 7.0)] + [(float(t), 10.5) for t in range(1, int(last_t) + 1)]
    assert status(with_series(mi(avail=10.5, free=7.5, anon=100.0), pts)) == expected


@pytest.mark.parametrize("level,expected", [(9.99, "warn"), (10.0, "ok"), (10.01, "ok")])
def test_margin_boundary(level, expected):
    pts = [(0.0, 7.0)] + [(float(t), level) for t in range(1, 62)]
    assert status(with_series(mi(avail=level, free=level - 3, anon=100.0), pts)) == expected


def test_a_dip_under_the_margin_restarts_the_hold():
    pts = [(0.0, 7.0)] + [(float(t), 10.5 if t != 20 else 9.0) for t in range(1, 45)]
    assert status(with_series(mi(avail=10.5, free=7.5, anon=100.0), pts)) == "warn"  # 24 s since the dip
    pts += [(float(t), 10.5) for t in range(45, 52)]
    assert status(with_series(mi(avail=10.5, free=7.5, anon=100.0), pts)) == "ok"  # 31 s since


def test_memfree_rule_has_the_same_hysteresis():
    mem = _cache_mem(0.40, free=8.5)
    pts = [(0.0, 60.0), (1.0, 60.0), (2.0, 60.0)]
    held = {**mem, "series": [[0.0, 60 * GIB, int(7.5 * GIB)], [1.0, 60 * GIB, int(8.5 * GIB)],
                              [2.0, 60 * GIB, int(8.5 * GIB)]]}
    v = v_of(held)
    assert v.status.value == "warn" and "MemFree was 7.5 GiB" in v.summary
    assert status(with_series(mem, pts, free=8.5)) == "ok"


def test_below_floor_is_a_pure_function():
    floor = 8 * GIB
    assert g3.below_floor(7 * GIB, [], floor).now is True
    assert g3.below_floor(9 * GIB, [], floor) is None
    held = g3.below_floor(9 * GIB, [(0.0, 7 * GIB), (1.0, 9 * GIB)], floor)
    assert held is not None and not held.now and held.t == 0.0 and held.value == 7 * GIB
    assert g3.below_floor(9 * GIB, [(1.0, 9 * GIB)], floor) is None


def _gb10_samples(avails: list[float], t0: float = 1_764_000_000.0) -> list[dict]:
    return [{"t": t0 + i, "gpus": [], "mem": mi(avail=a, free=a - 3.0, anon=100.0)} for i, a in enumerate(avails)]


def test_the_dashboard_no_longer_flaps_at_the_floor():
    """Judged every 5 s as the dashboard does, a pool wobbling 7.8-8.3 GiB around the 8 GiB floor
    stays warn once it has been under; the plain threshold flipped at almost every judgement."""
    wobble = [8.3, 8.1, 7.8, 8.2, 8.0, 7.9, 8.3] * 30
    samples = _gb10_samples(wobble)
    seen_hyst, seen_plain = [], []
    for end in range(5, len(samples) + 1, 5):
        r = readings_from_samples(samples[:end], source="live")
        seen_hyst.append(judge(r, CFG).status.value)
        plain = Reading("meminfo", {k: v for k, v in r.data("meminfo").items() if k != "series"}, source="live")
        seen_plain.append(judge(readings_of(meminfo=plain), CFG).status.value)
    flips = lambda xs: sum(a != b for a, b in zip(xs, xs[1:]))  # noqa: E731
    assert flips(seen_plain) >= 10 and flips(seen_hyst) <= 1 and seen_hyst[-1] == "warn"


def test_live_readings_carry_the_recent_series_only():
    samples = _gb10_samples([20.0] * 700)
    m = readings_from_samples(samples, source="live").data("meminfo")
    assert len(m["series"]) == MEM_SERIES_S + 1 and m["series"][-1][0] == samples[-1]["t"]
    assert m["t"] == samples[-1]["t"] and "review" not in m


# -- review mode: the lowest moment, with when -----------------------------------------------------
def test_review_reports_the_lowest_moment_with_when():
    t0 = 1_764_000_000.0  # 16:00:00 UTC
    avails = [40.0] * 1390 + [6.0] + [40.0] * 10  # the low point at +00:23:10
    r = readings_from_samples(_gb10_samples(avails, t0), source="recording r.jsonl", meminfo_at="lowest", review=True)
    v = judge(r, CFG)
    assert v.status.value == "warn"
    assert v.summary.startswith("lowest MemAvailable 6.0 GiB of 121.7 GiB at 16:23:10 UTC (+00:23:10), under the 8 GiB floor")
    assert ev(v, "worst moment") == "16:23:10 UTC (+00:23:10)"


def test_review_of_a_healthy_recording_is_ok_with_when():
    t0 = 1_764_000_000.0
    r = readings_from_samples(_gb10_samples([40.0, 30.0, 35.0], t0), source="rec", meminfo_at="lowest", review=True)
    v = judge(r, CFG)
    assert v.status.value == "ok" and "at 16:00:01 UTC (+00:00:01) (floor 8 GiB)" in v.summary


def test_review_does_not_rest_on_an_impossible_sample():
    samples = _gb10_samples([40.0, 30.0, 35.0])
    samples[1]["mem"]["MemAvailable"] = -GIB  # a torn or garbled figure
    r = readings_from_samples(samples, source="rec", meminfo_at="lowest", review=True)
    v = judge(r, CFG)
    assert v.status.value == "ok" and "lowest MemAvailable 35.0 GiB" in v.summary
    assert ev(v, "samples not believed") == "1 with MemAvailable outside 0..MemTotal"
    only_bad = _gb10_samples([40.0])
    only_bad[0]["mem"]["MemAvailable"] = -GIB
    r = readings_from_samples(only_bad, source="rec", meminfo_at="lowest", review=True)
    assert judge(r, CFG).status.value == "unknown"
