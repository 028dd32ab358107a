"""G3 pinned on GB10's own figures: every threshold just below and just above with literal numbers
(never ``g3.CONSTANT - 0.01``, which moves along with the constant), every evidence row with its
source, every unknown path, and the review-mode branches.

GB10 (docs/reference/FACTS.md, docs/reference/FIELD-FACTS.md): MemTotal 127611680 kB (121.7 GiB usable); NVML device memory
NOT_SUPPORTED; CUDA's free-memory call follows MemFree (a 60 GB write: CUDA-free 103 -> 42 GiB with
MemAvailable ~116 GiB, unsloth #10704); swap on a Spark has been reported with host freezes, and
PSI (/proc/pressure/memory) shows stalls before the OOM killer.
"""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.gotchas import g03_unified_memory as g3
from sparktui.gotchas.g03_unified_memory import GOTCHA, judge
from sparktui.probes.host import parse_meminfo
from tests.conftest import readings_of
from tests.gotchas.builders import CFG, DROP, GIB, NVML_GB10, SWAP_KB, value_of as ev

KB = 1024
TOTAL_KB = 127611680  # GB10 MemTotal
SRC = "/proc/meminfo"
PSI_SRC = "/proc/pressure/memory"


def gb10(**kb) -> dict:
    """A GB10 /proc/meminfo in bytes from kB figures (healthy: 100 GiB available, 20 GiB cache)."""
    m = {"MemTotal": TOTAL_KB, "MemFree": 62914560, "MemAvailable": 104857600, "Buffers": 314572,
         "Cached": 20971520, "SwapCached": 0, "AnonPages": 18874368, "Mapped": 2097152, "Shmem": 524288,
         "KReclaimable": 1048576, "SReclaimable": 1048576, "SwapTotal": 16777212, "SwapFree": 16777212,
         "HugePages_Total": 0, "HugePages_Free": 0, "Hugepagesize": 2048}
    m.update(kb)
    out = {}
    for k, v in m.items():
        if v is None:
            continue
        out[k] = v if k.startswith("HugePages_") else v * KB
    return out


def idle_psi(**over) -> dict:
    psi = {"some": {"avg10": 0.0, "avg60": 0.0, "avg300": 0.0, "total": 0.0},
           "full": {"avg10": 0.0, "avg60": 0.0, "avg300": 0.0, "total": 0.0}}
    for key, value in over.items():
        kind, avg = key.split("_")
        psi[kind][avg] = value
    return psi


def readings(mem: dict | None, source: str = SRC, nvml=NVML_GB10, nvml_source: str = "NVML") -> Readings:
    r = Readings()
    r.add(Reading("meminfo", mem, error=None if mem is not None else "cannot read /proc/meminfo: EACCES",
                  source=source))
    if nvml is not None:
        r.add(Reading("nvml", nvml, source=nvml_source))
    return r


def v_of(mem: dict, cfg: Config = CFG, **kw):
    return judge(readings(mem, **kw), cfg)


def row(v, what: str):
    return next(e for e in v.evidence if e.what.startswith(what))


def whats(v) -> list[str]:
    return [e.what for e in v.evidence]


# -- thresholds, with literal numbers ---------------------------------------------------------------
@pytest.mark.parametrize("f10,expected", [(4.99, "ok"), (5.0, "warn"), (5.01, "warn")])
def test_psi_full_avg10_warns_from_five_percent(f10, expected):
    v = v_of({**gb10(), "psi": idle_psi(full_avg10=f10)})
    assert v.status.value == expected
    if expected == "warn":
        assert v.summary.startswith(f"memory stalls: PSI full avg10 {f10:.2f}%")
        assert "warn at 5%" in v.summary and g3.FIX_PRESSURE in v.fix


@pytest.mark.parametrize("s60,expected", [(9.99, "ok"), (10.0, "warn"), (10.01, "warn")])
def test_psi_some_avg60_warns_from_ten_percent(s60, expected):
    v = v_of({**gb10(), "psi": idle_psi(some_avg60=s60)})
    assert v.status.value == expected
    if expected == "warn":
        assert v.summary.startswith(f"memory stalls: PSI some avg60 {s60:.2f}% (warn at 10%)")


