"""G3: out of memory below 128 GB on unified memory.

Judged from /proc/meminfo only. GB10's NVML answers NOT_SUPPORTED for device memory (nvidia-smi
prints [N/A]), and CUDA's free-memory call counts only MemFree, so page cache looks "used" to it.
"""

from __future__ import annotations

from typing import Any

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.telemetry import GIB, free_gib, render_free_g
from sparktui.core.verdict import EvidenceList, Status, Verdict
from sparktui.gotchas.base import Gotcha, unknown_from

FIX = """\
Find out what holds the memory first: `free -g` (the *available* column is what a new allocation can
get) and the process view (`sparktui check G6`). Stop what you do not need, or restart an inference
server with a lower cap (e.g. `--gpu-memory-utilization 0.5`).

If most of the pool sits in **buff/cache** (page cache from model files, datasets, checkpoints), CUDA's
free-memory call (and `torch.cuda.mem_get_info`, vLLM's start-up check) counts it as used. Between runs
you can drop the clean page cache:

```
sync
echo 3 | sudo tee /proc/sys/vm/drop_caches
```

Warnings: it needs root; it is system-wide, so every process on the box loses its cached file reads
(they get slower until the cache refills); it frees only clean cache, not memory a process holds. Run it
between runs, not during training. sparktui never runs it for you.

Lower the peak itself when the run is what needs the memory: smaller batch or sequence length,
gradient checkpointing, or load weights without keeping an extra copy mapped (safetensors load +
dequantization is where QLoRA peaks).
"""


def _gib(v: float | None) -> str:
    return "?" if v is None else f"{v:.1f} GiB"


def _nvml_memory_evidence(nvml: dict[str, Any] | None) -> tuple[str, str] | None:
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
                    f"reported total {total / GIB:.1f} GiB" if isinstance(total, (int, float)) else "reported")
    return None


def judge(r: Readings, cfg: Config) -> Verdict:
    reading = r.get_reading("meminfo")
    mem = reading.data
    if not mem:
        return unknown_from("G3", reading, "/proc/meminfo")
    src = reading.source or "/proc/meminfo"
    if mem.get("MemAvailable") is None or mem.get("MemTotal") is None:
        return Verdict("G3", Status.UNKNOWN, "cannot tell: /proc/meminfo has no MemAvailable/MemTotal",
                       evidence=EvidenceList().tuple())
    f = free_gib(mem)
    ev = EvidenceList()
    total, avail, memfree = f["total"], f["available"], f["free"]
    cache = f["buff_cache"]
    ev.add("MemTotal", src, _gib(total))
    ev.add("MemAvailable (what a new allocation can get)", src, _gib(avail))
    ev.add("MemFree (what CUDA's free-memory call reports)", src, _gib(memfree))
    if cache is not None:
        ev.add("buff/cache (Buffers + Cached + SReclaimable)", src, _gib(cache))
    if f["shared"] is not None:
        ev.add("Shmem", src, _gib(f["shared"]))
    if f["swap_used"]:
        ev.add("swap used", src, _gib(f["swap_used"]))
    nv = _nvml_memory_evidence(r.data("nvml"))
    nv_reading = r.get_reading("nvml")
    if nv:
        ev.add(nv[0], nv_reading.source or "NVML", nv[1])
    elif nv_reading.error and "was not run" not in nv_reading.error:
        ev.add("NVML (not used for this check)", nv_reading.source or "NVML", f"unavailable: {nv_reading.error}")

    floor = cfg.memory.available_floor_gib
    cache_share = (cache / total) if cache is not None and total else 0.0
    cache_big = cache_share > cfg.memory.cache_warn_fraction
    details = tuple(render_free_g(mem).splitlines())
    cache_note = (f"page cache holds {_gib(cache)} ({cache_share:.0%} of memory): CUDA's free-memory call counts "
                  f"it as used and sees only MemFree {_gib(memfree)}")
    if avail is not None and avail < floor:
        summary = f"MemAvailable {_gib(avail)} of {_gib(total)}, under the {floor:g} GiB floor"
        if cache_big:
            summary += f"; {cache_note}"
        return Verdict("G3", Status.WARN, summary, ev.tuple(), FIX, details)
    if cache_big and memfree is not None and memfree < floor:
        return Verdict("G3", Status.WARN, cache_note + f" (MemAvailable {_gib(avail)})", ev.tuple(), FIX, details)
    summary = f"MemAvailable {_gib(avail)} of {_gib(total)} (floor {floor:g} GiB)"
    if cache_big:
        summary += f"; page cache holds {_gib(cache)} ({cache_share:.0%})"
    return Verdict("G3", Status.OK, summary, ev.tuple(), FIX, details)


GOTCHA = Gotcha(
    id="G3",
    slug="unified-memory",
    title="Out of memory below 128 GB (unified memory)",
    symptom=("A model load or training step dies with out-of-memory although the tools you usually trust say "
             "memory is free, or nvidia-smi shows [N/A] / Not Supported where the memory figure should be. "
             "QLoRA can fail earlier than bf16, because dequantizing adds short-lived copies."),
    cause=("CPU and GPU share one pool of about 121.7 GiB usable. CUDA allocations, model files mapped with mmap, "
           "the page cache and every other process draw from it, and a mapped file can be counted twice while it "
           "is being loaded. On GB10 NVML does not report device memory at all (NOT_SUPPORTED), and CUDA's "
           "free-memory call counts only MemFree, so cache the kernel would happily give back looks used: vLLM's "
           "start-up check then refuses to start."),
    check=("Reads /proc/meminfo (the same figures `free -g` shows; used = total - available, as procps-ng 4 "
           "computes it) and never NVML's memory query. Warns when MemAvailable is under "
           "`memory.available_floor_gib`, or when page cache above `memory.cache_warn_fraction` of memory leaves "
           "MemFree under the floor. The evidence says what NVML answered for device memory."),
    fix=FIX,
    intrusive=False,
    cadence_s=5.0,
    probes=("meminfo", "nvml"),
    judge=judge,
    references=("NVML memory NOT_SUPPORTED on GB10: nvitop PR #208, leptonai/gpud PR #1170, unsloth PR #10703",
                "cudaMemGetInfo counts MemFree only: vllm issue #48140"),
)
