"""G6: contention on the one unified memory pool.

Judged by each server's memory cap, not by its presence: a server capped at or under
``memory.server_cap_ok_fraction`` may share the box with a small job; an uncapped or near-capacity
one is a warning, and a failure while a training job runs beside it. Inside a container an empty
NVML process list means "cannot see", never "nothing there".
"""

from __future__ import annotations

from typing import Any

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.telemetry import GIB
from sparktui.core.verdict import EvidenceList, Status, Verdict
from sparktui.gotchas.base import Gotcha, unknown_from, unknown_if_lacking

LABELS = {"vllm": "vLLM", "sglang": "SGLang", "llamacpp": "llama.cpp", "ollama": "Ollama",
          "trtllm": "TensorRT-LLM", "nim": "NIM", "triton": "Triton", "tgi": "TGI"}

FIX = """\
One heavy job per pool. Before a long run, stop inference servers you do not need:

```
systemctl stop ollama          # Ollama installed as a service
docker ps                      # servers running in containers (NIM, vLLM, TGI ...)
docker stop CONTAINER
kill PID                       # a server started by hand
```

A server may stay if it runs with an explicit cap of about half the memory or less beside a small
job (a <4 GB LoRA next to vLLM at 0.5 has been seen running cleanly). Restart it with its cap:

```
vllm serve MODEL --gpu-memory-utilization 0.5
python -m sglang.launch_server --model-path MODEL --mem-fraction-static 0.5
trtllm-serve MODEL --kv_cache_free_gpu_memory_fraction 0.5
text-generation-launcher --model-id MODEL --cuda-memory-fraction 0.5
docker run -e NIM_GPU_MEM_FRACTION=0.5 ...
OLLAMA_MAX_LOADED_MODELS=1 ollama serve
```

llama.cpp and Ollama have no fractional cap: their footprint is the model plus context
(`-ngl`, `--ctx-size`), so size the model to what the training run leaves free.
"""


def _gib(b: Any) -> str:
    return f"{b / GIB:.1f} GiB" if isinstance(b, (int, float)) else "?"