def test_psi_at_one_hundred_percent_is_a_reading_and_above_is_not():
    v = v_of({**gb10(), "psi": idle_psi(full_avg10=100.0, some_avg60=100.0)})
    assert v.status.value == "warn" and "PSI full avg10 100.00%" in v.summary and "PSI some avg60 100.00%" in v.summary
    v = v_of({**gb10(), "psi": idle_psi(full_avg10=100.01, some_avg60=-0.01)})
    assert v.status.value == "ok" and g3.FIX_PRESSURE not in v.fix
    assert row(v, "PSI memory").what == "PSI memory some avg10 / avg60 / avg300 (share of time some tasks waited for memory)"
    bad = [e for e in v.evidence if e.what == "PSI memory"][0]
    assert bad.source == PSI_SRC
    assert bad.value == "figures outside 0..100% (some -0.01, full 100.01): not evidence either way"


# swap: 1 GiB used while MemAvailable is under a quarter of 127611680 kB (31902920 kB)
QUARTER_KB = TOTAL_KB // 4  # 31902920, exact


@pytest.mark.parametrize("used_kb,expected", [(1048575, "ok"), (1048576, "warn"), (1048577, "warn")])
def test_swap_warns_from_one_gib_in_use(used_kb, expected):
    mem = {**gb10(MemAvailable=20971520, MemFree=10485760, SwapFree=SWAP_KB - used_kb), "psi": idle_psi()}
    v = v_of(mem)
    assert v.status.value == expected
    if expected == "warn":
        assert v.summary.startswith("swapping: 1.0 GiB of swap in use with MemAvailable 20.0 GiB under 25% of memory")
        assert g3.FIX_PRESSURE in v.fix and "swapon --show" in v.fix and "vm.swappiness=10" in v.fix


@pytest.mark.parametrize("avail_kb,expected", [(QUARTER_KB - 1, "warn"), (QUARTER_KB, "ok"), (QUARTER_KB + 1, "ok")])
def test_swap_counts_only_under_a_quarter_of_memtotal_available(avail_kb, expected):
    mem = {**gb10(MemAvailable=avail_kb, MemFree=10485760, SwapFree=SWAP_KB - 3 * 1048576), "psi": idle_psi()}
    v = v_of(mem)
    assert v.status.value == expected
    assert row(v, "swap used").value == "3.0 GiB" and row(v, "swap used").source == SRC


def test_swap_reading_that_is_not_there_or_not_a_number_is_no_swap_warning():
    low = dict(MemAvailable=20971520, MemFree=10485760)
    assert v_of({**gb10(**low, SwapTotal=None), "psi": idle_psi()}).status.value == "ok"
    assert v_of({**gb10(**low, SwapFree=None), "psi": idle_psi()}).status.value == "ok"
    # a swap of exactly 1 GiB, all of it in use: SwapTotal > 0 is enough
    assert v_of({**gb10(**low, SwapTotal=1048576, SwapFree=0), "psi": idle_psi()}).status.value == "warn"


def test_pressure_on_an_ok_pool_leads_and_on_a_warning_follows():
    ok = v_of({**gb10(), "psi": idle_psi(full_avg10=12.5, some_avg60=20.0)})
    assert ok.summary == ("memory stalls: PSI full avg10 12.50% (every task waited for memory; warn at 5%); "
                          "memory stalls: PSI some avg60 20.00% (warn at 10%); "
                          "MemAvailable 100.0 GiB of 121.7 GiB (floor 8 GiB)")
    # the headline is the pressure: its block comes first (issue 24: the fix answers the headline's cause)
    assert ok.fix.startswith(g3.FIX_FIRST + "\n" + g3.FIX_PRESSURE)
    low = v_of({**gb10(MemAvailable=5242880, MemFree=2097152), "psi": idle_psi(full_avg10=12.5)})
    assert low.summary.startswith("MemAvailable 5.0 GiB of 121.7 GiB, under the 8 GiB floor; held by ")
    assert low.summary.endswith("; memory stalls: PSI full avg10 12.50% (every task waited for memory; warn at 5%)")


def test_psi_rows_say_which_tasks_and_show_each_average():
    v = v_of({**gb10(), "psi": {"some": {"avg10": 1.53, "avg60": 0.87, "avg300": 0.29},
                                "full": {"avg10": 0.0, "avg60": 0.13}}})
    some, full = row(v, "PSI memory some"), row(v, "PSI memory full")
    assert some.what.endswith("(share of time some tasks waited for memory)") and some.value == "1.53% / 0.87% / 0.29%"
    assert full.what.endswith("(share of time all tasks waited for memory)") and full.value == "0.00% / 0.13% / ?"
    assert some.source == full.source == PSI_SRC


