"""G3 sees the whole pool (issue 26, item 3): tmpfs and a container's /dev/shm against MemTotal,
hugepages reserved and idle, swap and zram; GPU-held memory (NVML per process) beside host-used beside
what CUDA would report, as a breakdown the UI can stack (``pool_breakdown``).

Numbers are GB10's and the field's: MemTotal 127611680 kB (121.7 GiB); a 64 GB shm suspected in hard
power-offs (FIELD-FACTS, community); HugePages reserved skew MemAvailable (nv-monitor README, vllm
#35313); vLLM's ``VLLM::EngineCore 89093MiB`` (FACTS.md, per-process GPU memory on the host);
cudaMemGetInfo follows MemFree (unsloth #10704).
"""

from __future__ import annotations

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Status
from sparktui.gotchas import g03_unified_memory as g3
from tests.gotchas.builders import GIB, MIB, NVML_GB10, snap, value_of as ev, vllm

KB = 1024
TOTAL_KB = 127611680
TOTAL = TOTAL_KB * KB
ENGINE_CORE = 89093 * MIB


def gb10(**kb) -> dict:
    m = {"MemTotal": TOTAL_KB, "MemFree": 62914560, "MemAvailable": 104857600, "Buffers": 314572,
         "Cached": 20971520, "AnonPages": 18874368, "Shmem": 524288, "KReclaimable": 1048576,
         "SReclaimable": 1048576, "SwapTotal": 0, "SwapFree": 0, "HugePages_Total": 0, "HugePages_Free": 0,
         "HugePages_Rsvd": 0, "Hugepagesize": 2048}
    m.update(kb)
    return {k: v if k.startswith("HugePages_") else v * KB for k, v in m.items()}


def shm(used: int, size: int = 64 * 10 ** 9, point: str = "/dev/shm") -> dict:
    return {"mountpoint": point, "fstype": "tmpfs", "size_option_bytes": size, "size_bytes": size, "used_bytes": used}


def pool(*tmpfs: dict, inside: bool | None = False, **extra) -> dict:
    d = {"tmpfs": list(tmpfs), "shm": next((m for m in tmpfs if m["mountpoint"] == "/dev/shm"), None),
         "inside_container": inside, "hugepages": [], "swaps": [], "zram": [], "errors": {}, "read_at": 1.0}
    d.update(extra)
    return d


def judged(mem: dict, pool_data: dict | None = None, pool_error: str | None = None, processes: dict | None = None):
    r = Readings()
    r.add(Reading("meminfo", mem, source="/proc/meminfo"))
    r.add(Reading("nvml", NVML_GB10, source="NVML"))
    r.add(Reading("host", {"machine": "aarch64"}, source="uname"))
    if pool_data is not None or pool_error is not None:
        r.add(Reading("pool", pool_data, error=pool_error, source="probes/pool.py"))
    if processes is not None:
        r.add(Reading("processes", processes, source="process scan"))
    return g3.GOTCHA.judge(r, Config()), r


# -- tmpfs /dev/shm ------------------------------------------------------------------------------------

SQUEEZED = dict(MemAvailable=5242880, MemFree=2097152, Cached=60000000, Shmem=58593750, AnonPages=20000000)


def test_a_64_gb_shm_that_squeezes_memavailable_is_named_in_the_warning_and_its_block_comes_first():
    v, _ = judged(gb10(**SQUEEZED), pool(shm(60 * 10 ** 9)))
    assert v.status is Status.WARN
    assert "; tmpfs /dev/shm holds 55.9 GiB" in v.summary
    assert ev(v, "tmpfs /dev/shm") == ("55.9 GiB used of a 59.6 GiB limit (49% of memory): its files stay in the "
                                       "pool, no cache drop frees them")
    assert "df -h /dev/shm" in v.fix.split("```")[1]


def test_inside_a_container_dev_shm_is_its_shm_size():
    v, _ = judged(gb10(), pool(shm(0, size=64 << 20), inside=True))
    assert v.status is Status.OK
    assert "(this container's --shm-size)" in ev(v, "tmpfs /dev/shm")


