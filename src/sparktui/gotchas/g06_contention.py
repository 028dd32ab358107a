"""G6: contention on the one unified memory pool.

Judged by what each process HOLDS (NVML's per-process memory) and what it can still GROW to, not
by its command line: vLLM/SGLang/TRT-LLM/NIM/TGI take a fraction of the whole pool at start-up; an
Ollama server holds nothing until it loads a model; a llama.cpp server allocates up front and keeps
that. Fail when those footprints plus the jobs' can exceed MemTotal, or when a server reserving
more than ``memory.server_cap_ok_fraction`` runs beside a training job; warn over
``HEADROOM_FRACTION`` of the pool. N/A is never zero: a sum over an unknown is unknown. A failed
scan, an empty NVML list inside a container, or an impossible figure is "cannot tell", never ok.
In review mode (a recording) every process snapshot is judged and the worst one is reported, with
when. Each rule is a small named function; ``judge`` picks the worst finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.shapes import CONTAINER, MEMINFO, PROCESSES, TELEMETRY
from sparktui.core.secrets import REDACTED
from sparktui.core.validate import MEMTOTAL_MAX_BYTES
from sparktui.core.verdict import EvidenceList, Status, Verdict
from sparktui.gotchas._fix import block, comment, sh, stop_lines
from sparktui.core.units import gib, is_number, when_text
from sparktui.gotchas.base import Finding, all_findings, worst_of
from sparktui.gotchas.base import Feed, Gotcha, unknown_from, unknown_if_lacking

LABELS = {"vllm": "vLLM", "sglang": "SGLang", "llamacpp": "llama.cpp", "ollama": "Ollama",
          "trtllm": "TensorRT-LLM", "nim": "NIM", "triton": "Triton", "tgi": "TGI"}

# How a server's footprint can change after it started (the servers' documentation; docs/gotchas.md, G6):
# "fraction": takes a share of the whole pool at start-up (held ~= fraction x MemTotal once up);
# "on-demand": holds what its loaded models take and loads more on request (size unknown);
# "fixed": allocates up front; what NVML shows is what it keeps.
GROWTH = {"vllm": "fraction", "sglang": "fraction", "trtllm": "fraction", "nim": "fraction", "tgi": "fraction",
          "ollama": "on-demand", "triton": "on-demand", "llamacpp": "fixed"}

SMALL_GPU_BYTES = 512 * 1024 ** 2  # an unnamed compute process under this is a desktop/tiny context, not a job
HEADROOM_FRACTION = 0.9  # footprints adding up to more than this share of MemTotal: a warning
# Review mode: an ok over a recording needs the run seen. More than this share of its process
# snapshots not judged (a scan failed, NVML unread, a list cut) and "ok throughout" is not known.
REVIEW_BLIND_OK_SHARE = 0.1
# Ray's memory monitor counts page cache as memory pressure and kills workers (vLLM's among them) when
# the cache fills the pool; setting this variable to 0 in Ray's environment turns the monitor off
# (docs.ray.io, "Out-Of-Memory Prevention"; conselara.dev and community reports). Read from the
# environment of Ray's daemons (raylet, gcs_server, `ray start`: probes/processes.py SERVER_ENV).
RAY_MONITOR_ENV = "RAY_memory_monitor_refresh_ms"

FIX = """\
One heavy job per pool. See what holds the pool (pid, memory) with `nvidia-smi` and `sparktui`, then
stop the inference servers you do not need before a long run:

```
systemctl stop ollama          # Ollama installed as a service
docker ps                      # servers running in containers (NIM, vLLM, TGI ...)
docker stop CONTAINER
kill PID                       # a server started by hand
```

A server may stay if what it holds plus what it can still take leaves the job room. vLLM, SGLang,
TensorRT-LLM, TGI and NIM take a fraction of the whole pool at start-up: restart them with an
explicit cap of about half or less beside a small job (a <4 GB LoRA next to vLLM at 0.5 has been
seen running cleanly):

```
vllm serve MODEL --gpu-memory-utilization 0.5
python -m sglang.launch_server --model-path MODEL --mem-fraction-static 0.5
trtllm-serve MODEL --kv_cache_free_gpu_memory_fraction 0.5
text-generation-launcher --model-id MODEL --cuda-memory-fraction 0.5
docker run -e NIM_GPU_MEM_FRACTION=0.5 ...
```

Ollama holds nothing until a model is loaded and unloads it after `OLLAMA_KEEP_ALIVE` (5 minutes by
default); unload now, and keep at most one model loaded:

```
ollama ps                      # models loaded now
ollama stop MODEL              # unload one
OLLAMA_MAX_LOADED_MODELS=1 OLLAMA_KEEP_ALIVE=0 ollama serve
```