def test_psi_figures_within_range_are_no_bad_figures_row():
    for psi in (idle_psi(), idle_psi(some_avg10=0.5, some_avg60=0.5, full_avg10=0.5, full_avg60=0.5)):
        v = v_of({**gb10(), "psi": psi})
        assert v.status.value == "ok" and "PSI memory" not in whats(v)
        assert not any("outside 0..100%" in str(e.value) for e in v.evidence)


def test_psi_with_only_a_some_line_judges_some():
    v = v_of({**gb10(), "psi": {"some": {"avg10": 30.0, "avg60": 10.0, "avg300": 2.0}}})
    assert v.status.value == "warn" and "PSI some avg60 10.00%" in v.summary
    assert not any(w.startswith("PSI memory full") for w in whats(v)) and "PSI memory" not in whats(v)
    v = v_of({**gb10(), "psi": {"full": {"avg10": 6.0, "avg60": 1.0, "avg300": 0.2}, "some": "garbled"}})
    assert v.status.value == "warn" and "PSI full avg10 6.00%" in v.summary
    v = v_of({**gb10(), "psi": {"some": {"avg10": 1.0, "avg60": 12.0, "avg300": 2.0}, "full": "garbled"}})
    assert v.status.value == "warn" and "PSI some avg60 12.00%" in v.summary and "PSI memory" not in whats(v)


def test_psi_not_read_says_why_from_the_probe():
    v = v_of({**gb10(), "psi_error": "absent: /proc/pressure/memory (a kernel without PSI, or psi=0)"})
    r = row(v, "PSI memory pressure")
    assert r.source == PSI_SRC
    assert r.value == "absent: /proc/pressure/memory (a kernel without PSI, or psi=0): not evidence either way"
    v = v_of({**gb10(), "psi_error": 42, "psi": {}})
    assert row(v, "PSI memory pressure").value.startswith("not in this reading")


# -- the floor and the cache share, on GB10 figures --------------------------------------------------
@pytest.mark.parametrize("avail_kb,expected", [(8388607, "warn"), (8388608, "ok")])
def test_the_eight_gib_floor_on_gb10(avail_kb, expected):
    v = v_of(gb10(MemAvailable=avail_kb, MemFree=4194304, AnonPages=100000000, Cached=4194304))
    assert v.status.value == expected


def test_unsloth_10704_cuda_free_42_gib_with_116_available_is_ok_and_explained():
    v = v_of(gb10(MemFree=44040192, MemAvailable=121634816, Cached=63963136, AnonPages=4194304))
    assert v.status.value == "ok"
    assert "sees only MemFree 42.0 GiB" in v.summary and DROP in v.fix


def test_cache_of_without_buffers_or_shmem_counts_no_cache():
    mem = {"MemTotal": TOTAL_KB * KB, "MemAvailable": 100 * GIB, "MemFree": 90 * GIB}
    c = g3.cache_of(mem, CFG)
    assert c.reclaimable is None and c.amount == 0 and c.share == 0 and not c.big
    small = {"MemTotal": 2 * GIB, "MemAvailable": GIB, "MemFree": GIB}
    assert not g3.cache_of(small, CFG).big  # no cache read is no cache seen, even on a small pool
    c = g3.cache_of(gb10(), CFG)
    assert c.amount == c.reclaimable == (314572 + 20971520 - 524288 + 1048576) * KB


# -- evidence: every row, with its source --------------------------------------------------------------
def test_every_meminfo_row_names_the_reading_source():
    mem = gb10(MemAvailable=20971520, MemFree=10485760, SwapFree=SWAP_KB - 3 * 1048576, Unevictable=2097152,
               Mlocked=1048576, Dirty=3145728, HugePages_Total=1024, HugePages_Free=1024, Shmem=13631488,
               Cached=40000000)
    v = v_of({**mem, "skipped_implausible": 2}, source="snapshot spark.json")
    meminfo_rows = [e for e in v.evidence if not e.what.startswith(("PSI", "NVML"))]
    assert len(meminfo_rows) >= 14
    assert {e.source for e in meminfo_rows} == {"snapshot spark.json"}, [(e.what, e.source) for e in meminfo_rows]
    assert row(v, "MemTotal").value == "121.7 GiB"
    assert row(v, "MemAvailable").value == "20.0 GiB"
    assert row(v, "MemFree").value == "10.0 GiB"
    assert row(v, "Shmem").value == "13.0 GiB"
    assert row(v, "hugepages reserved").value == "2.0 GiB"
    assert row(v, "Mlocked").value == "1.0 GiB" and row(v, "Unevictable").value == "2.0 GiB"
    assert row(v, "Dirty").value == "3.0 GiB" and row(v, "swap used").value == "3.0 GiB"
    assert row(v, "samples not believed").value == "2 with MemAvailable outside 0..MemTotal"