def _instance_cap(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The most specific cap in an instance: set > unreadable > default > none."""
    order = {"set": 0, "unreadable": 1, "default": 2, "none": 3}
    caps = [r["cap"] for r in rows if r.get("cap") and r["cap"].get("state") in order]
    return min(caps, key=lambda c: order[c["state"]]) if caps else None


SMALL_GPU_BYTES = 512 * 1024 ** 2


HEADROOM_FRACTION = 0.9  # capped servers plus jobs above this share of MemTotal: a warning


def _is_job(members: list[dict[str, Any]]) -> bool:
    """An unnamed GPU process counts as a workload when it computes and is not tiny."""
    for m in members:
        if m.get("gpu_list") == "compute" and (m.get("gpu_mem_bytes") is None or m["gpu_mem_bytes"] >= SMALL_GPU_BYTES):
            return True
    return False


def _container_inside(r: Readings, data: dict[str, Any]) -> bool | None:
    inside = (data.get("container") or {}).get("inside")
    if inside is None:  # the container probe's reading, if it says so plainly
        other = r.data("container") or {}
        for key in ("inside", "in_container", "containerized"):
            if isinstance(other.get(key), bool):
                return other[key]
    return inside


def judge(r: Readings, cfg: Config) -> Verdict:
    reading = r.get_reading("processes")
    data = reading.data
    if data is None:
        return unknown_from("G6", reading, "process list")
    lacking = unknown_if_lacking("G6", reading, "process list", "rows", "nvml")
    if lacking is not None:
        return lacking
    src = reading.source or "processes"
    ev = EvidenceList()
    nv = data.get("nvml") or {}
    rows = list(data.get("rows") or [])
    inside = _container_inside(r, data)
    nv_ok = bool(nv.get("ok"))
    nv_count = nv.get("count", 0)
    ev.add("NVML GPU process list", "NVML", f"{nv_count} process(es)" if nv_ok else f"unavailable: {nv.get('error')}")
    ev.add("inside a container", "/.dockerenv, /run/.containerenv, /proc/1/cgroup",
           {True: "yes", False: "no", None: "cannot tell"}[inside])
    skipped = data.get("skipped") or {}
    if skipped.get("vanished") or skipped.get("denied"):
        ev.add("processes skipped mid-scan", "psutil", f"{skipped.get('vanished', 0)} exited, {skipped.get('denied', 0)} denied")
    if data.get("scan_error"):
        ev.add("process scan", "psutil", data["scan_error"])

    if nv_ok and nv_count == 0 and inside:
        return Verdict("G6", Status.UNKNOWN,
                       "cannot tell: host processes not visible (inside a container, NVML's process list is empty)",
                       ev.tuple(), FIX)

    groups: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row.get("group", row["pid"]), []).append(row)
    ok_cap = cfg.memory.server_cap_ok_fraction
    bad, unreadable, fine, jobs = [], [], [], []
    job_bytes = 0  # what the jobs hold: NVML's figure where listed, else resident memory
    details = []
    for top, members in groups.items():
        head = next((m for m in members if m["pid"] == top), members[0])
        gpu = sum(m.get("gpu_mem_bytes") or 0 for m in members)
        on_gpu = any(m.get("on_gpu") for m in members)
        server = head.get("server") or next((m.get("server") for m in members if m.get("server")), None)
        details.append(f"pid {top:<7} {head.get('kind', '?'):<11} {head.get('name', '')[:28]:<28} "
                       f"gpu {_gib(gpu) if on_gpu else '-':>9}  rss {_gib(head.get('rss_bytes')):>9}  "
                       f"{(head.get('command') or '')[:80]}")
        if server:
            if all(m.get("kind") == "other" for m in members):
                continue  # a helper (HTTP router, detokenizer) that holds no GPU memory
            label = f"{LABELS.get(server, server)} pid {top}"
            cap = _instance_cap(members)
            if cap is None:
                unreadable.append((label, "cap not found"))
                ev.add(f"{label} memory cap", src, "not found")
            elif cap["state"] == "unreadable":
                unreadable.append((label, cap["source"]))
                ev.add(f"{label} memory cap", src, f"unreadable: {cap['source']}")
            elif cap["state"] == "none":
                bad.append((label, "no memory cap"))
                extra = f"; {cap['detail']}" if cap.get("detail") else ""
                ev.add(f"{label} memory cap", src, f"none: {cap['source']}{extra}; holds {_gib(gpu) if on_gpu else 'unknown'}")
            elif cap.get("fraction") is None or cap["fraction"] > ok_cap:
                frac = "large" if cap.get("fraction") is None else f"{cap['fraction']:g}"
                why = (f"no cap given (default {frac})" if cap["state"] == "default"
                       else f"capped at {frac}, over {ok_cap:g}")
                bad.append((label, why))
                ev.add(f"{label} memory cap", src, f"{frac} ({cap['source']}): over {ok_cap:g}")
            else:
                fine.append((label, cap["fraction"]))
                ev.add(f"{label} memory cap", src, f"{cap['fraction']:g} ({cap['source']}): at or under {ok_cap:g}")
        elif head.get("kind") in ("training", "gpu-process"):
            what = "training" if any(m.get("kind") == "training" for m in members) else "GPU process"
            if what == "GPU process" and not _is_job(members):
                continue  # a desktop/graphics client (Xorg, gnome-shell) or a tiny context
            jobs.append(f"{what} pid {top} ({head.get('name') or head.get('process_name') or '?'})")
            job_bytes += gpu if on_gpu else sum(m.get("rss_bytes") or 0 for m in members)
            ev.add(f"{what} pid {top}", src, f"gpu {_gib(gpu) if on_gpu else 'not listed by NVML'}, "
                                             f"rss {_gib(head.get('rss_bytes'))}")

    if bad and jobs:
        return Verdict("G6", Status.FAIL,
                       f"{'; '.join(f'{l}: {w}' for l, w in bad)}, while {', '.join(jobs)} runs on the same pool",
                       ev.tuple(), FIX, tuple(details))
    if bad:
        return Verdict("G6", Status.WARN,
                       f"{'; '.join(f'{l}: {w}' for l, w in bad)}: it competes with anything started next",
                       ev.tuple(), FIX, tuple(details))
    total_cap = sum(f for _, f in fine)
    if len(fine) > 1 and total_cap > ok_cap:
        return Verdict("G6", Status.WARN, f"{len(fine)} capped servers add up to {total_cap:g} of memory",
                       ev.tuple(), FIX, tuple(details))
    if len(jobs) > 1:
        return Verdict("G6", Status.WARN, f"{len(jobs)} uncapped jobs share the pool: {', '.join(jobs)}",
                       ev.tuple(), FIX, tuple(details))
    if unreadable:
        return Verdict("G6", Status.UNKNOWN,
                       "cannot tell: memory cap unreadable for " + ", ".join(f"{l} ({w})" for l, w in unreadable),
                       ev.tuple(), FIX, tuple(details))
    if not nv_ok:
        found = ", ".join([l for l, _ in fine] + jobs) or "no server or training process"
        return Verdict("G6", Status.UNKNOWN,
                       f"cannot tell: NVML process list unavailable ({nv.get('error')}); name scan found {found}",
                       ev.tuple(), FIX, tuple(details))
    if nv_count == 0 and inside is None:
        return Verdict("G6", Status.UNKNOWN,
                       "cannot tell: NVML lists no GPU process and it is unclear whether this is a container "
                       "(where the list is always empty)", ev.tuple(), FIX, tuple(details))
    if fine:
        names = ", ".join(f"{l} capped at {f:g}" for l, f in fine)
        beside = f" beside {jobs[0]}" if jobs else ""
        if jobs:  # a capped server is fine beside a SMALL job: weigh the job against what the cap leaves
            total = (r.data("meminfo") or {}).get("MemTotal")
            if not total:
                return Verdict("G6", Status.OK, f"{names}{beside}: capped coexistence (the job's size not weighed: "
                                               f"MemTotal unread)", ev.tuple(), FIX, tuple(details))
            reserved = total_cap * total
            ev.add("servers' share + jobs", "caps x MemTotal + NVML/RSS",
                   f"{_gib(reserved)} + {_gib(job_bytes)} of {_gib(total)}")
            if reserved + job_bytes > total:
                return Verdict("G6", Status.FAIL,
                               f"{names} reserves {_gib(reserved)}, and {', '.join(jobs)} holds {_gib(job_bytes)}: "
                               f"more than the {_gib(total)} pool", ev.tuple(), FIX, tuple(details))
            if reserved + job_bytes > HEADROOM_FRACTION * total:
                return Verdict("G6", Status.WARN,
                               f"{names} reserves {_gib(reserved)}, and {', '.join(jobs)} holds {_gib(job_bytes)}: "
                               f"under {100 - HEADROOM_FRACTION * 100:.0f}% of the {_gib(total)} pool left",
                               ev.tuple(), FIX, tuple(details))
        return Verdict("G6", Status.OK, f"{names}{beside}: capped coexistence", ev.tuple(), FIX, tuple(details))
    if jobs:
        return Verdict("G6", Status.OK, f"one job on the pool: {jobs[0]}", ev.tuple(), FIX, tuple(details))
    return Verdict("G6", Status.OK, "no inference server or other GPU process on the pool", ev.tuple(), FIX,
                   tuple(details))


GOTCHA = Gotcha(
    id="G6",
    slug="contention",
    title="Contention on the unified memory pool",
    symptom=("A run slows down or dies mid-way with nothing in its own logs, or an inference server's KV cache "
             "and weights get evicted; usually another process on the box grew into the memory."),
    cause=("GPU and CPU memory are one pool. An inference server left running (vLLM, SGLang, Ollama, NIM ...) "
           "without an explicit cap, or with one near capacity, takes what a training job then cannot get. A "
           "small bounded neighbour is fine: a <4 GB LoRA has run cleanly beside vLLM capped at 0.5. What "
           "matters is the other process's cap, not its presence."),
    check=("Lists NVML's compute and graphics processes with their memory, and scans every process (psutil) for "
           "inference servers (vLLM incl. VLLM::EngineCore, SGLang, llama.cpp, Ollama, TensorRT-LLM, NIM, "
           "Triton, TGI) and training jobs (torchrun, accelerate, deepspeed, train/SFT/fine-tune scripts, "
           "Unsloth). Each server's cap is read from its flags (--gpu-memory-utilization, --mem-fraction-static, "
           "free_gpu_memory_fraction, --cuda-memory-fraction) or environment (NIM_GPU_MEM_FRACTION, OLLAMA_*). "
           "A cap at or under `memory.server_cap_ok_fraction` is fine beside a small job; uncapped or larger warns, "
           "and fails while training runs too. Beside a job, the caps' share of MemTotal plus what the job "
           "holds (NVML, else resident memory) must fit the pool: over it fails, over 90% warns. Inside a "
           "container an empty NVML list is reported as \"cannot see\"."),
    fix=FIX,
    intrusive=False,
    cadence_s=10.0,
    probes=("processes", "meminfo"),
    judge=judge,
    references=("Per-process GPU memory works on the host, empty inside a container: FACTS.md (NVML on GB10)",
                "Server caps: FACTS.md inference-server table"),
)
