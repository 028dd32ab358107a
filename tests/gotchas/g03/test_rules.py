"""G3's rules at and around every threshold, on GB10 figures (docs/reference/FACTS.md, docs/reference/FIELD-FACTS.md).

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
from tests.gotchas.builders import CFG, DROP, GIB, NVML_GB10, value_of as ev

TOTAL = 121.7  # GiB, GB10 usable (MemTotal 127611680 kB)


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
    assert "tmpfs" in ev(v, "Shmem")
    assert all(b in v.fix for b in (g3.FIX_FIRST, g3.FIX_PROCESSES, g3.FIX_CACHE, g3.FIX_SHMEM, g3.FIX_HUGEPAGES))
    assert v.fix.index(g3.FIX_CACHE) < v.fix.index(g3.FIX_PROCESSES)  # the headline's cause first


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


# -- every guard and every field, one at a time (mutation testing checks these are pinned) -------
EXACT_TOTAL = 127611680 * 1024  # GB10's MemTotal in bytes, divisible by 4 and by 10


def exact(**over) -> dict:
    m = {"MemTotal": EXACT_TOTAL, "MemFree": 3 * GIB, "MemAvailable": 60 * GIB, "Buffers": 0, "Cached": 10 * GIB,
         "Shmem": 0, "KReclaimable": 0, "AnonPages": 20 * GIB}
    m.update(over)
    return m


def test_a_cache_share_of_exactly_the_fraction_is_not_over_it():
    assert status(exact(Cached=EXACT_TOTAL // 4)) == "ok"
    assert status(exact(Cached=EXACT_TOTAL // 4 + 4096)) == "warn"


def test_memfree_exactly_at_the_floor_is_not_under_it():
    assert status(exact(Cached=EXACT_TOTAL // 2, MemFree=8 * GIB)) == "ok"
    assert status(exact(Cached=EXACT_TOTAL // 2, MemFree=8 * GIB - 4096)) == "warn"


def test_a_holder_of_exactly_ten_percent_is_named():
    v = v_of(exact(MemAvailable=5 * GIB, MemFree=2 * GIB, Cached=4 * GIB, AnonPages=EXACT_TOTAL // 10))
    assert "processes' own memory (AnonPages) 12.2 GiB" in v.summary
    v = v_of(exact(MemAvailable=5 * GIB, MemFree=2 * GIB, Cached=4 * GIB, AnonPages=EXACT_TOTAL // 10 - 4096))
    assert "AnonPages" not in v.summary


NUMERIC = ("MemTotal", "MemAvailable", *g3.POOL_FIELDS, "SwapTotal", "SwapFree", "SwapCached", "HugePages_Total",
           "HugePages_Free", "Hugepagesize")


@pytest.mark.parametrize("key", NUMERIC)
def test_any_field_that_is_not_a_number_is_a_measurement_error(key):
    v = v_of({**mi(avail=60.0, free=40.0), key: "N/A"})
    assert v.status.value == "unknown" and f"{key} is 'N/A', not a number" in v.summary


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), False])
def test_nan_inf_and_booleans_are_not_numbers(bad):
    assert status({**mi(avail=60.0, free=40.0), "MemFree": bad}) == "unknown"


@pytest.mark.parametrize("key", g3.POOL_FIELDS)
def test_every_pool_field_above_memtotal_or_below_zero_is_a_measurement_error(key):
    base = mi(avail=60.0, free=40.0)
    over = v_of({**base, key: base["MemTotal"] + 1})
    assert over.status.value == "unknown" and f"{key} " in over.summary and "is outside what /proc/meminfo" in over.summary
    assert status({**base, key: -1}) == "unknown"
    assert status({**base, key: 0}) != "unknown"


@pytest.mark.parametrize("change,expected", [
    ({"MemTotal": -GIB}, "unknown"),
    ({"SwapTotal": -1, "SwapFree": 0}, "unknown"), ({"SwapTotal": 0, "SwapFree": -1}, "unknown"),
    ({"SwapTotal": 4 * GIB, "SwapFree": 4 * GIB}, "ok"), ({"SwapTotal": 4 * GIB, "SwapFree": 4 * GIB + 1}, "unknown"),
    ({"HugePages_Total": -1, "HugePages_Free": 0}, "unknown"), ({"HugePages_Total": 4, "HugePages_Free": -1}, "unknown"),
    ({"HugePages_Total": 4, "HugePages_Free": 4}, "ok"), ({"HugePages_Total": 4, "HugePages_Free": 5}, "unknown"),
    ({"HugePages_Free": 5}, "ok"), ({"Hugepagesize": -2048}, "unknown"),
])
def test_swap_and_hugepage_figures_that_cannot_be(change, expected):
    mem = {**mi(avail=60.0, free=40.0, huge_n=None), **change}
    assert status(mem) == expected, mem


def test_hugepages_exactly_filling_memtotal_are_possible_one_more_is_not():
    size = 2048 * 1024
    n = EXACT_TOTAL // size
    base = exact(MemAvailable=1 * GIB, MemFree=1 * GIB, Cached=0, AnonPages=0, Hugepagesize=size, HugePages_Free=0)
    assert status({**base, "HugePages_Total": n}) == "warn"
    assert status({**base, "HugePages_Total": n + 1}) == "unknown"


def test_missing_memtotal_or_memavailable_is_unknown():
    for key in ("MemTotal", "MemAvailable"):
        mem = {k: v for k, v in mi(avail=60.0, free=40.0).items() if k != key}
        v = v_of(mem)
        assert v.status.value == "unknown" and "no MemAvailable/MemTotal" in v.summary


def test_without_kreclaimable_the_slab_figure_counts():
    v = v_of(mi(avail=60.0, free=40.0, cached=10.0, kre=None, sre=2.0))
    assert ev(v, "reclaimable page cache") == "11.8 GiB"  # 0.3 + 10 - 0.5 + 2.0
    assert ev(v, "kernel and driver") == "49.4 GiB"  # 121.7 - 40 - 0.3 - 10 - 2.0 - 20
    v = v_of({k: x for k, x in mi(avail=60.0, free=40.0, cached=10.0, kre=None).items() if k != "SReclaimable"})
    assert ev(v, "reclaimable page cache") == "9.8 GiB"


def test_more_shmem_than_cache_is_no_negative_cache():
    assert g3.reclaimable_cache({"Buffers": 0, "Cached": GIB, "Shmem": 2 * GIB, "KReclaimable": GIB}) == GIB


def test_evidence_rows_for_locked_dirty_swap_and_hugepages():
    v = v_of(mi(avail=50.0, free=40.0, anon=30.0, unevictable=2.0, Dirty=3.0, SwapTotal=8.0, SwapFree=5.0,
                huge_n=1024))
    assert ev(v, "Unevictable") == "2.0 GiB" and ev(v, "Dirty") == "3.0 GiB" and ev(v, "swap used") == "3.0 GiB"
    assert ev(v, "hugepages reserved") == "2.0 GiB" and ev(v, "AnonPages") == "30.0 GiB"
    quiet = v_of(mi(avail=50.0, free=40.0, Dirty=0.0))
    whats = [e.what.split(" (")[0] for e in quiet.evidence]
    assert "Dirty" not in whats and "swap used" not in whats and "hugepages reserved" not in whats


def test_nvml_reporting_device_memory_is_evidence_not_basis():
    nvml = {"devices": [{"index": 0, "memory": {"value": {"total": 143_771 * 1024 * 1024, "used": 0}}}]}
    v = judge(readings_of(meminfo=mi(avail=60.0, free=40.0), nvml=nvml), CFG)
    # a GPU with memory of its own (an H200's 140.4 GiB) is discrete: G3 does not apply (issue 24, Seen 12)
    assert v.status.value == "skip" and ev(v, "NVML device memory") == "GPU 0 (GPU) 140.4 GiB"
    nvml["devices"][0]["memory"]["value"]["total"] = None
    assert ev(judge(readings_of(meminfo=mi(avail=60.0, free=40.0), nvml=nvml), CFG), "NVML device memory") == "reported"
    assert not any(e.what.startswith("NVML") for e in judge(readings_of(meminfo=mi(avail=60.0, free=40.0)), CFG).evidence)


def test_a_fix_for_cache_alone_still_says_what_to_look_at():
    held = {g3.ANON: 0, g3.SHMEM: 0, g3.HUGE: 0, g3.KERNEL: 0, g3.CACHE: 50 * GIB}
    assert g3.fix_for(held, [], False) == g3.FIX_FIRST + "\n" + g3.FIX_PROCESSES
    assert g3.fix_for(held, [], True) == g3.FIX_FIRST + "\n" + g3.FIX_CACHE
    assert g3.fix_for(held, [g3.KERNEL, g3.ANON], False) == g3.FIX_FIRST + "\n" + g3.FIX_PROCESSES  # one block once
    assert g3.fix_for(None, [], False) == g3.FIX


def test_series_rows_of_the_wrong_shape_are_ignored():
    mem = {**mi(avail=9.0, free=6.0, anon=100.0),
           "series": [None, [1.0], [2.0, "x", 1], ["t", 7 * GIB, 1], [3.0, 9 * GIB, None], {"t": 4}]}
    assert status(mem) == "ok"  # no usable under-floor row
    assert status({**mem, "series": "not a list"}) == "ok"
    assert g3._series({"series": [[2.0, 5, 1], [1.0, 6, 2]]}, 1) == [(1.0, 6.0), (2.0, 5.0)]  # time order
    assert g3._series({"series": [[2.0, 5, None]]}, 2) == []


def test_hysteresis_evidence_and_words():
    pts = [(0.0, 7.5), (1.0, 9.0)]
    v = v_of(with_series(mi(avail=9.0, free=6.0, anon=100.0), pts))
    assert v.summary.startswith("MemAvailable 9.0 GiB of 121.7 GiB: MemAvailable was 7.5 GiB at 00:00:00 UTC, "
                                "under the 8 GiB floor; the warning holds until it stays above 10 GiB for 30 s; held by")
    assert ev(v, "recent MemAvailable") == v.summary.split(": ", 1)[1].split("; held")[0]


# -- review: the branches ------------------------------------------------------------------------
def review(mem: dict, **extra) -> dict:
    return {**mem, "review": True, "t": 1_764_001_390.0, "t0": 1_764_000_000.0, **extra}


def test_review_page_cache_rule_at_the_lowest_memavailable_moment():
    v = v_of(review(_cache_mem(0.40, free=5.0)))
    assert v.status.value == "warn" and v.summary.startswith("reclaimable page cache holds 48.7 GiB (40% of memory)")
    assert "sees only MemFree 5.0 GiB at 16:23:10 UTC (+00:23:10) (MemAvailable 60.0 GiB)" in v.summary


def test_review_page_cache_rule_at_the_lowest_memfree_moment():
    low = {**_cache_mem(0.40, free=5.0), "t": 1_764_000_600.0}
    v = v_of(review(mi(avail=50.0, free=30.0), low_free=low))
    assert v.status.value == "warn" and "sees only MemFree 5.0 GiB at 16:10:00 UTC (+00:10:00)" in v.summary
    assert ev(v, "worst moment (lowest MemFree)") == "16:10:00 UTC (+00:10:00)" and DROP in v.fix
    # the same moment with little cache, with MemFree at the floor, or garbled: no warning from it
    for lf in ({**low, "Cached": 5 * GIB}, {**low, "MemFree": 8 * GIB}, {**low, "MemFree": "N/A"},
               {**low, "MemTotal": 0}, {**low, "Shmem": low["MemTotal"] + 1}, "not a dict",
               {k: x for k, x in low.items() if k != "MemTotal"}):
        assert status(review(mi(avail=50.0, free=30.0), low_free=lf)) == "ok", lf


def test_review_without_a_time_says_so():
    mem = {**review(mi(avail=5.0, free=2.0)), "t": None}
    v = v_of(mem)
    assert v.status.value == "warn" and "at an unknown time" in v.summary
    assert ev(v, "worst moment") == "at an unknown time"


def test_review_ok_mentions_a_big_cache():
    v = v_of(review(_cache_mem(0.40, free=20.0)))
    assert v.status.value == "ok" and "(floor 8 GiB); reclaimable page cache holds 48.7 GiB" in v.summary