def test_kernel_share_subtracts_the_hugepages():
    # 121.7 - 10 free - 0.3 buffers - 20 cached - 1 KReclaimable - 18 anon - 20 hugepages = 52.4 GiB
    mem = gb10(MemFree=10485760, MemAvailable=41943040, HugePages_Total=10240, HugePages_Free=10240)
    v = v_of(mem)
    assert row(v, "hugepages reserved").value == "20.0 GiB"
    assert row(v, "kernel and driver").value == "52.4 GiB"
    assert g3.holders(mem)[g3.KERNEL] == (TOTAL_KB - 10485760 - 314572 - 20971520 - 1048576 - 18874368
                                          - 10240 * 2048) * KB


def test_shmem_not_read_is_a_row_only_when_the_cache_was_read():
    v = v_of(gb10(Shmem=None), source="snapshot s.json")
    r = [e for e in v.evidence if e.what == "Shmem"]
    assert len(r) == 1 and r[0].source == "snapshot s.json"
    assert r[0].value == "not read: part of the cache may be tmpfs, which no drop frees"
    assert not any("not read" in str(e.value) for e in v_of(gb10()).evidence)
    bare = v_of(gb10(Shmem=None, Buffers=None))
    assert not any(e.what.startswith("Shmem") for e in bare.evidence)


def test_without_a_source_the_rows_say_proc_meminfo():
    v = v_of(gb10(MemAvailable=5242880, MemFree=2097152), source="")
    assert {e.source for e in v.evidence if not e.what.startswith(("PSI", "NVML"))} == {SRC}


def test_nvml_rows_name_their_source_or_nvml():
    assert row(v_of(gb10(), nvml_source="libnvidia-ml.so.1"), "NVML device memory").source == "libnvidia-ml.so.1"
    assert row(v_of(gb10(), nvml_source=""), "NVML device memory").source == "NVML"
    r = readings(gb10(), nvml=None)
    r.add(Reading("nvml", None, error="nvmlInit failed: DRIVER_NOT_LOADED", source=""))
    r.add(Reading("host", {"machine": "aarch64"}, source="uname"))  # a Spark: NVML unread proves nothing
    nv = row(judge(r, CFG), "NVML")
    assert nv.what == "NVML (not used for this check)" and nv.source == "NVML"
    assert nv.value == "unavailable: nvmlInit failed: DRIVER_NOT_LOADED"
    r = readings(gb10(), nvml=None)
    r.add(Reading("nvml", None, error="nvml was not run", source="NVML"))
    assert not any(w.startswith("NVML") for w in whats(judge(r, CFG)))


# -- unknown paths ------------------------------------------------------------------------------------
def test_no_meminfo_is_unknown_with_the_probes_reason():
    v = judge(readings(None), CFG)
    assert v.id == "G3" and v.status.value == "unknown"
    assert v.summary == "cannot tell: /proc/meminfo unavailable (cannot read /proc/meminfo: EACCES)"
    assert [(e.what, e.source) for e in v.evidence] == [("/proc/meminfo", SRC)]


def test_no_memavailable_is_unknown_as_g3():
    v = v_of({"MemTotal": TOTAL_KB * KB, "MemFree": GIB})
    assert v.id == "G3" and v.status.value == "unknown" and v.fix == "" and v.evidence == ()


def test_hugepages_may_fill_memtotal_exactly():
    # 62310 hugepages of 2 MiB = 127610880 kB: a MemTotal of exactly that (121.7 GiB) holds them all
    base = gb10(MemTotal=127610880, MemFree=0, MemAvailable=0, Buffers=0, Cached=0, Shmem=0, KReclaimable=0,
                SReclaimable=0, AnonPages=0, Mapped=0, HugePages_Free=0)
    assert v_of({**base, "HugePages_Total": 62310}).status.value == "warn"
    v = v_of({**base, "HugePages_Total": 62311})
    assert v.status.value == "unknown"
    assert "62311 hugepages of 0.0 GiB are more than MemTotal 121.7 GiB" in v.summary