llama.cpp allocates its model and context up front and keeps that (`-ngl`, `--ctx-size`): size it to
what the training run leaves free.
"""

# -- the verdict's fix: the servers and pids seen ------------------------------------------------

# A server's own memory-cap flag (docs/gotchas.md, G6; each server's documentation); NIM's cap is an environment variable.
CAP_FLAGS = {"vllm": "--gpu-memory-utilization", "sglang": "--mem-fraction-static",
             "trtllm": "--kv_cache_free_gpu_memory_fraction", "tgi": "--cuda-memory-fraction"}
COMMAND_KEPT = 400  # probes/processes.py keeps this many characters of a command line: longer ones are cut

FIND_HOLDERS = (
    "# what holds the pool: NVML's GPU processes with their memory, then the largest by resident memory",
    "nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
    "ps -eo pid,rss,args --sort=-rss | head -15",
)
OLLAMA_UNLOAD = (
    "ollama ps                                                        # models loaded now",
    "ollama ps | awk 'NR > 1 {print $1}' | xargs -r -n1 ollama stop   # unload every one of them",
)

FIND_FIX = ("See what holds the pool before a long run (inside a container, run this on the host: the container "
            "sees only its own processes):\n\n" + block(FIND_HOLDERS))


def with_cap(command: str, flag: str, cap: float) -> list[str] | None:
    """The command line's words with ``flag`` set to ``cap`` (an earlier value dropped), or None
    when the line was not kept whole (cut at COMMAND_KEPT, or a value redacted)."""
    words = command.split()
    if not words or len(command) >= COMMAND_KEPT or REDACTED in command:
        return None
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
        elif w == flag:
            skip = True
        elif not w.startswith(flag + "="):
            out.append(w)
    return out + [flag, f"{cap:g}"]


def restart_lines(p: Party, cap: float) -> list[str]:
    """Start server ``p`` again with its own cap at ``cap``; the command line (or where to read it)
    comes from the scan."""
    if p.server == "nim":
        return [comment(f"{p.label} is NIM: its cap is NIM_GPU_MEM_FRACTION; start its container again with "
                        f"-e NIM_GPU_MEM_FRACTION={cap:g} (docker ps shows which container and image)"),
                "docker ps --format '{{.ID}}  {{.Image}}  {{.Names}}'"]
    flag = CAP_FLAGS[p.server]
    words = with_cap(p.command, flag, cap)
    if words is None:
        return [comment(f"{p.label}'s command line was not kept whole: print it, then start it again with "
                        f"{flag} {cap:g} in place of any {flag} it has"),
                f"tr '\\0' ' ' < /proc/{p.pid}/cmdline; echo"]
    return [comment(f"start {p.label} again capped at {cap:g} of the pool, once it has stopped"), sh(*words)]


def fix_for(v: View) -> str:
    """The fix for what this snapshot shows: a block stopping each server that holds or can take
    memory (several jobs: each job), one restarting each over-capped fraction server with its own cap
    flag, Ollama's unload; with nothing named, the block that finds what holds the pool."""
    stoppable = [p for p in v.servers if p.footprint != 0] + (v.jobs if len(v.jobs) > 1 else [])
    if not stoppable:
        return FIND_FIX + ray_fix(v)
    parts = ["One heavy job per pool. Stop what you do not need before a long run; each block stops one:\n"]
    parts += [block(stop_lines(p.label, p.pid)) for p in stoppable]
    over = [p for p in v.servers if p.server in (*CAP_FLAGS, "nim") and (p.fraction is None or p.fraction > v.ok_cap)]
    if over:
        parts.append(f"Or keep a server with an explicit cap of {v.ok_cap:g} of the pool (a <4 GB LoRA next to vLLM "
                     "at 0.5 has been seen running cleanly): stop it with its block above, then:\n")
        parts += [block(restart_lines(p, v.ok_cap)) for p in over]
    if any(p.server == "ollama" for p in v.servers):
        parts.append("Ollama holds only the models it has loaded (for `OLLAMA_KEEP_ALIVE`, 5 minutes by default); "
                     "unload them now instead of stopping it:\n")
        parts.append(block(OLLAMA_UNLOAD))
    if any(p.server == "llamacpp" for p in v.servers):
        parts.append("llama.cpp allocates its model and context up front and keeps that (`-ngl`, `--ctx-size`): "
                     "size it to what the training run leaves free.\n")
    return "\n".join(parts) + ray_fix(v)


RAY_RESTART = (
    comment("see whether Ray's memory monitor is off (this prints nothing when it is on)"),
    f"tr '\\0' '\\n' < /proc/$(pgrep -o raylet)/environ | grep {RAY_MONITOR_ENV}",
    comment("stop Ray, then start it again with the monitor off (add the options it had)"),
    "ray stop",
    f"{RAY_MONITOR_ENV}=0 ray start --head",
)


def ray_fix(v: View) -> str:
    """The block turning Ray's memory monitor off, when a Ray daemon beside vLLM has it on or unread."""
    if not _ray_beside_vllm(v) or all(d.monitor == "off" for d in v.ray):
        return ""
    return ("\n\nRay's memory monitor counts page cache as pressure and kills vLLM's workers when the cache fills "
            f"the pool; start Ray with `{RAY_MONITOR_ENV}=0` in its environment:\n\n" + block(RAY_RESTART))


# -- what one snapshot shows -------------------------------------------------------------------

@dataclass
class Party:
    """One instance on the pool: a server (launcher and workers together) or a job."""

    label: str  # "vLLM pid 5120", "training pid 3310 (torchrun)"
    role: str  # "server" | "job"
    held: Optional[int]  # bytes NVML shows it holding; None: unknown
    held_why: str  # where ``held`` comes from, or why it is unknown
    growth: str = ""  # GROWTH model of a server
    cap: Optional[dict[str, Any]] = None
    footprint: Optional[float] = None  # what it can take of the pool at most; None: unknown
    pid: Any = None  # the instance's top process (a launcher; its workers exit with it)
    server: str = ""  # "vllm", "ollama" ...; "" for a job
    command: str = ""  # its command line as the probe kept it (secrets redacted, cut at COMMAND_KEPT)

    @property
    def fraction(self) -> Optional[float]:
        f = (self.cap or {}).get("fraction")
        return float(f) if is_number(f) else None


@dataclass
class Pool:
    """MemTotal and MemAvailable, each None when unread or impossible (``errors`` says which)."""

    total: Optional[int] = None
    available: Optional[int] = None
    unread: str = ""  # why MemTotal is missing
    errors: list[str] = field(default_factory=list)
    source: str = "/proc/meminfo"


@dataclass
class RayDaemon:
    """One Ray instance (raylet, gcs_server, `ray start`): whether its memory monitor is off."""

    label: str  # "Ray raylet pid 4100"
    pid: Any
    monitor: str  # "off" | "on" | "unknown"
    why: str  # what its environment says, or why it was not read


