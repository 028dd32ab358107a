"""G3: out of memory below 128 GB on unified memory.

Judged from /proc/meminfo only. GB10's NVML answers NOT_SUPPORTED for device memory (nvidia-smi
prints [N/A]), and CUDA's free-memory call counts only MemFree, so page cache looks "used" to it.
The verdict names what holds the pool (process memory, tmpfs, hugepages, the kernel and driver,
page cache), because each is freed a different way: drop_caches frees only reclaimable cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.readings import checked
from sparktui.core.shapes import HOST, MEMINFO, NVML, POOL, PROCESSES
from sparktui.core.telemetry import free_gib, render_free_g
from sparktui.core.units import GIB, gib, is_number, when_text
from sparktui.core import validate
from sparktui.core.verdict import EvidenceList, Status, Verdict
from sparktui.gotchas.base import Feed, Gotcha, unknown_from

# Hysteresis at the floor (class 11 of issue 12): once MemAvailable (or MemFree, for the page-cache
# rule) has been under the floor, the warning holds until it has stayed at or above floor + margin
# for the hold time. A pure function of the recent series the meminfo reading carries; a reading
# without a series (one-shot `check`) is judged on the plain threshold.
RECOVER_MARGIN_GIB = 2.0
RECOVER_HOLD_S = 30.0
# Measurement errors (class 3): a MemTotal outside this range is not a DGX Spark-class machine
# (GB10: ~121.7 GiB usable), and no pool field can be negative or exceed MemTotal. One table of what
# hardware can report (core/validate.py) serves G3, G4, G6 and the snapshot reader.
MAX_MEMTOTAL_BYTES = validate.MEMTOTAL_MAX_BYTES
# A holder of memory is named in the summary when it holds at least this share of MemTotal
# (the largest one is always named).
HOLDER_SHARE = 0.10

# Memory pressure (issue 14): stalls and swapping under a job come before the OOM killer. Linux PSI
# (/proc/pressure/memory, Documentation/accounting/psi.rst) gives the share of wall time tasks were
# stalled waiting for memory. "full" = every non-idle task stalled at once: the machine did no work.
# A healthy box reads 0.00; the kernel doc's example trigger is "some 150 ms per 1 s" (15 %), and
# systemd-oomd kills a cgroup at 60 % for 30 s (oomd.conf DefaultMemoryPressureLimit): both well past
# where a job is already slowed, so G3 warns earlier.
PSI_FULL_AVG10_WARN = 5.0  # %: all tasks stalled on memory 0.5 s in each of the last 10 s
PSI_SOME_AVG60_WARN = 10.0  # %: some task stalled on memory a tenth of the last minute (sustained reclaim)
# Swap in use while MemAvailable is low: the kernel is pushing process memory out to make room (swap
# on a Spark has been reported with host freezes: AEON-7/vllm-ultimate-dgx-spark #9). Swap used while
# plenty is available is old and says nothing.
SWAP_USED_MIN_GIB = 1.0
SWAP_LOW_AVAIL_SHARE = 0.25  # MemAvailable under this share of MemTotal counts as low for the swap rule

# The pool beyond meminfo (issue 26; probes/pool.py). A tmpfs (/dev/shm, a container's --shm-size) is
# carved from the pool: its files stay in memory and no cache drop frees them (a 64 GB shm was suspected
# in hard power-offs: a community report). One whose limit is over this share of MemTotal, or whose
# files already hold the floor's worth, is named in the evidence; when MemAvailable is under the floor
# and it holds that much, the warning names it. The kernel's own default limit is half of memory.
TMPFS_SIZE_SHARE = 0.5

# Fields that are parts of MemTotal: each must lie within 0..MemTotal.
POOL_FIELDS = ("MemFree", "MemAvailable", "Buffers", "Cached", "SReclaimable", "KReclaimable", "Shmem",
               "AnonPages", "Unevictable", "Mlocked", "Dirty", "Mapped", "CmaTotal", "CmaFree")

FIX_FIRST = """\
Find out what holds the memory first: `free -g` (the *available* column is what a new allocation can
get) and the process view (`sparktui check G6`: what NVML shows each process holding; GPU allocations
are not in any process's RSS).
"""

FIX_PROCESSES = """\
**Processes hold it** (their own memory, or GPU allocations made through the driver). See which:

```
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
ps -eo pid,rss,args --sort=-rss | head -15
```

Stop what you do not need, or restart an inference server with a lower cap (e.g.
`--gpu-memory-utilization 0.5`). Lower the peak itself when the run is what needs the memory: smaller
batch or sequence length, gradient checkpointing, or load weights without keeping an extra copy mapped
(safetensors load + dequantization is where QLoRA peaks).
"""

FIX_SHMEM = """\
**Shared memory / tmpfs holds it** (/dev/shm, a tmpfs mount: files that live in memory). It is counted
in the cache but nothing reclaims it, and `drop_caches` frees none of it: delete the files. Find them:

```
df -h /dev/shm
sudo du -xsh /dev/shm/* 2>/dev/null | sort -h | tail
```

Stale files left by a crashed DataLoader, NCCL or a container are the usual ones; stop the program
that owns a file before deleting it.
"""

FIX_HUGEPAGES = """\
**Hugepages are reserved** (a pool only programs asking for hugepages can use). If nothing uses them:

```
cat /proc/sys/vm/nr_hugepages
echo 0 | sudo tee /proc/sys/vm/nr_hugepages
```
"""

FIX_CACHE = """\
**Reclaimable page cache** (model files, datasets, checkpoints) is counted as used by CUDA's free-memory
call (and `torch.cuda.mem_get_info`, vLLM's start-up check), though the kernel gives it back to a real
allocation. Between runs you can drop the clean page cache:

```
sync
echo 3 | sudo tee /proc/sys/vm/drop_caches
```

Warnings: it needs root; it is system-wide, so every process on the box loses its cached file reads
(they get slower until the cache refills); it frees only clean cache, not memory a process holds, and
not shared memory or tmpfs. Run it between runs, not during training. sparktui never runs it for you.
"""

FIX_PRESSURE = """\
**Memory pressure (stalls, swapping)**: the kernel is reclaiming or swapping to keep the job going, which
comes before the OOM killer. Watch it while the job runs, and lower the job's peak (above) before it dies:

```
cat /proc/pressure/memory    # some/full avg10: % of the last 10 s tasks waited for memory
free -g; swapon --show       # swap in use
```

GPU allocations on unified memory are never swapped; swapping only delays the failure and can freeze the
host. To keep process memory out of swap: `sudo sysctl vm.swappiness=10` (or `sudo swapoff -a` between runs).
"""

# every block, for when what holds the memory was not read (the cache drop first, as the common case)
FIX = "\n".join((FIX_FIRST, FIX_PROCESSES, FIX_CACHE, FIX_SHMEM, FIX_HUGEPAGES))

# what each holder is called, and the fix block that frees it
ANON, SHMEM, HUGE, KERNEL, CACHE = "anon", "shmem", "huge", "kernel", "cache"
HOLDER_NAMES = {ANON: "processes' own memory (AnonPages)", SHMEM: "shmem/tmpfs (/dev/shm)",
                HUGE: "hugepages reserved", KERNEL: "kernel and driver (GPU allocations among them)",
                CACHE: "reclaimable page cache"}
HOLDER_FIX = {ANON: FIX_PROCESSES, KERNEL: FIX_PROCESSES, SHMEM: FIX_SHMEM, HUGE: FIX_HUGEPAGES, CACHE: FIX_CACHE}


def _gib(v: float | None) -> str:
    """A figure free_gib already turned into GiB (GIB is a power of two: v * GIB is exact)."""
    return "?" if v is None else gib(v * GIB)


_b = gib  # bytes as "12.3 GiB", "?" for no number (core/units)
_num = is_number  # one meaning of a number (core/units)


# -- measurement errors ----------------------------------------------------------------------------
def _not_a_number(mem: Mapping[str, Any]) -> str | None:
    """A meminfo field that is there but is not a number (an edited snapshot, another tool's N/A)."""
    for k in ("MemTotal", "MemAvailable", *POOL_FIELDS, "SwapTotal", "SwapFree", "SwapCached",
              "HugePages_Total", "HugePages_Free", "Hugepagesize"):
        v = mem.get(k)
        if v is not None and not _num(v):
            return f"{k} is {v!r}, not a number"
    return None


def _impossible(mem: Mapping[str, Any]) -> str | None:
    """Why these figures cannot come from the machine, or None. All fields are numbers or None."""
    total = mem["MemTotal"]
    if not 0 < total <= MAX_MEMTOTAL_BYTES:
        return f"MemTotal {_b(total)} is outside what a DGX Spark-class machine can have (0 to 2 TiB)"
    for k in POOL_FIELDS:
        v = mem.get(k)
        if v is not None and not 0 <= v <= total:
            return f"{k} {_b(v)} is outside what /proc/meminfo can report with MemTotal {_b(total)}"
    st, sf = mem.get("SwapTotal"), mem.get("SwapFree")
    if (st is not None and st < 0) or (sf is not None and sf < 0) or (st is not None and sf is not None and sf > st):
        return f"SwapFree {_b(sf)} with SwapTotal {_b(st)} is not possible"
    ht, hf, hs = mem.get("HugePages_Total"), mem.get("HugePages_Free"), mem.get("Hugepagesize")
    if (ht is not None and ht < 0) or (hf is not None and (hf < 0 or (ht is not None and hf > ht))):
        return f"HugePages_Free {hf} with HugePages_Total {ht} is not possible"
    if hs is not None and hs < 0:
        return f"Hugepagesize {_b(hs)} is not possible"
    if ht is not None and hs is not None and ht * hs > total:
        return f"{ht:g} hugepages of {_b(hs)} are more than MemTotal {_b(total)}"
    return None


# -- what holds the memory ------------------------------------------------------------------------
HOLDER_KEYS = ("MemTotal", "MemFree", "Buffers", "Cached", "Shmem", "AnonPages")  # to tell the holders apart


def reclaimable_cache(mem: Mapping[str, Any]) -> int | float | None:
    """Page cache the kernel can give back: Buffers + Cached - Shmem + KReclaimable (SReclaimable
    on kernels without it). None when Shmem was not read: then nobody can tell what of the cache is
    tmpfs, which no drop frees."""
    if any(mem.get(k) is None for k in ("Buffers", "Cached", "Shmem")):
        return None
    kre = mem.get("KReclaimable")
    if kre is None:
        kre = mem.get("SReclaimable") or 0
    return max(mem["Buffers"] + mem["Cached"] - mem["Shmem"], 0) + kre


def holders(mem: Mapping[str, Any]) -> dict[str, float] | None:
    """Bytes held by each kind of holder, or None when the fields to tell them apart were not read.

    used (MemTotal - MemFree) = Buffers + Cached (Shmem is part of it) + KReclaimable + AnonPages
    + hugepages reserved + the rest: unreclaimable kernel memory and the driver's allocations, GPU
    memory among them on GB10 (it is in no process's RSS)."""
    if any(mem.get(k) is None for k in HOLDER_KEYS):
        return None
    kre = mem.get("KReclaimable")
    if kre is None:
        kre = mem.get("SReclaimable") or 0
    ht, hs = mem.get("HugePages_Total"), mem.get("Hugepagesize")
    huge = ht * hs if ht is not None and hs is not None else 0
    kernel = mem["MemTotal"] - mem["MemFree"] - mem["Buffers"] - mem["Cached"] - kre - mem["AnonPages"] - huge
    return {ANON: mem["AnonPages"], SHMEM: mem["Shmem"], HUGE: huge, KERNEL: max(kernel, 0),
            CACHE: reclaimable_cache(mem) or 0}


STACK_ORDER = (KERNEL, ANON, SHMEM, HUGE, CACHE)  # bottom up: what no drop frees first, then the cache
STACK_LABELS = {KERNEL: "driver/GPU", ANON: "processes", SHMEM: "shmem", HUGE: "hugepages", CACHE: "cache",
                "free": "free"}


def pool_stack(mem: Mapping[str, Any]) -> list[tuple[str, float]] | None:
    """The unified pool as G3 attributes it, as (holder, bytes) parts from the bottom of a stacked
    plot up, then MemFree: they sum to MemTotal (more, where fields read at different moments leave
    the kernel's remainder below 0: it is then 0). None when the holders were not read."""
    held = holders(mem)
    if held is None:
        return None
    return [(k, float(held[k])) for k in STACK_ORDER] + [("free", float(mem["MemFree"]))]


def named_holders(held: dict[str, float], total: float) -> list[str]:
    """The holders of memory that no cache drop gives back, largest first: those over HOLDER_SHARE of
    MemTotal, or the largest one."""
    kinds = sorted((k for k in (KERNEL, ANON, SHMEM, HUGE) if held[k] > 0), key=lambda k: -held[k])
    big = [k for k in kinds if held[k] >= HOLDER_SHARE * total]
    return big or kinds[:1]


def _holders_text(mem: Mapping[str, Any], held: dict[str, float] | None, names: list[str]) -> str:
    if held is None:
        missing = "/".join(k for k in HOLDER_KEYS if mem.get(k) is None)
        return f"what holds it was not read (no {missing} in this reading)"
    if not names:
        return "nothing holds it but the cache"
    return "held by " + ", ".join(f"{HOLDER_NAMES[k]} {_b(held[k])}" for k in names)


# what the headline blames, for the fix to answer first
LEAD_HOLDERS, LEAD_CACHE, LEAD_PRESSURE = "holders", "cache", "pressure"


def cache_at(when: str) -> str:
    """The page-cache block for a rule that fired at another moment than the headline's: says when."""
    return (f"**At {when}, another moment than the headline's**, the page-cache rule fired: reclaimable "
            f"cache left MemFree under the floor.\n\n" + FIX_CACHE)


def fix_for(held: dict[str, float] | None, names: list[str], cache_big: bool, lead: str = LEAD_HOLDERS,
            cache_when: str | None = None, pressure: bool = False) -> str:
    """The fix blocks that fit what holds the memory, the headline's cause first (after the line on
    finding out): what it names as holding the pool, the page cache when the cache rule is the
    headline, the pressure block when pressure is. Every block when the holders were not read. A
    cache rule that fired at another moment (``cache_when``) comes after, saying when."""
    if held is None:
        blocks = [FIX_FIRST] + ([FIX_CACHE] if lead == LEAD_CACHE else []) + [
            FIX_PROCESSES, FIX_CACHE, FIX_SHMEM, FIX_HUGEPAGES]
    else:
        blocks = [FIX_FIRST] + ([FIX_CACHE] if lead == LEAD_CACHE else [])
        blocks += [HOLDER_FIX[k] for k in names]
        if cache_big:
            blocks.append(FIX_CACHE)
        if len(blocks) == 1:
            blocks.append(FIX_PROCESSES)
    if cache_when is not None and FIX_CACHE not in blocks:
        blocks.append(cache_at(cache_when))
    if pressure:
        blocks.insert(1, FIX_PRESSURE) if lead == LEAD_PRESSURE else blocks.append(FIX_PRESSURE)
    return "\n".join(dict.fromkeys(blocks))


# -- hysteresis ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Below:
    """The floor rule fires: under the floor now, or held since the last time it was."""

    now: bool
    t: float | None = None  # when it was last under the floor (series only)
    value: float | None = None  # bytes then


def _series(mem: Mapping[str, Any], col: int) -> list[tuple[float, float]]:
    rows = mem.get("series")
    if not isinstance(rows, list):
        return []
    out = []
    for row in rows:
        if isinstance(row, (list, tuple)) and len(row) > col and _num(row[0]) and _num(row[col]):
            out.append((float(row[0]), float(row[col])))
    return sorted(out)


def below_floor(now: float, series: list[tuple[float, float]], floor_b: float,
                margin_b: float = RECOVER_MARGIN_GIB * GIB, hold_s: float = RECOVER_HOLD_S) -> Below | None:
    """Whether the floor rule fires, with hysteresis over ``series`` ([(t, bytes)], oldest first).

    It fires when the value is under the floor now, or was at some point of the series and has not
    since stayed at or above floor + margin for ``hold_s`` seconds (the first to the last sample of
    an unbroken run). Without a series, the plain threshold."""
    if now < floor_b:
        return Below(True)
    last = max((i for i, (_, v) in enumerate(series) if v < floor_b), default=None)
    if last is None:
        return None
    run_start = None
    for t, v in series[last + 1:]:
        if v >= floor_b + margin_b:
            run_start = t if run_start is None else run_start
            if t - run_start >= hold_s:
                return None
        else:
            run_start = None
    t, v = series[last]
    return Below(False, t, v)


def _held_text(what: str, b: Below, floor: float) -> str:
    at = when_text(b.t, None) if b.t is not None else "an unknown time"
    return (f"{what} was {_b(b.value)} at {at}, under the {floor:g} GiB floor; the warning holds "
            f"until it stays above {floor + RECOVER_MARGIN_GIB:g} GiB for {RECOVER_HOLD_S:g} s")


# -- evidence --------------------------------------------------------------------------------------
def _nvml_memory_evidence(nvml: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """What NVML said about device memory: G3 never uses it, but says so."""
    if not nvml:
        return None
    for dev in nvml.get("devices") or []:
        mem = dev.get("memory") or {}
        if mem.get("error"):
            return ("NVML device memory (not used for this check)", f"unavailable: {mem['error']}")
        if isinstance(mem.get("value"), dict):
            total = mem["value"].get("total")
            return ("NVML device memory (not used for this check)",
                    f"reported total {gib(total)}" if is_number(total) else "reported")
    return None


def _evidence(r: Readings, mem: Mapping[str, Any], src: str, held: dict[str, float] | None,
              rcache: float | None) -> EvidenceList:
    f = free_gib(mem)
    ev = EvidenceList()
    ev.add("MemTotal", src, _gib(f["total"]))
    ev.add("MemAvailable (what a new allocation can get)", src, _gib(f["available"]))
    ev.add("MemFree (what CUDA's free-memory call reports)", src, _gib(f["free"]))
    if f["buff_cache"] is not None:
        ev.add("buff/cache (Buffers + Cached + SReclaimable)", src, _gib(f["buff_cache"]))
    if rcache is not None:
        ev.add("reclaimable page cache (Buffers + Cached - Shmem + KReclaimable)", src, _b(rcache))
    if f["shared"] is not None:
        ev.add("Shmem (tmpfs, /dev/shm: in Cached, no cache drop frees it)", src, _gib(f["shared"]))
    if held is not None:
        ev.add("AnonPages (processes' own memory)", src, _b(held[ANON]))
        ev.add("kernel and driver (used - cache - AnonPages - hugepages; GPU allocations count here)", src,
               _b(held[KERNEL]))
        if held[HUGE]:
            ev.add("hugepages reserved (HugePages_Total x Hugepagesize)", src, _b(held[HUGE]))
    for k, what in (("Unevictable", "Unevictable (never reclaimed: mlocked, ramfs)"), ("Mlocked", "Mlocked"),
                    ("Dirty", "Dirty (written back before a drop can free it)")):
        if mem.get(k):
            ev.add(what, src, _b(mem[k]))
    if f["swap_used"]:
        ev.add("swap used", src, _gib(f["swap_used"]))
    nv = _nvml_memory_evidence(r.data(NVML))
    nv_reading = r.get_reading(NVML)
    if nv:
        ev.add(nv[0], nv_reading.source or "NVML", nv[1])
    elif nv_reading.error and "was not run" not in nv_reading.error:
        ev.add("NVML (not used for this check)", nv_reading.source or "NVML", f"unavailable: {nv_reading.error}")
    return ev


# -- the pool beyond meminfo (probes/pool.py) ---------------------------------------------------------
@dataclass
class PoolSeen:
    """What the pool reading adds to the verdict: tmpfs mounts squeezing the pool (as words for the
    summary) and idle hugepages (bytes; None when not known)."""

    squeezing: list[str]
    idle_huge: float | None


def idle_hugepages(mem: Mapping[str, Any], pool: Mapping[str, Any] | None) -> float | None:
    """Bytes of hugepages reserved and free and promised to no mapping: every size from the pool
    reading, else the default size from meminfo (HugePages_Free - HugePages_Rsvd)."""
    rows = (pool or {}).get("hugepages")
    if isinstance(rows, list):
        sizes = [(h.get("size_bytes"), h.get("free"), h.get("reserved") or 0) for h in rows if isinstance(h, dict)]
        known = [(sz, fr, rs) for sz, fr, rs in sizes if _num(sz) and _num(fr) and _num(rs)]
        if known:
            return float(sum(max(fr - rs, 0) * sz for sz, fr, rs in known))
    hf, hr, hs = mem.get("HugePages_Free"), mem.get("HugePages_Rsvd") or 0, mem.get("Hugepagesize")
    if _num(hf) and _num(hr) and _num(hs):
        return float(max(hf - hr, 0) * hs)
    return None


def _tmpfs_text(m: Mapping[str, Any], total: float, shm_of_container: bool) -> str:
    size, used = m.get("size_bytes"), m.get("used_bytes")
    limit = (f"a {_b(size)} limit ({size / total:.0%} of memory)" if _num(size) else "an unmeasured limit")
    what = " (this container's --shm-size)" if shm_of_container else ""
    return f"{_b(used)} used of {limit}{what}: its files stay in the pool, no cache drop frees them"


def pool_evidence(r: Readings, mem: Mapping[str, Any], ev: EvidenceList, floor_b: float) -> PoolSeen:
    """The pool reading as evidence: tmpfs mounts that may take a large share (over TMPFS_SIZE_SHARE
    of MemTotal) or already hold the floor's worth, /dev/shm always; hugepages of every size with
    what is idle; swap devices and zram. Not read: one row says so (the dashboard's samples do not
    carry it), never a guess."""
    total = mem["MemTotal"]
    reading = r.get_reading(POOL) if POOL.name in r else None
    pool = reading.data if reading is not None else None
    seen = PoolSeen([], idle_hugepages(mem, pool))
    if reading is None:
        return seen
    src = reading.source or "probes/pool.py"
    if pool is None:
        ev.add("tmpfs, hugepages, swap (the pool beyond /proc/meminfo)", src, f"unread: {reading.error}")
        return seen
    inside = pool.get("inside_container") is True
    for m in pool.get("tmpfs") or []:
        size, used, point = m.get("size_bytes"), m.get("used_bytes"), str(m.get("mountpoint"))
        big = _num(size) and size > TMPFS_SIZE_SHARE * total
        full = _num(used) and used >= floor_b
        if not (big or full or point == "/dev/shm"):
            continue
        if m.get("error"):
            ev.add(f"tmpfs {point}", src, f"unmeasured: {m['error']}")
            continue
        ev.add(f"tmpfs {point}", src, _tmpfs_text(m, total, inside and point == "/dev/shm"))
        if _num(used) and used >= min(HOLDER_SHARE * total, floor_b):
            seen.squeezing.append(f"tmpfs {point} holds {_b(used)}")
    for h in pool.get("hugepages") or []:
        if not _num(h.get("total")) or not h["total"]:
            continue
        size = h.get("size_bytes") or 0
        idle = max((h.get("free") or 0) - (h.get("reserved") or 0), 0) * size
        ev.add(f"hugepages of {_b(size)}", src, f"{h['total']} reserved ({_b(h['total'] * size)}), {h.get('free')} free, "
                                               f"{h.get('reserved')} promised to a mapping: {_b(idle)} idle")
    for sw in pool.get("swaps") or []:
        kind = "zram: compressed into the pool itself" if sw.get("zram") else str(sw.get("type"))
        ev.add(f"swap {sw.get('name')}", src, f"{_b(sw.get('used_bytes'))} used of {_b(sw.get('size_bytes'))} ({kind})")
    for z in pool.get("zram") or []:
        if _num(z.get("mem_used_bytes")) and z["mem_used_bytes"] > 0:
            ev.add(f"zram {z.get('name')}", src, f"{_b(z.get('orig_data_bytes'))} stored in "
                                                 f"{_b(z['mem_used_bytes'])} of the pool")
    for part, why in sorted((pool.get("errors") or {}).items()):
        ev.add(f"pool: {part}", src, f"unread: {why}")
    return seen


# -- GPU-held, host-used and what CUDA reports: the breakdown the UI can stack ----------------------------
BREAKDOWN_LABELS = {"gpu": "GPU-held (NVML per process)", "host": "other used", "used": "used",
                    "unseen": "available, not free (CUDA counts it used)", "free": "free (what CUDA reports)"}


def gpu_held(r: Readings, at: float | None = None) -> tuple[float | None, str]:
    """The sum of NVML's per-process used memory from the processes reading, and where it comes
    from; None with the reason when NVML's list was not read or a figure is N/A (never 0). ``at``
    (a recording's moment): the scan of its history nearest that time, said in the source."""
    if PROCESSES.name not in r:
        return None, "no process scan in this reading"
    data: Any = checked(r.get_reading(PROCESSES)).data
    history = (data or {}).get("history")
    scan_at = ""
    if at is not None and isinstance(history, list):
        timed = [h for h in history if isinstance(h, dict) and _num(h.get("t"))]
        if not timed:
            return None, "no process scan of the recording has a time"
        data = min(timed, key=lambda h: abs(h["t"] - at))
        scan_at = f", scan at {when_text(data['t'], None)}"
    if not data or data.get("scan_error") or not isinstance(data.get("rows"), list):
        return None, "the process scan failed"
    nv = data.get("nvml") or {}
    if not nv.get("ok"):
        return None, f"NVML process list unavailable ({nv.get('error')})"
    if (data.get("container") or {}).get("inside"):
        return None, "inside a container NVML lists only the container's own processes"
    listed = [row for row in data["rows"] if row.get("on_gpu") or row.get("gpu_mem_bytes") is not None]
    if any(not _num(row.get("gpu_mem_bytes")) for row in listed):
        return None, "NVML lists a process without a figure (N/A)"
    return float(sum(row["gpu_mem_bytes"] for row in listed)), f"NVML, {len(listed)} process(es){scan_at}"


def pool_breakdown(r: Readings) -> list[tuple[str, float]] | None:
    """The pool as GPU-held beside host-used beside what CUDA would report, as (part, bytes) from the
    bottom of a stacked plot up (``BREAKDOWN_LABELS`` names them); the parts sum to MemTotal:

    - "gpu": the sum of NVML's per-process used memory (absent when not known: then "used" stands
      for all of MemTotal - MemAvailable), at most what is used;
    - "host": the rest of MemTotal - MemAvailable;
    - "unseen": MemAvailable - MemFree, memory a new allocation gets but CUDA's free-memory call
      (which follows MemFree: unsloth #10704) counts as used;
    - "free": MemFree (at most MemAvailable), what CUDA reports free.

    None when the meminfo reading lacks MemTotal, MemAvailable or MemFree."""
    mem = r.data(MEMINFO) if MEMINFO.name in r else None
    if not mem or not all(_num(mem.get(k)) for k in ("MemTotal", "MemAvailable", "MemFree")):
        return None
    total, avail, free = float(mem["MemTotal"]), float(mem["MemAvailable"]), float(mem["MemFree"])
    if not 0 <= avail <= total or not 0 <= free <= total:
        return None
    used = total - avail
    gpu, _ = gpu_held(r)
    parts: list[tuple[str, float]] = []
    if gpu is None:
        parts.append(("used", used))
    else:
        parts += [("gpu", min(gpu, used)), ("host", used - min(gpu, used))]
    return parts + [("unseen", max(avail - free, 0.0)), ("free", min(free, avail))]


def breakdown_evidence(r: Readings, ev: EvidenceList) -> None:
    """GPU-held, host-used and CUDA's free beside one another, when the readings carry a process scan."""
    if PROCESSES.name not in r:
        return
    mem = r.data(MEMINFO) or {}
    gpu, why = gpu_held(r, mem.get("t") if mem.get("review") and _num(mem.get("t")) else None)
    ev.add("GPU-held (sum of NVML per-process used memory)", why if gpu is not None else "NVML via the process scan",
           _b(gpu) if gpu is not None else f"unknown: {why}")
    if _num(mem.get("MemTotal")) and _num(mem.get("MemAvailable")):
        ev.add("host-used (MemTotal - MemAvailable)", "/proc/meminfo", _b(mem["MemTotal"] - mem["MemAvailable"]))


# -- memory pressure (PSI, swap) -------------------------------------------------------------------
def _psi_text(line: Mapping[str, Any]) -> str:
    return " / ".join(f"{line[k]:.2f}%" if _num(line.get(k)) else "?" for k in ("avg10", "avg60", "avg300"))


def _pct(v: Any) -> float | None:
    """A PSI share in percent, or None when it is not a number within 0..100."""
    return float(v) if _num(v) and 0 <= v <= 100 else None


def pressure(mem: Mapping[str, Any], src: str, ev: EvidenceList) -> list[str]:
    """The pressure rules that fire (as words), with their evidence added. PSI absent, unreadable or
    garbled is no evidence either way, and says so; never an error."""
    notes: list[str] = []
    psi = mem.get("psi")
    psi_src = "/proc/pressure/memory"
    if isinstance(psi, dict) and psi:
        for kind in ("some", "full"):
            line = psi.get(kind)
            if isinstance(line, dict):
                ev.add(f"PSI memory {kind} avg10 / avg60 / avg300 (share of time "
                       f"{'all' if kind == 'full' else 'some'} tasks waited for memory)", psi_src, _psi_text(line))
        full = (psi.get("full") or {}) if isinstance(psi.get("full"), dict) else {}
        some = (psi.get("some") or {}) if isinstance(psi.get("some"), dict) else {}
        f10, s60 = _pct(full.get("avg10")), _pct(some.get("avg60"))
        if f10 is not None and f10 >= PSI_FULL_AVG10_WARN:
            notes.append(f"memory stalls: PSI full avg10 {f10:.2f}% (every task waited for memory; "
                         f"warn at {PSI_FULL_AVG10_WARN:g}%)")
        if s60 is not None and s60 >= PSI_SOME_AVG60_WARN:
            notes.append(f"memory stalls: PSI some avg60 {s60:.2f}% (warn at {PSI_SOME_AVG60_WARN:g}%)")
        bad = [f"{k} {line.get(a)!r}" for k, line in (("some", some), ("full", full)) for a in ("avg10", "avg60")
               if line.get(a) is not None and _pct(line.get(a)) is None]
        if bad:
            ev.add("PSI memory", psi_src, f"figures outside 0..100% ({', '.join(bad)}): not evidence either way")
    else:
        why = mem.get("psi_error") if isinstance(mem.get("psi_error"), str) else (
            "not in this reading (telemetry samples and recordings do not carry it)")
        ev.add("PSI memory pressure", psi_src, f"{why}: not evidence either way")
    st, sf, avail, total = mem.get("SwapTotal"), mem.get("SwapFree"), mem["MemAvailable"], mem["MemTotal"]
    if st is not None and sf is not None and _num(st) and _num(sf) and st > 0:
        used = st - sf
        if used >= SWAP_USED_MIN_GIB * GIB and avail < SWAP_LOW_AVAIL_SHARE * total:
            notes.append(f"swapping: {_b(used)} of swap in use with MemAvailable {_b(avail)} under "
                         f"{SWAP_LOW_AVAIL_SHARE:.0%} of memory")
    return notes


# -- the judge -------------------------------------------------------------------------------------
def _unknown(summary: str, ev: EvidenceList | None = None) -> Verdict:
    return Verdict("G3", Status.UNKNOWN, summary, evidence=(ev or EvidenceList()).tuple())


UNIFIED_MACHINES = ("aarch64", "arm64")  # GB10 (and Grace) hosts; an x86 host has no CPU-GPU unified pool


def not_unified(r: Readings) -> tuple[Status, str, EvidenceList] | None:
    """(skip, why) when this machine has no unified CPU-GPU pool; (unknown, why) when NVML's memory
    answer is neither a size nor an error; None when it has one, or nothing says otherwise.

    A GPU for which NVML reports a memory size of its own is discrete (GB10 answers NOT_SUPPORTED);
    an x86 host on which NVML sees no GPU has none to share its memory with. NVML unread on an ARM
    host (a container without the driver on a Spark) proves nothing: judged as unified."""
    ev = EvidenceList()
    nv_reading = r.get_reading(NVML)
    src = nv_reading.source or "NVML"
    devices = [d for d in ((nv_reading.data or {}).get("devices") or []) if isinstance(d, dict)]
    own, unclear, shared = [], [], False
    for d in devices:
        memory = d.get("memory")
        value = memory.get("value") if isinstance(memory, dict) else None
        total = value.get("total") if isinstance(value, dict) else None
        if isinstance(total, float) and not is_number(total):
            total = None  # NaN or infinite: no figure (core/units), as if NVML gave none; never "nan GiB"
        label = f"GPU {d.get('index', '?')} ({(d.get('name') or {}).get('value') or 'GPU'})"
        if is_number(total) and total > 0:
            own.append(f"{label} {gib(total)}")
        elif isinstance(memory, dict) and memory.get("error"):
            shared = True  # GB10's answer: NOT_SUPPORTED
        elif not (isinstance(value, dict) and total is None):
            unclear.append(f"{label}: {'no memory answer' if memory is None else repr(total if value else memory)}")
    if devices and len(own) == len(devices):
        ev.add("NVML device memory", src, ", ".join(own))
        return (Status.SKIP, "does not apply: a discrete GPU with its own memory (NVML reports " + ", ".join(own)
                + "): no unified pool shared with the CPU", ev)
    if unclear and not shared:
        ev.add("NVML device memory", src, "; ".join(unclear))
        return (Status.UNKNOWN, "cannot tell whether the GPU shares the pool: NVML's memory answer is neither a size "
                "nor an error (" + "; ".join(unclear) + ")", ev)
    host = r.data(HOST) if HOST.name in r else None
    machine = (host or {}).get("machine")
    if devices or NVML.name not in r or "was not run" in (nv_reading.error or ""):
        return None  # a GPU that answered NOT_SUPPORTED; or NVML not asked (judged as before)
    why = nv_reading.error or "no GPU listed"
    if isinstance(machine, str) and machine and machine.lower() not in UNIFIED_MACHINES:
        ev.add("machine", r.get_reading(HOST).source or "uname", machine)
        ev.add("NVML devices", src, f"none: {why}")
        return (Status.SKIP, f"does not apply: this {machine} host has no NVIDIA GPU that NVML sees ({why}): "
                "no unified CPU-GPU pool", ev)
    if not (isinstance(machine, str) and machine):
        ev.add("NVML devices", src, f"none: {why}")
        ev.add("machine", "uname", "not in this reading")
        return (Status.UNKNOWN, f"cannot tell whether this machine has a unified CPU-GPU pool: NVML sees no GPU "
                f"({why}) and the host's architecture was not read", ev)
    return None


def judge(r: Readings, cfg: Config) -> Verdict:
    off = not_unified(r)
    if off is not None:
        return Verdict("G3", off[0], off[1], off[2].tuple())
    reading = r.get_reading(MEMINFO)
    mem = reading.data
    if not mem:
        return unknown_from("G3", reading, "/proc/meminfo")
    src = reading.source or "/proc/meminfo"
    if mem.get("MemAvailable") is None or mem.get("MemTotal") is None:
        return _unknown("cannot tell: /proc/meminfo has no MemAvailable/MemTotal")
    bad = _not_a_number(mem) or _impossible(mem)
    if bad:
        ev = EvidenceList()
        ev.add("/proc/meminfo", src, bad)
        return _unknown(f"cannot tell: measurement error: {bad}", ev)
    return _judge_figures(r, mem, src, cfg)


@dataclass(frozen=True)
class Cache:
    """The page-cache rule's figures at one moment."""

    reclaimable: float | None  # None: Shmem not read
    amount: float  # bytes: reclaimable cache, or buff/cache when Shmem was not read
    share: float
    big: bool  # over memory.cache_warn_fraction of MemTotal
    note: str


def cache_of(mem: Mapping[str, Any], cfg: Config) -> Cache:
    rcache = reclaimable_cache(mem)
    amount = rcache if rcache is not None else (free_gib(mem)["buff_cache"] or 0) * GIB
    share = amount / mem["MemTotal"]
    kind = "reclaimable page cache" if rcache is not None else "page cache"
    note = (f"{kind} holds {_b(amount)} ({share:.0%} of memory): CUDA's free-memory call counts it as used and "
            f"sees only MemFree {_b(mem.get('MemFree'))}")
    return Cache(rcache, amount, share, share > cfg.memory.cache_warn_fraction, note)


def _judge_figures(r: Readings, mem: Mapping[str, Any], src: str, cfg: Config) -> Verdict:
    total = mem["MemTotal"]
    held = holders(mem)
    cache = cache_of(mem, cfg)
    names = named_holders(held, total) if held is not None else []
    ev = _evidence(r, mem, src, held, cache.reclaimable)
    pool = pool_evidence(r, mem, ev, cfg.memory.available_floor_gib * GIB)
    if held is not None:
        if pool.squeezing and SHMEM not in names:
            names.append(SHMEM)
        if (pool.idle_huge or 0) > 0 and held[HUGE] > 0 and HUGE not in names:
            names.append(HUGE)  # reserved and used by no program: a holder whatever its share
    breakdown_evidence(r, ev)
    if cache.reclaimable is None and mem.get("Buffers") is not None:
        ev.add("Shmem", src, "not read: part of the cache may be tmpfs, which no drop frees")
    if mem.get("skipped_implausible"):
        ev.add("samples not believed", src, f"{mem['skipped_implausible']} with MemAvailable outside 0..MemTotal")
    details = tuple(render_free_g(mem).splitlines())
    cache_when = None
    if mem.get("review"):
        status, summary, lead, cache_when = _review(mem, src, ev, cfg, held, names, cache)
    else:
        status, summary, lead = _live(mem, src, ev, cfg, held, names, cache)
    if status is Status.WARN and lead == LEAD_HOLDERS and pool.squeezing:
        summary += "; " + ", ".join(pool.squeezing)
    if status is Status.WARN and lead == LEAD_HOLDERS and HUGE in names and pool.idle_huge:
        summary += f"; {_b(pool.idle_huge)} of the hugepages are idle (reserved, used by no program)"
    notes = pressure(mem, src, ev)
    if notes:
        if status is Status.OK:
            summary, lead = "; ".join(notes) + "; " + summary, LEAD_PRESSURE
        else:
            summary = summary + "; " + "; ".join(notes)
        status = Status.WARN
    fix = fix_for(held, names, cache.big, lead, cache_when, bool(notes))
    return Verdict("G3", status, summary, ev.tuple(), fix, details)


def _live(mem: Mapping[str, Any], src: str, ev: EvidenceList, cfg: Config, held: dict[str, float] | None,
          names: list[str], cache: Cache) -> tuple[Status, str, str]:
    """Now: the floor rule with hysteresis over the recent series, then the page-cache rule."""
    total, avail, memfree = mem["MemTotal"], mem["MemAvailable"], mem.get("MemFree")
    floor = cfg.memory.available_floor_gib
    floor_b = floor * GIB
    low = below_floor(avail, _series(mem, 1), floor_b)
    if low is not None:
        summary = f"MemAvailable {_b(avail)} of {_b(total)}, under the {floor:g} GiB floor"
        if not low.now:
            summary = f"MemAvailable {_b(avail)} of {_b(total)}: " + _held_text("MemAvailable", low, floor)
            ev.add("recent MemAvailable (hysteresis)", src, _held_text("MemAvailable", low, floor))
        summary += f"; {_holders_text(mem, held, names)}"
        return Status.WARN, summary + (f"; {cache.note}" if cache.big else ""), LEAD_HOLDERS
    free_low = below_floor(memfree, _series(mem, 2), floor_b) if cache.big and memfree is not None else None
    if free_low is not None:
        summary = cache.note + f" (MemAvailable {_b(avail)})"
        if not free_low.now:
            summary += "; " + _held_text("MemFree", free_low, floor)
            ev.add("recent MemFree (hysteresis)", src, _held_text("MemFree", free_low, floor))
        return Status.WARN, summary, LEAD_CACHE
    return Status.OK, _ok_summary(mem, floor, cache, held), LEAD_HOLDERS


def _ok_summary(mem: Mapping[str, Any], floor: float, cache: Cache, held: dict[str, float] | None) -> str:
    summary = f"MemAvailable {_b(mem['MemAvailable'])} of {_b(mem['MemTotal'])} (floor {floor:g} GiB)"
    if cache.big:
        summary += f"; {cache.note}"
    if held is not None and held[SHMEM] >= HOLDER_SHARE * mem["MemTotal"]:
        summary += f"; shmem/tmpfs holds {_b(held[SHMEM])} (no cache drop frees it)"
    return summary


def _review(mem: Mapping[str, Any], src: str, ev: EvidenceList, cfg: Config, held: dict[str, float] | None,
            names: list[str], cache: Cache) -> tuple[Status, str, str, str | None]:
    """A whole recording: the moment MemAvailable was lowest, and the moment MemFree was (the
    page-cache rule), each said with when. Returns (status, summary, what the headline blames, when
    the page-cache rule fired at another moment than the headline's, or None)."""
    floor = cfg.memory.available_floor_gib
    when = when_text(mem.get("t"), mem.get("t0"))
    ev.add("worst moment (lowest MemAvailable)", src, when)
    total, avail, memfree = mem["MemTotal"], mem["MemAvailable"], mem.get("MemFree")
    head = f"lowest MemAvailable {_b(avail)} of {_b(total)} at {when}"
    if avail < floor * GIB:
        summary = f"{head}, under the {floor:g} GiB floor; {_holders_text(mem, held, names)}"
        other = None if cache.big else _low_free_warning(mem, src, ev, cfg)
        if other is not None:  # the card and `check -v` say when it fired; the fix's cache block too
            ev.add("page-cache rule, at another moment", src, other[0])
        return (Status.WARN, summary + (f"; {cache.note}" if cache.big else ""), LEAD_HOLDERS,
                other[1] if other is not None else None)
    if cache.big and memfree is not None and memfree < floor * GIB:
        return Status.WARN, f"{cache.note} at {when} (MemAvailable {_b(avail)})", LEAD_CACHE, None
    low_free = _low_free_warning(mem, src, ev, cfg)
    if low_free is not None:
        return Status.WARN, low_free[0], LEAD_CACHE, None
    return (Status.OK, f"{head} (floor {floor:g} GiB)" + (f"; {cache.note}" if cache.big else ""),
            LEAD_HOLDERS, None)


def _low_free_warning(mem: Mapping[str, Any], src: str, ev: EvidenceList, cfg: Config) -> tuple[str, str] | None:
    """The page-cache rule at the moment MemFree was lowest (review), when that is another moment:
    (what it found, when), or None."""
    lf = mem.get("low_free")
    if not isinstance(lf, dict) or not _num(lf.get("MemFree")) or not _num(lf.get("MemTotal")):
        return None
    if _not_a_number(lf) or _impossible(lf):
        return None  # a garbled sample is no evidence of a low moment
    floor = cfg.memory.available_floor_gib
    cache = cache_of(lf, cfg)
    if not (cache.big and lf["MemFree"] < floor * GIB):
        return None
    when = when_text(lf.get("t"), mem.get("t0"))
    ev.add("worst moment (lowest MemFree)", src, when)
    return f"{cache.note} at {when} (MemAvailable {_b(lf.get('MemAvailable'))})", when


GOTCHA = Gotcha(
    id="G3",
    slug="unified-memory",
    title="Out of memory below 128 GB (unified memory)",
    symptom=("A model load or training step dies with out-of-memory although the tools you usually trust say "
             "memory is free, or nvidia-smi shows [N/A] / Not Supported where the memory figure should be. "
             "QLoRA can fail earlier than bf16, because dequantizing adds short-lived copies."),
    cause=("CPU and GPU share one pool of about 121.7 GiB usable. CUDA allocations, model files mapped with mmap, "
           "the page cache, shared memory (/dev/shm, tmpfs) and every other process draw from it, and a mapped file "
           "can be counted twice while it is being loaded. On GB10 NVML does not report device memory at all "
           "(NOT_SUPPORTED), and CUDA's free-memory call counts only MemFree, so cache the kernel would happily give "
           "back looks used: vLLM's start-up check then refuses to start. Shared memory is counted in the cache too, "
           "but nothing gives it back."),
    check=("Reads /proc/meminfo (the same figures `free -g` shows; used = total - available, as procps-ng 4 "
           "computes it) and never NVML's memory query. Warns when MemAvailable is under "
           "`memory.available_floor_gib`, or when reclaimable page cache (Buffers + Cached - Shmem + KReclaimable) "
           "above `memory.cache_warn_fraction` of memory leaves MemFree under the floor. With a recent series "
           "(dashboard, export) the warning has hysteresis: once under the floor it holds until the figure has "
           f"stayed above the floor + {RECOVER_MARGIN_GIB:g} GiB for {RECOVER_HOLD_S:g} s; a one-shot `check` "
           "judges the plain threshold. A recording (`check --replay`, the dashboard once a replay ends) is "
           "judged at its lowest MemAvailable, said with when. Names what holds the memory (AnonPages, Shmem, "
           f"hugepages, the kernel and driver; each at {HOLDER_SHARE:.0%} of memory or more, or the largest) and "
           "offers the fix for that: drop_caches only for reclaimable cache. Figures the machine cannot produce "
           "(MemTotal 0 or over 2 TiB, a field below 0 or above MemTotal) are a measurement error: unknown. "
           "The evidence says what NVML answered for device memory. Memory pressure warns too, before the OOM "
           f"killer: Linux PSI (/proc/pressure/memory) full avg10 at {PSI_FULL_AVG10_WARN:g}% or more, or some avg60 "
           f"at {PSI_SOME_AVG60_WARN:g}% or more; or {SWAP_USED_MIN_GIB:g} GiB or more of swap in use while "
           f"MemAvailable is under {SWAP_LOW_AVAIL_SHARE:.0%} of memory. PSI absent (a kernel without it, psi=0, "
           "a recording) is no evidence either way, and the evidence says so. The whole pool (where read): tmpfs "
           f"mounts whose limit is over {TMPFS_SIZE_SHARE:.0%} of memory or whose files hold the floor's worth "
           "(/dev/shm, a container's --shm-size), named in the warning when they squeeze MemAvailable; hugepages "
           "reserved and idle, named as holders; swap and zram. The fix's first block answers the headline's cause; "
           "a rule that fired at another moment of a recording says when. Does not apply (skip) off unified memory: "
           "a GPU whose memory NVML reports is discrete; an x86 host where NVML sees no GPU has none."),
    fix=FIX,
    intrusive=False,
    cadence_s=5.0,
    probes=("meminfo", "nvml", "host", "pool"),
    # host: tells an x86 host without a GPU (G3 skips); pool: tmpfs, hugepages of every size, swap and
    # zram. The dashboard's samples carry neither: G3 is judged without them there
    enriched_by=("host", "pool"),
    feed=Feed.TELEMETRY,
    judge=judge,
    references=("NVML memory NOT_SUPPORTED on GB10: nvitop PR #208, leptonai/gpud PR #1170, unsloth PR #10703",
                "cudaMemGetInfo counts MemFree only: vllm issue #48140; 60 GB written: CUDA-free 103 -> 42 GiB "
                "with MemAvailable ~116 GiB: unsloth #10704",
                "Shmem is in Cached and not reclaimable: proc(5), Documentation/filesystems/proc.rst",
                "PSI: Documentation/accounting/psi.rst; swap and host freezes on a Spark: "
                "AEON-7/vllm-ultimate-dgx-spark #9",
                "/dev/shm or --shm-size carved from the pool, HugePages reserved skewing MemAvailable: nv-monitor "
                "README, vllm #35313 (community reports)"),
)