def test_a_tmpfs_that_may_take_over_half_the_pool_is_named_but_alone_does_not_warn():
    big = shm(1 << 30, size=int(0.51 * TOTAL), point="/mnt/scratch")
    small = shm(1 << 30, size=int(0.49 * TOTAL), point="/mnt/other")
    v, _ = judged(gb10(), pool(big, small))
    assert v.status is Status.OK
    assert "(51% of memory)" in ev(v, "tmpfs /mnt/scratch")
    assert not any(e.what == "tmpfs /mnt/other" for e in v.evidence)


def test_a_tmpfs_holding_the_floors_worth_is_named_whatever_its_limit():
    v, _ = judged(gb10(), pool(shm(8 * GIB, size=10 * GIB, point="/run/ckpt")))
    assert ev(v, "tmpfs /run/ckpt").startswith("8.0 GiB used of a 10.0 GiB limit")


def test_pool_unread_says_so():
    v, _ = judged(gb10(), pool_error="cannot read /proc/mounts: Permission denied")
    assert ev(v, "tmpfs, hugepages, swap") == "unread: cannot read /proc/mounts: Permission denied"
    assert v.status is Status.OK


def test_a_part_the_probe_could_not_read_is_a_row():
    v, _ = judged(gb10(), pool(errors={"swaps": "cannot read /proc/swaps: No such file or directory"}))
    assert ev(v, "pool: swaps") == "unread: cannot read /proc/swaps: No such file or directory"


# -- hugepages ---------------------------------------------------------------------------------------

def test_idle_reserved_hugepages_are_named_as_holders():
    """40 GiB of 2 MiB pages reserved, all free, promised to no mapping: MemAvailable does not count them."""
    mem = gb10(MemAvailable=5242880, MemFree=3000000, HugePages_Total=20480, HugePages_Free=20480,
               AnonPages=40000000)
    v, _ = judged(mem)
    assert v.status is Status.WARN
    assert "hugepages reserved 40.0 GiB" in v.summary
    assert v.summary.endswith("; 40.0 GiB of the hugepages are idle (reserved, used by no program)")
    assert "nr_hugepages" in v.fix


def test_hugepages_promised_to_a_mapping_are_not_idle():
    mem = gb10(MemAvailable=5242880, MemFree=3000000, HugePages_Total=2048, HugePages_Free=2048, HugePages_Rsvd=2048,
               AnonPages=40000000)
    v, _ = judged(mem)
    assert "idle" not in v.summary and "hugepages reserved" not in v.summary  # 4 GiB: under the holders' share


def test_hugepages_of_every_size_from_the_pool_reading():
    pages = [{"size_bytes": 1 << 30, "total": 16, "free": 16, "reserved": 0, "surplus": 0},
             {"size_bytes": 2 << 20, "total": 0, "free": 0, "reserved": 0, "surplus": 0}]
    v, _ = judged(gb10(), pool(hugepages=pages))
    assert ev(v, "hugepages of 1.0 GiB") == "16 reserved (16.0 GiB), 16 free, 0 promised to a mapping: 16.0 GiB idle"
    assert not any(e.what == "hugepages of 0.0 GiB" for e in v.evidence)
    assert g3.idle_hugepages(gb10(), pool(hugepages=pages)) == 16 * GIB


# -- swap and zram -----------------------------------------------------------------------------------