def test_a_pool_field_out_of_range_names_memtotal():
    assert "with MemTotal 121.7 GiB" in v_of(gb10(Cached=-1)).summary


def test_figures_not_read_are_a_question_mark_never_zero():
    v = v_of({k: x for k, x in gb10().items() if k != "MemFree"})
    assert row(v, "MemFree").value == "?"
    assert "kernel and driver" not in " ".join(whats(v))


def test_without_reclaimable_slab_figures_nothing_is_added():
    mem = gb10(KReclaimable=None, SReclaimable=None, HugePages_Total=None, HugePages_Free=None, Hugepagesize=None)
    assert g3.reclaimable_cache(mem) == (314572 + 20971520 - 524288) * KB
    held = g3.holders(mem)
    assert held[g3.HUGE] == 0
    assert held[g3.KERNEL] == (TOTAL_KB - 62914560 - 314572 - 20971520 - 18874368) * KB
    v = v_of(mem)
    assert not any(w.startswith("hugepages reserved") for w in whats(v))


def test_held_text_without_a_time_says_so():
    text = g3._held_text("MemAvailable", g3.Below(False, None, 7 * GIB), 8.0)
    assert text.startswith("MemAvailable was 7.0 GiB at an unknown time, under the 8 GiB floor")


def test_a_measurement_error_is_evidence_with_its_reason():
    v = v_of(gb10(Shmem=TOTAL_KB + 1), source="snapshot s.json")
    assert v.id == "G3" and v.status.value == "unknown"
    reason = "Shmem 121.7 GiB is outside what /proc/meminfo can report with MemTotal 121.7 GiB"
    assert v.summary == f"cannot tell: measurement error: {reason}"
    assert [(e.what, e.source, e.value) for e in v.evidence] == [("/proc/meminfo", "snapshot s.json", reason)]


def test_a_hugepage_size_of_zero_reserves_nothing_and_is_no_error():
    v = v_of(gb10(Hugepagesize=0, HugePages_Total=0))
    assert v.status.value == "ok"
    assert v_of(gb10(Hugepagesize=-1)).status.value == "unknown"


def test_what_was_not_read_lists_every_missing_field():
    v = v_of(gb10(MemAvailable=5242880, MemFree=2097152, Shmem=None, AnonPages=None))
    assert "what holds it was not read (no Shmem/AnonPages in this reading)" in v.summary and v.fix == g3.FIX


def test_shmem_of_exactly_ten_percent_is_said_on_an_ok_pool():
    tenth = TOTAL_KB // 10  # 12761168 kB, exact
    v = v_of(gb10(Shmem=tenth, Cached=tenth + 1048576, MemFree=52428800, MemAvailable=94371840))
    assert v.status.value == "ok"
    assert v.summary == "MemAvailable 90.0 GiB of 121.7 GiB (floor 8 GiB); shmem/tmpfs holds 12.2 GiB (no cache drop frees it)"
    v = v_of(gb10(Shmem=tenth - 1, Cached=tenth + 1048576, MemFree=52428800, MemAvailable=94371840))
    assert v.summary == "MemAvailable 90.0 GiB of 121.7 GiB (floor 8 GiB)"


def test_memavailable_hysteresis_row_names_the_source():
    mem = gb10(MemAvailable=9437184, MemFree=6291456, AnonPages=90000000)
    mem["series"] = [[0.0, int(7.5 * GIB), 5 * GIB], [1.0, 9 * GIB, 6 * GIB]]
    v = v_of(mem, source="live")
    r = row(v, "recent MemAvailable")
    assert v.status.value == "warn" and r.source == "live" and r.value.startswith("MemAvailable was 7.5 GiB")


# -- live hysteresis on the page-cache rule -----------------------------------------------------------
def test_memfree_hysteresis_row_says_memfree():
    mem = gb10(MemFree=8912896, MemAvailable=62914560, Cached=60000000)  # MemFree 8.5 GiB, cache ~49%
    mem["series"] = [[0.0, 60 * GIB, int(7.5 * GIB)], [1.0, 60 * GIB, int(8.5 * GIB)]]
    v = v_of(mem)
    assert v.status.value == "warn"
    r = row(v, "recent MemFree")
    assert r.source == SRC and r.value.startswith("MemFree was 7.5 GiB at 00:00:00 UTC, under the 8 GiB floor")
    assert "(MemAvailable 60.0 GiB); " + r.value in v.summary