def ray_daemon(top: Any, members: list[dict[str, Any]]) -> RayDaemon:
    """What Ray's environment says of its memory monitor. Off only when a member's environment sets
    it to 0; on when an environment was read without that; unknown when none could be read."""
    head = next((m for m in members if m["pid"] == top), members[0])
    label = f"Ray {head.get('name') or 'daemon'} pid {top}"
    read = [m["env"] for m in members if isinstance(m.get("env"), dict)]
    for env in read:
        value = env.get(RAY_MONITOR_ENV)
        if isinstance(value, str) and value.strip().lstrip("+").isdigit() and int(value.strip()) == 0:
            return RayDaemon(label, top, "off", f"{RAY_MONITOR_ENV}={value}")
    if read:
        values = [env[RAY_MONITOR_ENV] for env in read if isinstance(env.get(RAY_MONITOR_ENV), str)]
        why = f"{RAY_MONITOR_ENV}={values[0]}" if values else f"{RAY_MONITOR_ENV} not set (the monitor's default: on)"
        return RayDaemon(label, top, "on", why)
    states = {str(m.get("env")) for m in members if m.get("env") is not None}
    why = ("its environment is unreadable (another user's process: run as that user or root)" if "unreadable" in states
           else "its environment was not read (a scan without it)")
    return RayDaemon(label, top, "unknown", why)


@dataclass
class View:
    """What the rules look at: one process snapshot and the pool."""

    servers: list[Party]
    jobs: list[Party]
    pool: Pool
    ok_cap: float
    nv_ok: bool
    nv_error: Any
    nv_count: int
    inside: Optional[bool]
    live: bool  # False in review mode: MemAvailable is then not from this snapshot's moment
    errors: list[str]  # measurement errors in this snapshot's rows
    ray: list[RayDaemon] = field(default_factory=list)  # Ray's daemons (no GPU memory; their environment)

    @property
    def parties(self) -> list[Party]:
        """Those that hold or can take part of the pool (a server known to hold nothing is idle)."""
        return [p for p in self.servers if p.footprint != 0] + self.jobs


# -- reading the pool --------------------------------------------------------------------------

def read_pool(r: Readings) -> Pool:
    """MemTotal/MemAvailable from the meminfo reading; a value no machine can report is a
    measurement error (named), never used."""
    reading = r.get_reading(MEMINFO)
    mem = reading.data
    pool = Pool(source=reading.source or "/proc/meminfo")
    if not isinstance(mem, dict):
        pool.unread = f"MemTotal unread: {reading.error or 'no meminfo reading'}"
        return pool
    total, avail = mem.get("MemTotal"), mem.get("MemAvailable")
    if total is None:
        pool.unread = "MemTotal unread: /proc/meminfo has no MemTotal"
    elif not is_number(total) or not 0 < total <= MEMTOTAL_MAX_BYTES:
        pool.errors.append(f"measurement error: MemTotal {total!r} is outside what a machine can report")
        pool.unread = "MemTotal unusable (measurement error)"
    else:
        pool.total = int(total)
    if avail is not None:
        if not is_number(avail) or avail < 0 or (pool.total is not None and avail > pool.total):
            pool.errors.append(f"measurement error: MemAvailable {avail!r} is outside 0..MemTotal")
        else:
            pool.available = int(avail)
    return pool


# -- building the parties from the rows --------------------------------------------------------

_OWN_SCRIPT = re.compile(r"(^|/)sparktui/probes/(target|bandwidth)_script\.py$")
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


def is_sparktui_own(row: dict[str, Any]) -> bool:
    """sparktui's own probe scripts (``python .../sparktui/probes/target_script.py ...``) are never
    the user's workload; the probe leaves them out, and so does the judge for older snapshots."""
    words = str(row.get("command") or "").split()
    return len(words) > 1 and bool(_PYTHON.match(words[0].split("/")[-1])) and bool(_OWN_SCRIPT.search(words[1]))


