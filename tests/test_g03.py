"""G3 judged from /proc/meminfo figures only; NVML's memory answer is evidence, never the basis."""

from __future__ import annotations

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.gotchas.g03_unified_memory import GOTCHA, judge
from sparktui.probes.host import parse_meminfo
from tests.conftest import readings_of

GIB = 1024 ** 3
NVML_GB10 = {"devices": [{"index": 0, "name": {"value": "NVIDIA GB10"},
                          "memory": {"value": None, "error": "NOT_SUPPORTED (Not Supported)"}}]}


def mem(total=121.7, free=60.0, avail=100.0, cached=30.0, buffers=0.3, sreclaim=1.0, shmem=0.5):
    g = lambda x: int(x * GIB)  # noqa: E731
    return {"MemTotal": g(total), "MemFree": g(free), "MemAvailable": g(avail), "Buffers": g(buffers),
            "Cached": g(cached), "SReclaimable": g(sreclaim), "Shmem": g(shmem), "SwapTotal": 0, "SwapFree": 0}


def ev(v, what):
    return next(e.value for e in v.evidence if e.what.startswith(what))


def test_page_cache_holding_most_memory_is_pointed_out():
    # 80 GiB of page cache, 3 GiB MemFree: MemAvailable is fine but CUDA's free-memory call sees 3 GiB.
    v = judge(readings_of(meminfo=mem(free=3.0, avail=85.0, cached=80.0), nvml=NVML_GB10), Config())
    assert v.status.value == "warn"
    # Buffers 0.3 + Cached 80 - Shmem 0.5 + SReclaimable 1.0: the tmpfs part is not reclaimable cache
    assert "reclaimable page cache holds 80.8 GiB" in v.summary and "MemFree 3.0 GiB" in v.summary
    assert ev(v, "NVML device memory") == "unavailable: NOT_SUPPORTED (Not Supported)"
    assert "drop_caches" in v.fix and "root" in v.fix and "system-wide" in v.fix and "between runs" in v.fix


def test_available_under_the_floor_warns():
    v = judge(readings_of(meminfo=mem(free=2.0, avail=5.5, cached=4.0), nvml=NVML_GB10), Config())
    assert v.status.value == "warn" and "MemAvailable 5.5 GiB of 121.7 GiB, under the 8 GiB floor" in v.summary
    assert ev(v, "MemAvailable") == "5.5 GiB"


def test_floor_comes_from_config():
    cfg = Config().with_overrides(memory={"available_floor_gib": 4.0})
    assert judge(readings_of(meminfo=mem(free=5.0, avail=5.5, cached=1.0)), cfg).status.value == "ok"


def test_healthy_pool_is_ok_with_the_free_table():
    v = judge(readings_of(meminfo=mem(), nvml=NVML_GB10), Config())
    assert v.status.value == "ok" and v.summary.startswith("MemAvailable 100.0 GiB of 121.7 GiB")
    assert v.details[0].split() == ["total", "used", "free", "shared", "buff/cache", "available"]
    assert v.details[1].split()[:3] == ["Mem:", "121", "21"]  # used = total - available


def test_large_cache_with_enough_memfree_is_ok_but_mentioned():
    v = judge(readings_of(meminfo=mem(free=40.0, avail=95.0, cached=50.0)), Config())
    assert v.status.value == "ok" and "page cache holds" in v.summary


def test_missing_meminfo_is_unknown_with_the_reason():
    v = judge(readings_of(meminfo=None), Config())
    assert v.status.value == "unknown" and "meminfo unavailable (test)" in v.summary
    v = judge(readings_of(meminfo={"MemTotal": 1}), Config())
    assert v.status.value == "unknown" and "MemAvailable" in v.summary


def test_real_meminfo_text_parses_into_a_verdict():
    text = ("MemTotal:       127611680 kB\nMemFree:         2097152 kB\nMemAvailable:    5767168 kB\n"
            "Buffers:          314572 kB\nCached:          4194304 kB\nShmem:            838860 kB\n")
    v = judge(readings_of(meminfo=parse_meminfo(text)), Config())
    assert v.status.value == "warn" and "5.5 GiB" in v.summary


def test_g3_never_asks_nvml_for_memory_and_says_when_nvml_is_missing():
    assert GOTCHA.probes == ("meminfo", "nvml")
    r = readings_of(meminfo=mem())
    r.add(Reading("nvml", None, error="nvmlInit failed: LIBRARY_NOT_FOUND", source="NVML"))
    v = judge(r, Config())
    assert v.status.value == "ok" and "LIBRARY_NOT_FOUND" in ev(v, "NVML")