# -- review mode ---------------------------------------------------------------------------------------
T0, T_LOW = 1_764_000_000.0, 1_764_001_390.0  # 16:00:00 UTC and +00:23:10


def review(mem: dict, **extra) -> dict:
    return {**mem, "review": True, "t": T_LOW, "t0": T0, **extra}


def test_review_under_the_floor_names_holders_and_a_big_cache():
    mem = review(gb10(MemAvailable=5242880, MemFree=2097152, Cached=41943040, AnonPages=20971520))
    v = v_of(mem, source="recording r.jsonl")
    assert v.status.value == "warn"
    assert v.summary.startswith("lowest MemAvailable 5.0 GiB of 121.7 GiB at 16:23:10 UTC (+00:23:10), under the "
                                "8 GiB floor; held by kernel and driver")
    assert "processes' own memory (AnonPages) 20.0 GiB" in v.summary
    assert "; reclaimable page cache holds 40.8 GiB (34% of memory)" in v.summary and DROP in v.fix
    worst = row(v, "worst moment (lowest MemAvailable)")
    assert worst.source == "recording r.jsonl" and worst.value == "16:23:10 UTC (+00:23:10)"


def test_review_under_the_floor_with_a_small_cache_offers_no_drop():
    v = v_of(review(gb10(MemAvailable=5242880, MemFree=2097152, Cached=4194304, AnonPages=50000000)))
    assert v.status.value == "warn" and "page cache holds" not in v.summary and v.summary.endswith(" GiB")
    assert DROP not in v.fix and "gpu-memory-utilization" in v.fix


def test_review_ok_with_a_quiet_low_free_moment_offers_no_drop():
    low = {**gb10(MemFree=41943040, MemAvailable=62914560), "t": T0 + 600}
    v = v_of(review(gb10(), low_free=low))
    assert v.status.value == "ok" and DROP not in v.fix
    assert v.summary == "lowest MemAvailable 100.0 GiB of 121.7 GiB at 16:23:10 UTC (+00:23:10) (floor 8 GiB)"


@pytest.mark.parametrize("free_kb,expected", [(8388607, "warn"), (8388608, "ok")])
def test_review_memfree_floor_at_the_lowest_moment(free_kb, expected):
    v = v_of(review(gb10(MemFree=free_kb, MemAvailable=62914560, Cached=60000000)))
    assert v.status.value == expected


def test_review_low_free_moment_says_memavailable_then():
    low = {**gb10(MemFree=5242880, MemAvailable=62914560, Cached=60000000), "t": T0 + 600}
    v = v_of(review(gb10(), low_free=low), source="recording r.jsonl")
    assert v.status.value == "warn"
    assert v.summary.endswith("sees only MemFree 5.0 GiB at 16:10:00 UTC (+00:10:00) (MemAvailable 60.0 GiB)")
    assert row(v, "worst moment (lowest MemFree)").source == "recording r.jsonl"
    assert DROP in v.fix and "nr_hugepages" not in v.fix and "/dev/shm/*" not in v.fix


def test_a_big_cache_without_memfree_says_memfree_was_not_read():
    mem = {k: x for k, x in gb10(Cached=60000000).items() if k != "MemFree"}
    v = v_of(mem)
    assert v.status.value == "ok" and "sees only MemFree ?" in v.summary


# G3 judged from /proc/meminfo figures only; NVML's memory answer is evidence, never the basis.


def mem(total=121.7, free=60.0, avail=100.0, cached=30.0, buffers=0.3, sreclaim=1.0, shmem=0.5):
    g = lambda x: int(x * GIB)  # noqa: E731
    return {"MemTotal": g(total), "MemFree": g(free), "MemAvailable": g(avail), "Buffers": g(buffers),
            "Cached": g(cached), "SReclaimable": g(sreclaim), "Shmem": g(shmem), "SwapTotal": 0, "SwapFree": 0}


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
    assert GOTCHA.required == ("meminfo", "nvml")  # the others only enrich (host: skip off unified memory)
    r = readings_of(meminfo=mem())
    r.add(Reading("nvml", None, error="nvmlInit failed: LIBRARY_NOT_FOUND", source="NVML"))
    r.add(Reading("host", {"machine": "aarch64"}, source="uname"))  # a Spark: NVML unread proves nothing
    v = judge(r, Config())
    assert v.status.value == "ok" and "LIBRARY_NOT_FOUND" in ev(v, "NVML")