def _instance_cap(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The most specific cap in an instance: set > unreadable > default > none."""
    order = {"set": 0, "unreadable": 1, "default": 2, "none": 3}
    caps = [r["cap"] for r in rows if isinstance(r.get("cap"), dict) and r["cap"].get("state") in order]
    return min(caps, key=lambda c: order[c["state"]]) if caps else None


def _believed_cap(cap: dict[str, Any] | None) -> dict[str, Any] | None:
    """A cap whose fraction is not a share of the pool (0..1] is a measurement error: not believed,
    so the server's share is unknown, never judged from it."""
    f = (cap or {}).get("fraction")
    if cap is None or f is None or (is_number(f) and 0 < f <= 1):
        return cap
    return {"state": "unreadable", "fraction": None, "source": f"measurement error: cap {f!r}", "detail": ""}


def _listed(row: dict[str, Any]) -> bool:
    return bool(row.get("on_gpu")) or row.get("gpu_mem_bytes") is not None


def _impossible(row: dict[str, Any], pool: Pool) -> str | None:
    b = row.get("gpu_mem_bytes")
    if b is None:
        return None
    if not is_number(b) or b < 0:
        return f"measurement error: pid {row.get('pid')} holds {b!r} bytes on the GPU, a figure NVML cannot report"
    if pool.total is not None and b > pool.total:
        return (f"measurement error: pid {row.get('pid')} holds {gib(b)} on the GPU, more than the whole "
                f"{gib(pool.total)} pool (MemTotal)")
    return None


def held_by(members: list[dict[str, Any]], nv_ok: bool, list_seen: bool, bad_pids: list[Any]) -> tuple[int | None, str]:
    """What an instance holds on the GPU per NVML, and where that comes from. N/A is never 0;
    not being in a list NVML did read is "nothing on the GPU"."""
    if not nv_ok:
        return None, "unknown: NVML process list unavailable"
    listed = [m for m in members if _listed(m)]
    if any(m.get("pid") in bad_pids for m in listed):
        return None, "unknown: measurement error"
    na = [m for m in listed if m.get("gpu_mem_bytes") is None]
    if na:
        return None, f"N/A: NVML lists pid {', '.join(str(m.get('pid')) for m in na)} without a figure"
    if not listed:
        if not list_seen:
            return None, "unknown: not in NVML's list, which may not show it here"
        return 0, "nothing on the GPU (not in NVML's process list)"
    return int(sum(m["gpu_mem_bytes"] for m in listed)), "NVML"


def _is_job(members: list[dict[str, Any]]) -> bool:
    """An unnamed GPU process counts as a workload when it computes and is not tiny (N/A: not tiny)."""
    for m in members:
        b = m.get("gpu_mem_bytes")
        if m.get("gpu_list") == "compute" and (b is None or not is_number(b) or b >= SMALL_GPU_BYTES):
            return True
    return False


def server_footprint(p: Party, total: int | None) -> float | None:
    """What a server can take of the pool at most: a fraction server its cap's share of MemTotal
    (or more, if it already holds more); others what they hold."""
    if p.growth != "fraction":
        return p.held
    if p.fraction is None or total is None:
        return None
    share = p.fraction * total
    return share if p.held is None else max(float(p.held), share)  # the cap bounds an N/A holding


def _container_inside(r: Readings, data: Mapping[str, Any]) -> bool | None:
    inside = (data.get("container") or {}).get("inside")
    if inside is None:  # the container probe's reading, if it says so plainly
        other: Mapping[str, Any] = r.data(CONTAINER) or {}
        for key in ("inside", "in_container", "containerized"):
            value = other.get(key)
            if isinstance(value, bool):
                return value
    return inside if isinstance(inside, bool) else None


def _instances(rows: list[dict[str, Any]]) -> dict[Any, list[dict[str, Any]]]:
    """Rows by instance (a launcher and its workers share ``group``)."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row.get("group", row["pid"]), []).append(row)
    return groups


def _detail_line(top: Any, members: list[dict[str, Any]], held: int | None) -> str:
    head = next((m for m in members if m["pid"] == top), members[0])
    gpu = (gib(held) if held is not None else "n/a") if any(map(_listed, members)) else "-"
    return (f"pid {top!s:<7} {str(head.get('kind', '?')):<11} {_marked(str(head.get('name') or ''), 28):<28} "
            f"gpu {gpu:>9}  rss {gib(head.get('rss_bytes')):>9}  {_marked(str(head.get('command') or ''), 80)}")


def _marked(text: str, n: int) -> str:
    """``text`` in at most ``n`` characters, a cut ended with "…" (the process view shows it whole)."""
    return text if len(text) <= n else text[: n - 1] + "…"


def _party(top: Any, members: list[dict[str, Any]], held: int | None, why: str, pool: Pool,
           errors: list[str]) -> Party | None:
    """The server or job an instance is; None for helpers, desktop clients and other processes."""
    head = next((m for m in members if m["pid"] == top), members[0])
    server = head.get("server") or next((m.get("server") for m in members if m.get("server")), None)
    if server:
        if all(m.get("kind") == "other" for m in members):
            return None  # a helper (HTTP router, detokenizer) that holds no GPU memory
        label = f"{LABELS.get(server, server)} pid {top}"
        cap = _instance_cap(members)
        believed = _believed_cap(cap)
        if believed is not cap:
            errors.append(f"measurement error: {label}'s memory cap {(cap or {}).get('fraction')!r} "
                          f"is not a share of the pool (0..1)")
        p = Party(label, "server", held, why, GROWTH.get(server, "on-demand"), believed, pid=top, server=server,
                  command=str(head.get("command") or ""))
        p.footprint = server_footprint(p, pool.total)
        return p
    if head.get("kind") not in ("training", "gpu-process"):
        return None
    what = "training" if any(m.get("kind") == "training" for m in members) else "GPU process"
    if what == "GPU process" and not _is_job(members):
        return None  # a desktop/graphics client (Xorg, gnome-shell) or a tiny context
    p = Party(f"{what} pid {top} ({head.get('name') or head.get('process_name') or '?'})", "job", held, why, pid=top)
    p.footprint = held
    return p


def _count(nv: dict[str, Any]) -> int:
    """How many processes NVML listed (a summary without the count: none)."""
    return int(nv["count"]) if is_number(nv.get("count")) else 0


def build_view(r: Readings, data: Mapping[str, Any], pool: Pool, cfg: Config, live: bool, src: str,
               ev: EvidenceList, details: list[str]) -> View:
    """The servers and jobs of one snapshot, each with what it holds and can take."""
    nv = data.get("nvml") or {}
    nv_ok = bool(nv.get("ok"))
    nv_count = _count(nv)
    inside = _container_inside(r, data)
    list_seen = nv_ok and (nv_count > 0 or inside is False)  # absence from the list means "nothing held"
    rows = [row for row in data.get("rows") or [] if isinstance(row, dict) and "pid" in row]
    own = [row for row in rows if is_sparktui_own(row)]
    if own:
        ev.add("sparktui's own processes", src, f"{len(own)} left out (probe scripts, never the workload)")
        rows = [row for row in rows if not is_sparktui_own(row)]
    errors = [why for row in rows if (why := _impossible(row, pool))]
    bad_pids = [row.get("pid") for row in rows if _impossible(row, pool)]
    view = View([], [], pool, cfg.memory.server_cap_ok_fraction, nv_ok, nv.get("error"), nv_count, inside,
                live, errors)
    for top, members in _instances(rows).items():
        held, why = held_by(members, nv_ok, list_seen, bad_pids)
        details.append(_detail_line(top, members, held))
        if all(m.get("server") == "ray" for m in members):
            d = ray_daemon(top, members)
            view.ray.append(d)
            ev.add(f"{d.label}: memory monitor", src, f"{d.monitor}: {d.why}")
            continue
        p = _party(top, members, held, why, pool, errors)
        if p is None:
            continue
        if p.role == "server":
            view.servers.append(p)
            _server_evidence(ev, p, src, view.ok_cap)
        else:
            view.jobs.append(p)
            head = next((m for m in members if m["pid"] == top), members[0])
            ev.add(p.label, src, f"gpu {_held_text(p)}, rss {gib(head.get('rss_bytes'))} "
                                 f"(resident memory does not show what it holds on the GPU)")
    return view


def _held_text(p: Party) -> str:
    return gib(p.held) if p.held is not None and p.held_why == "NVML" else (
        "nothing (not in NVML's list)" if p.held == 0 else p.held_why)


def _server_evidence(ev: EvidenceList, p: Party, src: str, ok_cap: float) -> None:
    cap = p.cap
    if p.growth == "fraction":
        if cap is None:
            ev.add(f"{p.label} memory cap", src, "not found")
        elif cap.get("state") == "unreadable":
            ev.add(f"{p.label} memory cap", src, f"unreadable: {cap.get('source')}")
        elif p.fraction is None:
            ev.add(f"{p.label} memory cap", src, f"{cap.get('state')}: {cap.get('source')} (a large share)")
        else:
            side = "at or under" if p.fraction <= ok_cap else "over"
            ev.add(f"{p.label} memory cap", src, f"{p.fraction:g} ({cap.get('source')}): {side} {ok_cap:g}")
        grow = f"{gib(p.footprint)} at most (its cap's share of MemTotal)" if p.footprint is not None else "unknown"
    elif p.growth == "fixed":
        grow = "what it holds (allocates its model and context up front)"
    else:
        grow = "what it holds, plus any model it loads on request (size unknown)"
    if cap and p.growth != "fraction":
        extra = f"; {cap['detail']}" if cap.get("detail") else ""
        ev.add(f"{p.label} memory cap", src, f"{cap.get('state')}: {cap.get('source')}{extra}")
    ev.add(f"{p.label} holds", src, _held_text(p))
    ev.add(f"{p.label} can take", src, grow)


# -- the rules: each returns a finding or None ---------------------------------------------------

def rule_measurement_errors(v: View) -> Finding | None:
    """A figure the hardware cannot produce is a measurement error: unknown, saying so."""
    errs = v.pool.errors + v.errors
    if errs:
        return Finding(Status.UNKNOWN, "cannot tell: " + "; ".join(errs))
    return None


def _is_uncapped(p: Party, ok_cap: float) -> str | None:
    """Why a fraction server takes too much of the pool to share it, or None."""
    cap = p.cap or {}
    state = cap.get("state")
    if p.growth != "fraction" or state not in ("set", "default", "none"):
        return None
    if state == "none":
        return "no memory cap"
    if p.fraction is None:
        return "no cap given (default: a large share)" if state == "default" else "cap not understood"
    if p.fraction <= ok_cap:
        return None
    if state == "default":
        return f"no cap given (default {p.fraction:g})"
    return f"capped at {p.fraction:g}, over {ok_cap:g}"


def rule_uncapped_server(v: View) -> Finding | None:
    """A server reserving more than ``server_cap_ok_fraction`` of the pool: fails beside a job
    (the job needs room to grow), warns alone."""
    bad = [(p, why) for p in v.servers if (why := _is_uncapped(p, v.ok_cap))]
    if not bad:
        return None
    said = "; ".join(f"{p.label}: {why}" for p, why in bad)
    if v.jobs:
        return Finding(Status.FAIL, f"{said}, while {', '.join(j.label for j in v.jobs)} runs on the same pool")
    return Finding(Status.WARN, f"{said}: it competes with anything started next")


def _party_text(p: Party) -> str:
    return f"{p.label} {'up to' if p.growth == 'fraction' else 'holds'} {gib(p.footprint)}"


def rule_pool_sum(v: View) -> Finding | None:
    """What the servers hold or can take plus what the jobs hold, against MemTotal: over it
    fails, over HEADROOM_FRACTION warns. Known parts alone over a limit decide; otherwise an
    unknown part makes it unknown."""
    parties = v.parties
    if len(parties) < 2:
        return None  # one process alone cannot contend with itself
    names = ", ".join(p.label for p in parties)
    if v.pool.total is None:
        return Finding(Status.UNKNOWN, f"cannot tell whether {names} fit the pool: {v.pool.unread}")
    total = v.pool.total
    known = [p for p in parties if p.footprint is not None]
    unknown = [p for p in parties if p.footprint is None]
    s = sum(float(p.footprint) for p in known if p.footprint is not None)
    said = ", ".join(_party_text(p) for p in known)
    more = ("; and " + ", ".join(f"{p.label} holds an unknown amount ({p.held_why})" for p in unknown)) if unknown else ""
    if s > total:
        return Finding(Status.FAIL, f"{said}: {gib(s)}, more than the {gib(total)} pool{more}")
    if s > HEADROOM_FRACTION * total:
        return Finding(Status.WARN, f"{said}: {gib(s)}{' at least' if unknown else ''} of the {gib(total)} pool, "
                             f"under {100 - HEADROOM_FRACTION * 100:.0f}% left{more}")
    if unknown:
        rest = f"; the rest add up to {gib(s)} of {gib(total)}" if known else ""
        return Finding(Status.UNKNOWN, "cannot tell whether it fits the pool: "
                + ", ".join(f"{p.label} holds an unknown amount ({p.held_why})" for p in unknown) + rest)
    return None


def rule_capped_servers_add_up(v: View) -> Finding | None:
    """Several servers each capped at or under the limit, whose caps together are over it."""
    fine: list[tuple[Party, float]] = []
    for p in v.servers:
        f = p.fraction
        if p.growth == "fraction" and (p.cap or {}).get("state") in ("set", "default") and f is not None and f <= v.ok_cap:
            fine.append((p, f))
    total_cap = sum(f for _, f in fine)
    if total_cap > v.ok_cap:  # each at or under the limit: only two or more get past it
        return Finding(Status.WARN, (f"{len(fine)} capped servers add up to {total_cap:g} of memory: "
                             f"{', '.join(f'{p.label} at {f:g}' for p, f in fine)}"))
    return None


def rule_several_jobs(v: View) -> Finding | None:
    """Two jobs without caps grow into each other: each measured holding part of the pool (NVML). A
    job's name says only what it is; a holding unknown or nothing leaves this to the pool sum (which
    says unknown), so the same processes get the same verdict whether or not their parent lives."""
    measured = [j for j in v.jobs if j.held is not None and j.held > 0 and j.held_why == "NVML"]
    if len(measured) > 1:
        return Finding(Status.WARN, f"{len(measured)} uncapped jobs share the pool: "
                                    f"{', '.join(f'{j.label} holding {gib(j.held)}' for j in measured)}")
    return None


def _ray_beside_vllm(v: View) -> list[Party]:
    return [p for p in v.servers if p.server == "vllm"]  # with no Ray daemon, no rule below finds anything


def rule_ray_beside_vllm(v: View) -> Finding | None:
    """Ray beside a vLLM server with its memory monitor on warns (it kills vLLM's workers when page
    cache fills the pool); with its environment unread, unknown, never ok."""
    vllm = _ray_beside_vllm(v)
    if not vllm:
        return None
    beside = ", ".join(p.label for p in vllm)
    on = [d for d in v.ray if d.monitor == "on"]
    if on:
        return Finding(Status.WARN, f"{', '.join(f'{d.label} ({d.why})' for d in on)} beside {beside}: Ray's memory "
                                    f"monitor counts page cache as pressure and can kill vLLM's workers; set "
                                    f"{RAY_MONITOR_ENV}=0 in Ray's environment")
    unread = [d for d in v.ray if d.monitor == "unknown"]
    if unread:
        return Finding(Status.UNKNOWN, f"cannot tell whether Ray's memory monitor is off beside {beside}: "
                                       + ", ".join(f"{d.label}: {d.why}" for d in unread))
    return None


def rule_growth_vs_available(v: View) -> Finding | None:
    """Live only: fraction servers that can still grow (starting up) by more than MemAvailable."""
    if not v.live or v.pool.available is None:
        return None
    growing = [(p, p.footprint - p.held) for p in v.servers
               if p.growth == "fraction" and p.held is not None and p.footprint is not None and p.footprint > p.held]
    grow = sum(g for _, g in growing)
    if growing and grow > v.pool.available:
        who = ", ".join(f"{p.label} can still take {gib(g)} (up to its cap)" for p, g in growing)
        return Finding(Status.WARN, f"{who}: more than the {gib(v.pool.available)} still available (MemAvailable)")
    return None


def rule_cap_unreadable(v: View) -> Finding | None:
    """A fraction server whose cap could not be read: how much it takes is unknown."""
    hidden = [p for p in v.servers if p.growth == "fraction"
              and (p.cap is None or p.cap.get("state") not in ("set", "default", "none"))]
    if hidden:
        return Finding(Status.UNKNOWN, "cannot tell: memory cap unreadable for " + ", ".join(
            f"{p.label} ({(p.cap or {}).get('source') or 'cap not found'})" for p in hidden))
    return None


def rule_nvml_unavailable(v: View) -> Finding | None:
    """Without NVML's list unnamed GPU processes and every holding are unseen."""
    if v.nv_ok:
        return None
    found = ", ".join(p.label for p in v.servers + v.jobs) or "no server or training process"
    return Finding(Status.UNKNOWN, f"cannot tell: NVML process list unavailable ({v.nv_error}); name scan found {found}")