def test_swap_and_zram_rows():
    swaps = [{"name": "/dev/zram0", "type": "partition", "size_bytes": 8 * GIB, "used_bytes": 2 * GIB, "priority": 100,
              "zram": True}]
    zram = [{"name": "zram0", "disksize_bytes": 8 * GIB, "orig_data_bytes": 2 * GIB, "compr_data_bytes": GIB // 2,
             "mem_used_bytes": GIB // 2}]
    v, _ = judged(gb10(), pool(swaps=swaps, zram=zram))
    assert ev(v, "swap /dev/zram0") == "2.0 GiB used of 8.0 GiB (zram: compressed into the pool itself)"
    assert ev(v, "zram zram0") == "2.0 GiB stored in 0.5 GiB of the pool"


# -- GPU-held beside host-used beside what CUDA reports ---------------------------------------------------

def test_breakdown_with_vllm_on_the_gpu_sums_to_memtotal():
    mem = gb10(MemAvailable=20971520, MemFree=10485760)
    _, r = judged(mem, processes=snap(vllm(5120, 0.9, ENGINE_CORE)))
    parts = g3.pool_breakdown(r)
    assert [k for k, _ in parts] == ["gpu", "host", "unseen", "free"]
    got = dict(parts)
    assert got["gpu"] == ENGINE_CORE
    assert got["host"] == TOTAL - 20971520 * KB - ENGINE_CORE
    assert got["unseen"] == (20971520 - 10485760) * KB and got["free"] == 10485760 * KB
    assert sum(got.values()) == TOTAL
    assert set(g3.BREAKDOWN_LABELS) >= set(got)


def test_breakdown_evidence_puts_gpu_held_beside_host_used():
    v, _ = judged(gb10(MemAvailable=20971520, MemFree=10485760), processes=snap(vllm(5120, 0.9, ENGINE_CORE)))
    assert ev(v, "GPU-held (sum of NVML per-process used memory)") == "87.0 GiB"
    assert ev(v, "host-used (MemTotal - MemAvailable)") == "101.7 GiB"
    assert ev(v, "MemFree (what CUDA's free-memory call reports)") == "10.0 GiB"


def test_gpu_held_unknown_is_never_zero():
    for processes, why in ((snap(vllm(5120, 0.9, ENGINE_CORE), nv_ok=False), "NVML process list unavailable"),
                           (snap(vllm(5120, 0.9, None)), "without a figure"),
                           (snap(vllm(5120, 0.9, ENGINE_CORE), inside=True), "inside a container")):
        v, r = judged(gb10(), processes=processes)
        assert why in ev(v, "GPU-held")
        parts = g3.pool_breakdown(r)
        assert parts[0][0] == "used" and sum(b for _, b in parts) == TOTAL


def test_hugepage_sizes_without_counts_fall_back_to_meminfo():
    unread = [{"size_bytes": 2 << 20, "total": None, "free": None, "reserved": None, "surplus": None}]
    mem = gb10(HugePages_Total=1024, HugePages_Free=1024, HugePages_Rsvd=24)
    assert g3.idle_hugepages(mem, pool(hugepages=unread)) == 1000 * (2 << 20)
    half = [{"size_bytes": 2 << 20, "total": 8, "free": None, "reserved": 0, "surplus": 0}]
    assert g3.idle_hugepages(mem, pool(hugepages=half)) == 1000 * (2 << 20)


def test_nothing_available_is_still_a_breakdown():
    r = Readings()
    r.add(Reading("meminfo", gb10(MemAvailable=0, MemFree=0), source="/proc/meminfo"))
    assert dict(g3.pool_breakdown(r)) == {"used": TOTAL, "unseen": 0, "free": 0}


def test_breakdown_without_the_figures_is_none():
    r = Readings()
    r.add(Reading("meminfo", {"MemTotal": TOTAL}, source="/proc/meminfo"))
    assert g3.pool_breakdown(r) is None
    assert g3.pool_breakdown(Readings()) is None


def test_memfree_above_memavailable_still_sums_to_memtotal():
    r = Readings()
    r.add(Reading("meminfo", gb10(MemAvailable=10485760, MemFree=12582912), source="/proc/meminfo"))
    parts = dict(g3.pool_breakdown(r))
    assert parts["unseen"] == 0 and sum(parts.values()) == TOTAL


def test_a_recording_puts_beside_its_worst_moment_the_scan_nearest_it():
    early = dict(snap(vllm(5120, 0.9, 10 * GIB)), t=1_764_001_000.0)
    late = dict(snap(vllm(5120, 0.9, ENGINE_CORE)), t=1_764_001_260.0)
    processes = dict(late, history=[early, late], review=True)
    mem = {**gb10(MemAvailable=20971520, MemFree=10485760), "review": True, "t": 1_764_001_250.0,
           "t0": 1_764_000_000.0}
    v, _ = judged(mem, processes=processes)
    row = next(e for e in v.evidence if e.what.startswith("GPU-held"))
    assert row.value == "87.0 GiB" and row.source == "NVML, 1 process(es), scan at 16:21:00 UTC"
    processes = dict(late, history=[{k: x for k, x in early.items() if k != "t"}], review=True)
    v, _ = judged(mem, processes=processes)
    assert ev(v, "GPU-held") == "unknown: no process scan of the recording has a time"