def rule_inside_container(v: View) -> Finding | None:
    """Inside a container NVML and psutil show only the container's own processes: what runs on
    the host is never seen, so nothing seen here can make it ok."""
    if v.inside:
        return Finding(Status.UNKNOWN, ("cannot tell: host processes not visible (inside a container, only its own "
                                f"{len(v.servers) + len(v.jobs)} server/job process(es) are seen)"))
    return None


def rule_empty_list_unclear(v: View) -> Finding | None:
    """Unclear whether this is a container, where only the container's own processes are seen: a
    listed process does not settle it (in the lent H200's container NVML listed the container's own
    job: tests/data/h200/load-matmul.jsonl), so an ok needs the host's processes known to be in view."""
    if v.inside is not None:
        return None
    if v.nv_ok and v.nv_count == 0:
        return Finding(Status.UNKNOWN, ("cannot tell: NVML lists no GPU process and it is unclear whether this is a "
                                "container (where the list is always empty)"))
    return Finding(Status.UNKNOWN, ("cannot tell: unclear whether this is a container, where the host's processes are not "
                            "seen"))


RULES: tuple[Callable[[View], Finding | None], ...] = (
    rule_measurement_errors, rule_uncapped_server, rule_pool_sum, rule_capped_servers_add_up, rule_several_jobs,
    rule_growth_vs_available, rule_ray_beside_vllm, rule_cap_unreadable, rule_nvml_unavailable, rule_inside_container,
    rule_empty_list_unclear)


def ok_summary(v: View) -> str:
    """What was seen, when no rule found anything."""
    idle = [p for p in v.servers if p.footprint == 0]
    idle_text = "; " + ", ".join(f"{p.label} holds nothing on the GPU (idle: no model loaded)"
                                 if p.growth == "on-demand" else f"{p.label} holds nothing on the GPU"
                                 for p in idle) if idle else ""
    parties = v.parties
    if not parties:
        return f"no inference server or other GPU process on the pool{idle_text}"
    if len(parties) == 1:
        p = parties[0]
        if p.role == "job":
            return f"one job on the pool: {p.label}{idle_text}"
        what = f"capped at {p.fraction:g}" if p.growth == "fraction" and p.fraction is not None else f"holds {_held_text(p)}"
        return f"{p.label} {what}, alone on the pool{idle_text}"
    servers = [p for p in parties if p.role == "server"]
    jobs = [p for p in parties if p.role == "job"]
    if not servers:  # jobs alone, at most one of them measured holding part of the pool
        return (f"{len(jobs)} jobs on the pool: " + ", ".join(f"{p.label} holding {_held_text(p)}" for p in jobs)
                + idle_text)
    names = ", ".join(f"{p.label} capped at {p.fraction:g}" if p.growth == "fraction" and p.fraction is not None
                      else f"{p.label} holding {_held_text(p)}" for p in servers)
    beside = f" beside {', '.join(j.label for j in jobs)}" if jobs else ""
    s = sum(float(p.footprint) for p in parties if p.footprint is not None)
    total = v.pool.total
    return f"{names}{beside}: {gib(s)} of the {gib(total)} pool at most (capped coexistence){idle_text}"


def _gpu_rows_missing(data: Mapping[str, Any]) -> str | None:
    """The scan gives every process in NVML's list a row (on_gpu), except sparktui's own and those
    that exited or were denied mid-scan; fewer rows than that is a list cut or spoilt on its way
    (a hand edit, a torn copy), and "no GPU process" read from it would be a lie."""
    nv = data.get("nvml") or {}
    if not nv.get("ok"):
        return None
    rows = data.get("rows") or []
    on_gpu = sum(1 for row in rows if isinstance(row, dict) and row.get("on_gpu"))
    skipped = data.get("skipped")
    skipped = skipped if isinstance(skipped, dict) else {}
    excused = sum(int(v) for v in (data.get("own_excluded"), skipped.get("vanished"), skipped.get("denied"))
                  if is_number(v) and float(v) > 0)
    if _count(nv) > on_gpu + excused:
        return (f"NVML lists {_count(nv)} GPU process(es), the process list has {on_gpu}"
                + (f" and {excused} left out (sparktui's own, exited or denied mid-scan)" if excused else ""))
    return None


def judge_snapshot(r: Readings, data: Mapping[str, Any], pool: Pool, cfg: Config, live: bool, src: str) -> Verdict:
    """The verdict on one process snapshot."""
    ev = EvidenceList()
    nv = data.get("nvml") or {}
    ev.add("NVML GPU process list", "NVML",
           f"{_count(nv)} process(es)" if nv.get("ok") else f"unavailable: {nv.get('error')}")
    inside = _container_inside(r, data)
    ev.add("inside a container", "/.dockerenv, /run/.containerenv, /proc/1/cgroup",
           "yes" if inside else "no" if inside is False else "cannot tell")
    skipped = data.get("skipped") or {}
    if skipped.get("vanished") or skipped.get("denied"):
        ev.add("processes skipped mid-scan", "psutil", f"{skipped.get('vanished', 0)} exited, {skipped.get('denied', 0)} denied")
    if data.get("own_excluded"):
        ev.add("sparktui's own processes", "psutil", f"{data['own_excluded']} left out (sparktui and its children)")
    if data.get("scan_error") or not isinstance(data.get("rows"), list):
        why = data.get("scan_error") or "the snapshot has no process list"
        ev.add("process scan", "psutil", why)
        return Verdict("G6", Status.UNKNOWN, f"cannot see the processes: {why}", ev.tuple(), FIND_FIX)
    missing = _gpu_rows_missing(data)
    if missing:
        ev.add("GPU processes missing from the process list", "NVML vs the process scan", missing)
        return Verdict("G6", Status.UNKNOWN, f"cannot tell: the process list is incomplete ({missing})",
                       ev.tuple(), FIND_FIX)
    details: list[str] = []
    view = build_view(r, data, pool, cfg, live, src, ev, details)  # what was seen is shown, whatever the verdict
    if pool.total is not None:
        ev.add("the pool", pool.source, f"MemTotal {gib(pool.total)}, MemAvailable {gib(pool.available)}")
    else:
        ev.add("the pool", pool.source, pool.unread)
    if nv.get("ok") and _count(nv) == 0 and inside:  # no rule can judge what the host runs
        return Verdict("G6", Status.UNKNOWN,
                       "cannot tell: host processes not visible (inside a container, NVML's process list is empty)",
                       ev.tuple(), FIND_FIX, tuple(details))
    findings = all_findings(RULES, view)
    if not findings:
        return Verdict("G6", Status.OK, ok_summary(view), ev.tuple(), FIX, tuple(details))
    worst = worst_of(findings)  # the first of the most severe
    for f in findings:
        if f != worst:
            ev.add("also", "G6", f"{f.status.value}: {f.text}")
    return Verdict("G6", worst.status, worst.text, ev.tuple(), fix_for(view), tuple(details))


# -- review mode: every snapshot of a recording ---------------------------------------------------

def _first_time(r: Readings, history: list[Any]) -> float | None:
    """The recording's first moment: meminfo's t0, else the first sample, else the first scan."""
    t0 = (r.data(MEMINFO) or {}).get("t0")
    if is_number(t0):
        return float(t0)
    samples = (r.data(TELEMETRY) or {}).get("samples") or []
    if samples and isinstance(samples[0], dict) and is_number(samples[0].get("t")):
        return float(samples[0]["t"])
    ts = [h.get("t") for h in history if is_number(h.get("t"))]
    return float(min(ts)) if ts else None


def _when(snap: Mapping[str, Any], t0: float | None) -> str:
    t = snap.get("t")
    return when_text(float(t), t0) if is_number(t) else "an unknown time (the snapshot has no time)"


def judge_review(r: Readings, history: list[Any], pool: Pool, cfg: Config, src: str) -> Verdict:
    """The worst snapshot of a recording, and when. Snapshots that could not be judged are named;
    they decide only when no snapshot could be judged."""
    judged = [(snap, judge_snapshot(r, snap, pool, cfg, False, src)) for snap in history if isinstance(snap, dict)]
    if not judged:
        return Verdict("G6", Status.UNKNOWN, "cannot tell: the recording has no readable process snapshot", (),
                       FIND_FIX)
    seen = [(s, v) for s, v in judged if v.status is not Status.UNKNOWN]
    pick_from = seen or judged
    snap, worst = max(pick_from, key=lambda sv: sv[1].status.severity)  # the earliest of the worst
    t0 = _first_time(r, history)
    when = _when(snap, t0)
    same = sum(1 for _, v in judged if v.status is worst.status)
    blind = len(judged) - len(seen)
    summary = f"{worst.summary} (worst at {when}; {worst.status.value} in {same} of {len(judged)} process snapshots"
    summary += f"; {blind} could not be judged)" if seen and blind else ")"
    ev = EvidenceList()
    ev.add("worst moment", src, when)
    ev.add("process snapshots judged", src, ", ".join(
        f"{n} {st.value}" for st in (Status.FAIL, Status.WARN, Status.UNKNOWN, Status.OK)
        if (n := sum(1 for _, v in judged if v.status is st))))
    if seen and blind:
        first_blind = next(s for s, v in judged if v.status is Status.UNKNOWN)
        ev.add("snapshot not judged", src, f"{_when(first_blind, t0)}: "
                                           f"{next(v for _, v in judged if v.status is Status.UNKNOWN).summary}")
    if worst.status is Status.OK and blind > REVIEW_BLIND_OK_SHARE * len(judged):
        return Verdict("G6", Status.UNKNOWN, f"cannot tell: {blind} of {len(judged)} process snapshots could not be "
                                             f"judged (the {len(seen)} seen were ok)", ev.tuple() + worst.evidence,
                       FIND_FIX)
    backwards = _out_of_order(history, t0)
    if backwards:
        ev.add("snapshot order", src, backwards)
        if worst.status is Status.OK:  # a spliced or reordered file: "ok throughout" is not what it shows
            return Verdict("G6", Status.UNKNOWN, f"cannot tell: {backwards}", ev.tuple() + worst.evidence, FIND_FIX)
    return Verdict("G6", worst.status, summary, ev.tuple() + worst.evidence, worst.fix, worst.details)


def _out_of_order(history: list[Any], t0: float | None) -> str | None:
    """Where a recording's process snapshots go back in time (a clock step, lines spliced or
    reordered), or None when each comes at or after the one before it."""
    ts = [(i, float(h["t"])) for i, h in enumerate(history) if isinstance(h, dict) and is_number(h.get("t"))]
    for (_, before), (i, t) in zip(ts, ts[1:]):
        if t < before:
            return (f"the recording's process snapshots are out of order (snapshot {i + 1} of {len(history)}, "
                    f"at {when_text(t, t0)}, comes after one {before - t:g} s later)")
    return None


def judge(r: Readings, cfg: Config) -> Verdict:
    reading = r.get_reading(PROCESSES)
    data = reading.data
    if data is None:
        return unknown_from("G6", reading, "process list")
    src = reading.source or "processes"
    if not data.get("scan_error"):  # a failed scan has no rows: judge_snapshot says it could not see
        lacking = unknown_if_lacking("G6", reading, "process list", "rows", "nvml")
        if lacking is not None:
            return lacking
    pool = read_pool(r)
    history = data.get("history")
    if data.get("review") and isinstance(history, list) and history:
        return judge_review(r, history, pool, cfg, src)
    return judge_snapshot(r, data, pool, cfg, not data.get("review"), src)


_PID_NAMED = re.compile(r"\bpid (\d+)")


def marked_pids(verdict: Verdict) -> frozenset[int]:
    """The pids a warning or failing verdict names, for the dashboard to mark in its process table:
    those in its finding, else those its evidence names. An ok or unknown verdict marks no one."""
    if verdict.status not in (Status.WARN, Status.FAIL):
        return frozenset()
    named = _PID_NAMED.findall(verdict.summary)
    if not named:
        named = [p for e in verdict.evidence for p in _PID_NAMED.findall(str(e.what))]
    return frozenset(int(p) for p in named)


GOTCHA = Gotcha(
    id="G6",
    slug="contention",
    title="Contention on the unified memory pool",
    symptom=("A run slows down or dies mid-way with nothing in its own logs, or an inference server's KV cache "
             "and weights get evicted; usually another process on the box grew into the memory."),
    cause=("GPU and CPU memory are one pool. An inference server left running (vLLM, SGLang, Ollama, NIM ...) "
           "that takes most of the pool, or grows into it, takes what a training job then cannot get. A "
           "small bounded neighbour is fine: a <4 GB LoRA has run cleanly beside vLLM capped at 0.5. What "
           "matters is what each process holds and can still take, not its presence."),
    check=("Lists NVML's compute and graphics processes with the memory each holds, and scans every process "
           "(psutil) for inference servers (vLLM incl. VLLM::EngineCore, SGLang, llama.cpp, Ollama, TensorRT-LLM, "
           "NIM, Triton, TGI) and training jobs (torchrun, accelerate, deepspeed, train/SFT/fine-tune scripts, "
           "Unsloth); sparktui and its own children are left out. What a server can take: vLLM, SGLang, "
           "TensorRT-LLM, TGI and NIM a fraction of the pool read from their flags or environment "
           "(--gpu-memory-utilization, default 0.9; --mem-fraction-static; free_gpu_memory_fraction; "
           "--cuda-memory-fraction; NIM_GPU_MEM_FRACTION); Ollama what its loaded models hold (nothing while "
           "idle); llama.cpp what it holds (allocated up front). A fraction over `memory.server_cap_ok_fraction` "
           "fails beside a training job and warns alone. Servers' share plus jobs' holdings over MemTotal fail; "
           "over 90% of it warn; a server still starting that can take more than MemAvailable warns; two jobs warn "
           "only when NVML measured each holding part of the pool, never from their names. A Ray daemon (raylet, "
           "gcs_server, `ray start`) beside vLLM without RAY_memory_monitor_refresh_ms=0 in its environment warns "
           "(its memory monitor kills vLLM's workers when page cache fills the pool); its environment unread is "
           "unknown. A holding "
           "NVML reports as N/A is an unknown amount, never 0; a failed scan, MemTotal unread, or a figure "
           "the hardware cannot produce is unknown, and so is a process list lacking processes NVML lists. "
           "Inside a container an empty NVML list is \"cannot see\". A recording is judged snapshot by "
           "snapshot: the worst, and when; ok needs all but a tenth of its snapshots judged."),
    fix=FIX,
    intrusive=False,
    cadence_s=10.0,
    probes=("processes", "meminfo"),
    feed=Feed.TELEMETRY,
    shows="processes",
    marks=marked_pids,
    judge=judge,
    references=("Per-process GPU memory works on the host, empty inside a container: nvitop PR #208, sparkDash #10",
                "Server caps: each server's own flag (vLLM --gpu-memory-utilization, SGLang --mem-fraction-static, "
                "TensorRT-LLM free_gpu_memory_fraction); docs/gotchas.md, G6",
                "RSS does not show GPU memory: vllm #54200 (1.8 GiB RSS holding 77 GiB)",
                "Ray's memory monitor and RAY_memory_monitor_refresh_ms=0: docs.ray.io, Out-Of-Memory Prevention; "
                "killing vLLM when page cache fills: conselara.dev (community)"),
)
