"""Everything on the unified memory pool: NVML's GPU processes plus a psutil scan for inference
servers and training jobs, each server with the memory cap read from its flags or environment.

The scan reads; G6 judges. A process that exits or denies access mid-scan is skipped and counted,
never fatal. Inside a container NVML's process list is empty (its own PID namespace), so the
reading says whether this looks like a container: an empty list there means "cannot see". A scan
that fails is a distinct state (``scan_error``, no ``rows``), never an empty list. sparktui itself
and its children (the target and bandwidth probes, ssh to peers), and any sparktui's probe scripts,
are left out: they are never the user's workload.

Reading "processes" data::

    {"rows": [{"pid", "ppid", "user", "kind": "server"|"training"|"gpu-process"|"other",
               "server": "vllm"|"sglang"|"llamacpp"|"ollama"|"trtllm"|"nim"|"triton"|"tgi"|None,
               "name", "process_name", "command", "gpu_mem_bytes" (NVML; None if not listed or N/A),
               "on_gpu" (listed by NVML), "gpu_list": "compute"|"graphics", "rss_bytes", "age_s",
               "cap": {"state": "set"|"default"|"none"|"unreadable"|"n/a", "fraction", "source", "detail"},
               "env": {memory-relevant variables} | "unreadable",
               "group": pid of the instance's top process (launcher and its workers share it),
               "cpu_pct": % of one core since the last scan (None on a process's first scan: n/a, never 0),
               "gpu_util": SM % from NVML's per-process samples (None where NVML gives none: n/a, never 0),
               "container": {"runtime", "id", "name"} | None (from /proc/PID/cgroup; None: not in one)}],
     "others": [rows of every other process, kind "other"] (only while the dashboard lists every process),
     "mem_total_bytes": MemTotal (the pool a row's share is of), "all": whether "others" was asked for,
     "gpu_util_error": why NVML gave no per-process utilisation (None when it gave some),
     "nvml": {"ok", "error", "count"}, "container": {"inside": True|False|None, "markers", ...},
     "skipped": {"vanished", "denied"}, "own_excluded": N, "scanned": N, "t": unix time}

    on failure: {"scan_error": "process scan failed: ...", "nvml", "container", "skipped", "t"} (no "rows")
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import time
from typing import Any, Iterable

from sparktui.core import shapes
from sparktui.core.secrets import REDACTED, scrub_secrets
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.probes.nvml import NvmlSession
from sparktui.probes.declared import Probe

# Environment variables worth showing per server (memory-relevant).
SERVER_ENV = {
    "nim": ("NIM_GPU_MEM_FRACTION", "NIM_KVCACHE_PERCENT", "NIM_MAX_MODEL_LEN", "NIM_TENSOR_PARALLEL_SIZE"),
    "ollama": ("OLLAMA_MAX_LOADED_MODELS", "OLLAMA_GPU_OVERHEAD", "OLLAMA_NUM_PARALLEL", "OLLAMA_KEEP_ALIVE",
               "OLLAMA_CONTEXT_LENGTH", "OLLAMA_FLASH_ATTENTION", "OLLAMA_KV_CACHE_TYPE"),
    "tgi": ("CUDA_MEMORY_FRACTION",),
    "vllm": ("VLLM_GPU_MEMORY_UTILIZATION",),
    # Ray's memory monitor reads page cache as pressure and kills vLLM's workers; G6 asks whether it is off
    "ray": ("RAY_memory_monitor_refresh_ms", "RAY_memory_usage_threshold"),
}
# Defaults when a server is started without its cap (each server's documentation; TRT-LLM's is a
# share of the memory left after the weights; TGI's --cuda-memory-fraction defaults to 1.0).
DEFAULT_CAPS = {"vllm": 0.9, "trtllm": 0.9, "tgi": 1.0}  # vLLM: CacheConfig default

_TRAIN_SCRIPT = re.compile(r"(train|sft|finetun|fine[-_]tun|pretrain|dpo|grpo|ppo|lora|distill)", re.I)
_PY = re.compile(r"^python(\d+(\.\d+)?)?$")
_NIM = re.compile(r"(^|/)nim[-_][\w-]*$|/opt/nim/|vllm_nvext|nimlib|nim_llm", re.I)


def _base(arg: str) -> str:
    return os.path.basename(arg.rstrip("/")) if arg else ""


_PY_OPTS_WITH_ARG = {"-W", "-X", "-Q"}


def program(tokens: list[str]) -> tuple[str, str | None, list[str]]:
    """(program, module, args): what an argv runs. For a Python interpreter that is the script
    (console scripts such as ``vllm`` or ``torchrun`` run as ``python /venv/bin/vllm serve ...``)
    or the ``-m`` module; after ``-c CODE`` the next argument is taken as the program name."""
    if not tokens:
        return "", None, []
    exe = _base(tokens[0])
    if not _PY.match(exe):
        return exe, None, tokens[1:]
    i = 1
    while i < len(tokens):
        t = tokens[i]
        if t == "-m" and i + 1 < len(tokens):
            return exe, tokens[i + 1], tokens[i + 2:]
        if t == "-c":
            rest = tokens[i + 2:]
            return (_base(rest[0]), None, rest[1:]) if rest else (exe, None, [])
        if t in _PY_OPTS_WITH_ARG:
            i += 2
            continue
        if t.startswith("-"):
            i += 1
            continue
        return _base(t), None, tokens[i + 1:]
    return exe, None, []


# sparktui's own probe scripts, run in the training interpreter: `target_script.py --packages
# ...,unsloth,...` is not a training job, wherever that sparktui runs (this one, an exporter, a peer's)
# python -m pip install unsloth, pytest tests/test_unsloth.py: tools, not training jobs
_TOOL_MODULES = ("pip", "pytest", "ensurepip", "venv", "uv", "pipx", "build", "twine")
_OWN_SCRIPTS = re.compile(r"(^|/)sparktui/probes/(target|bandwidth)_script\.py$")


def classify(name: str, cmdline: list[str]) -> tuple[str, str | None, str]:
    """(kind, server, label) from a process name and argv. kind: server/training/other/''."""
    tokens = [t for t in (cmdline or []) if t is not None]
    if len(tokens) > 1 and _PY.match(_base(tokens[0])) and _OWN_SCRIPTS.search(tokens[1]):
        return "", None, ""  # if it holds GPU memory (G5's copy loop), NVML still lists it
    if len(tokens) == 1 and " " in tokens[0] and tokens[0].startswith(("VLLM::", "sglang::")):
        tokens = tokens[0].split()  # setproctitle'd processes may pad argv[0]
    argv0 = tokens[0] if tokens else name
    title = argv0 if argv0.startswith(("VLLM::", "sglang::")) else (name or "")
    prog, module, args = program(tokens)
    module = module or ""
    sub = args[0] if args else ""

    # inference servers
    if title.startswith("VLLM::"):
        return "server", "vllm", title
    if (prog == "vllm" and sub == "serve") or module.startswith("vllm.entrypoints"):
        return "server", "vllm", "vllm serve"
    if title.startswith("sglang::"):
        return ("server" if "scheduler" in title else "other"), "sglang", title
    if module == "sglang.launch_server" or (prog == "sglang" and sub == "serve"):
        return "server", "sglang", "sglang.launch_server"
    if prog == "llama-server" or module == "llama_cpp.server":
        return "server", "llamacpp", "llama-server"
    if prog == "ollama_llama_server" or (prog == "ollama" and sub == "runner"):
        return "server", "ollama", "ollama runner"
    if prog == "ollama" and sub == "serve":
        return "server", "ollama", "ollama serve"
    if prog == "trtllm-serve" or module == "tensorrt_llm.commands.serve":
        return "server", "trtllm", "trtllm-serve"
    if prog == "tritonserver":
        return "server", "triton", "tritonserver"
    if prog in ("text-generation-launcher", "text-generation-server"):
        return "server", "tgi", prog
    if prog == "text-generation-router":
        return "other", "tgi", prog  # HTTP router: holds no GPU memory
    if _NIM.search(prog) or any(_NIM.search(t) for t in tokens[:3]) or _NIM.search(module):
        return "server", "nim", "NIM"
    # Ray's daemons hold no GPU memory ("other"); their environment is read for G6's memory-monitor rule
    if prog in ("raylet", "gcs_server") or (prog == "ray" and sub == "start"):
        return "other", "ray", prog if prog != "ray" else "ray start"

    # training jobs
    if prog in ("torchrun", "deepspeed", "axolotl") or module in ("torch.distributed.run", "torch.distributed.launch"):
        return "training", None, prog if prog in ("torchrun", "deepspeed", "axolotl") else module
    if (prog == "accelerate" and sub == "launch") or module == "accelerate.commands.launch":
        return "training", None, "accelerate launch"
    if prog == "llamafactory-cli" and sub == "train":
        return "training", None, "llamafactory-cli train"
    if prog == "tune" and sub == "run":
        return "training", None, "tune run"
    if _PY.match(_base(tokens[0]) if tokens else "") and not module.startswith(_TOOL_MODULES) and (
            "unsloth" in prog.lower() or module.startswith("unsloth")
            or any(t.lower().startswith("unsloth/") for t in args)):  # a script, a module, or an unsloth/ model
        return "training", None, "unsloth"
    if module and _TRAIN_SCRIPT.search(module.rsplit(".", 1)[-1]) and not module.startswith("pytest"):
        return "training", None, module
    if prog.endswith(".py") and _TRAIN_SCRIPT.search(prog):
        return "training", None, prog
    return "", None, ""


def flag_value(tokens: list[str], *names: str) -> str | None:
    """Value of ``--flag X`` or ``--flag=X`` (last one wins, as argparse does)."""
    found = None
    for i, t in enumerate(tokens):
        for n in names:
            if t == n and i + 1 < len(tokens):
                found = tokens[i + 1]
            elif t.startswith(n + "="):
                found = t[len(n) + 1:]
    return found


def _fraction(text: str | None) -> float | None:
    """A memory share as a server reads it (0.5, or 50 meaning per cent); None for anything that is
    no share of the pool (NaN, inf, 0, negative, over 100): an impossible cap is no cap."""
    try:
        v = float(str(text).strip().strip("'\""))
    except (TypeError, ValueError):
        return None
    if not math.isfinite(v) or v <= 0 or v > 100:
        return None
    return v / 100.0 if v > 1.0 else v


def _from_file(path: str | None, *keys: str) -> tuple[float | None, str | None]:
    """Find ``key: value`` in a small YAML/JSON config without a YAML dependency."""
    if not path:
        return None, None
    try:  # the path comes from another process's argv: never block on a FIFO or read a device
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None, None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, None
        text = os.read(fd, 256 * 1024).decode("utf-8", "replace")
    except OSError:
        return None, None
    finally:
        os.close(fd)
    for k in keys:
        m = re.search(rf"['\"]?{re.escape(k)}['\"]?\s*[:=]\s*['\"]?([0-9.]+)", text)
        if m:
            return _fraction(m.group(1)), f"{k} in {path}"
    return None, None


def _cap(state: str, fraction: float | None, source: str, detail: str = "") -> dict[str, Any]:
    return {"state": state, "fraction": fraction, "source": source, "detail": detail}


def _given(value: str, source: str, detail: str = "") -> dict[str, Any]:
    """The cap a server was given (a flag or variable it reads): set, or unreadable when the value is
    no share of the pool (`nan`, `-1`, `150`), never the server's default as if none were given."""
    f = _fraction(value)
    if f is None:
        return _cap("unreadable", None, f"{source}: not a share of memory (0 < x <= 1, or a percentage)", detail)
    return _cap("set", f, source, detail)


def parse_cap(server: str, tokens: list[str], env: dict[str, str] | None, env_error: str | None) -> dict[str, Any]:
    """The memory cap a server was started with.

    ``state``: "set" (flag/env/config), "default" (flag absent: the server's default applies),
    "none" (the server has no fractional cap), "unreadable" (the cap lives in the environment and
    psutil was denied it), "n/a" (helper process without GPU memory).
    """
    env = env or {}
    if server == "vllm":
        v = flag_value(tokens, "--gpu-memory-utilization", "--gpu_memory_utilization")
        if v is not None:
            return _given(v, f"--gpu-memory-utilization {v}")
        f, where = _from_file(flag_value(tokens, "--config"), "gpu-memory-utilization", "gpu_memory_utilization")
        if f is not None:
            return _cap("set", f, where or "--config")
        return _cap("default", DEFAULT_CAPS["vllm"], "no --gpu-memory-utilization: vLLM's default")
    if server == "sglang":
        v = flag_value(tokens, "--mem-fraction-static", "--mem_fraction_static")
        if v is not None:
            return _given(v, f"--mem-fraction-static {v}")
        return _cap("default", None, "no --mem-fraction-static: SGLang picks a large share by GPU size")
    if server == "trtllm":
        v = flag_value(tokens, "--kv_cache_free_gpu_memory_fraction", "--kv-cache-free-gpu-memory-fraction")
        if v is not None:
            return _given(v, f"--kv_cache_free_gpu_memory_fraction {v}", "share of the memory left after the weights")
        f, where = _from_file(flag_value(tokens, "--extra_llm_api_options", "--config"), "free_gpu_memory_fraction")
        if f is not None:
            return _cap("set", f, where or "--extra_llm_api_options", "share of the memory left after the weights")
        return _cap("default", DEFAULT_CAPS["trtllm"], "no free_gpu_memory_fraction: TensorRT-LLM's default",
                   "share of the memory left after the weights")
    if server == "tgi":
        v = flag_value(tokens, "--cuda-memory-fraction")
        if v is None and "CUDA_MEMORY_FRACTION" in env:
            v = env["CUDA_MEMORY_FRACTION"]
        if v is not None:
            return _given(v, f"--cuda-memory-fraction {v}")
        if env_error:
            return _cap("unreadable", None, f"environment unreadable ({env_error})")
        return _cap("default", DEFAULT_CAPS["tgi"], "no --cuda-memory-fraction: TGI's default (1.0)")
    if server == "nim":
        if env_error:
            return _cap("unreadable", None, f"NIM_GPU_MEM_FRACTION lives in the environment, unreadable ({env_error})")
        for key in ("NIM_GPU_MEM_FRACTION", "NIM_KVCACHE_PERCENT"):
            if key in env:
                return _given(env[key], f"env {key}={env[key]}")
        return _cap("default", None, "no NIM_GPU_MEM_FRACTION / NIM_KVCACHE_PERCENT: NIM's default")
    if server == "ollama":
        shown = {k: env[k] for k in SERVER_ENV["ollama"] if k in env}
        detail = ", ".join(f"{k}={v}" for k, v in shown.items()) if not env_error else f"environment unreadable ({env_error})"
        return _cap("none", None, "Ollama has no fractional cap; loads models on demand", detail or "no OLLAMA_* limits set")
    if server == "llamacpp":
        parts = []
        for flags, label in ((("-ngl", "--n-gpu-layers", "--gpu-layers"), "-ngl"), (("-c", "--ctx-size"), "--ctx-size")):
            v = flag_value(tokens, *flags)
            if v is not None:
                parts.append(f"{label} {v}")
        return _cap("none", None, "llama.cpp has no fractional cap (size set by model, -ngl, --ctx-size)", ", ".join(parts))
    if server == "triton":
        return _cap("none", None, "Triton has no server-wide fractional cap (per-model backends decide)")
    return _cap("n/a", None, "")


# -- container -------------------------------------------------------------------------------

CONTAINER_MARKERS = ("/.dockerenv", "/run/.containerenv", "/run/systemd/container")  # the last: nspawn/podman+systemd
_CGROUP_WORDS = ("docker", "kubepods", "containerd", "libpod", "lxc", "podman")


def detect_container(markers: Iterable[str] = CONTAINER_MARKERS, proc: str = "/proc") -> dict[str, Any]:
    """``inside``: True (marker file or container cgroup), False (no marker and PID 1 is an init
    system), None (cannot tell: cgroup v2 and some runtimes hide the runtime's name)."""
    found = [m for m in markers if os.path.exists(m)]
    cgroup = ""
    try:
        with open(os.path.join(proc, "1", "cgroup"), encoding="utf-8", errors="replace") as f:
            cgroup = f.read(64 * 1024)
    except OSError:
        pass
    words = [w for w in _CGROUP_WORDS if w in cgroup]
    pid1 = None
    try:
        with open(os.path.join(proc, "1", "comm"), encoding="utf-8", errors="replace") as f:
            pid1 = f.read().strip()
    except OSError:
        pass
    if found or words:
        inside: bool | None = True
    elif pid1 in ("systemd", "init"):
        inside = False
    else:
        inside = None
    return {"inside": inside, "markers": found, "cgroup_words": words, "pid1": pid1}


# -- NVML --------------------------------------------------------------------------------------

NVML_NOT_AVAILABLE = 0xFFFFFFFFFFFFFFFF  # NVML_VALUE_NOT_AVAILABLE for unsigned long long: N/A


def nvml_processes(session: NvmlSession) -> dict[str, Any]:
    """{pid: bytes|None} over all GPUs, compute and graphics lists; errors per list."""
    out: dict[str, Any] = {"ok": False, "error": None, "pids": {}, "compute": set(), "lists_read": 0}
    if session.nv is None or not session.open:
        out["error"] = session.error or "NVML not initialised"
        return out
    errors = []
    for h in session.handles:
        for fn in ("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses"):
            f = session.get(fn, h, convert=lambda procs: [(int(p.pid), p.usedGpuMemory) for p in procs])
            if f.error is not None:
                errors.append(f"{fn}: {f.error}")
                continue
            out["lists_read"] += 1
            if "Compute" in fn:
                out["compute"].update(pid for pid, _ in f.value)
            for pid, used in f.value:
                used = int(used) if isinstance(used, int) and 0 <= used < NVML_NOT_AVAILABLE else None
                prev = out["pids"].get(pid, None)
                known = [v for v in (prev, used) if v is not None]
                out["pids"][pid] = max(known) if known else None  # N/A stays None, never 0
    out["ok"] = out["lists_read"] > 0
    out["error"] = "; ".join(errors) or None
    out["util"], out["util_error"] = nvml_process_util(session)
    return out


UTIL_WINDOW_S = 10.0  # the samples looked at: NVML keeps a short buffer; the newest per pid is shown


def nvml_process_util(session: NvmlSession, now: float | None = None) -> tuple[dict[int, int], str | None]:
    """({pid: SM utilisation %}, why none) from nvmlDeviceGetProcessUtilization over every GPU: the
    newest sample per pid within UTIL_WINDOW_S. A pid without a sample is absent (shown n/a, never
    0); NOT_FOUND (no samples in the window) and NOT_SUPPORTED say why in the second value."""
    since = int(((time.time() if now is None else now) - UTIL_WINDOW_S) * 1e6)
    newest: dict[int, tuple[int, int]] = {}
    errors = []
    for h in session.handles:
        f = session.get("nvmlDeviceGetProcessUtilization", h, since,
                        convert=lambda ss: [(int(x.pid), int(x.timeStamp), int(x.smUtil)) for x in ss])
        if f.error is not None:
            errors.append(f.error)
            continue
        for pid, stamp, sm in f.value:
            if 0 <= sm <= 100 and stamp >= newest.get(pid, (-1, 0))[0]:  # past 100: no reading
                newest[pid] = (stamp, sm)
    util = {pid: sm for pid, (_, sm) in newest.items()}
    return util, (None if util or not errors else "; ".join(dict.fromkeys(errors)))


# -- per-process CPU %, container ---------------------------------------------------------------

class CpuMeter:
    """CPU % per process between two scans, from the user+system seconds a scan already reads (psutil's
    stat read, cached in its oneshot: no extra read). A process's first scan has no interval: None
    (n/a, never 0). Keyed by pid and start time, so a reused pid starts afresh; forgotten with the pid."""

    def __init__(self) -> None:
        self._last: dict[int, tuple[float | None, float, float]] = {}  # pid -> (started, cpu s, monotonic)

    def percent(self, pid: int, started: float | None, cpu_s: float | None, mono: float) -> float | None:
        if cpu_s is None:
            self._last.pop(pid, None)
            return None
        prev = self._last.get(pid)
        self._last[pid] = (started, cpu_s, mono)
        if prev is None or prev[0] != started or mono - prev[2] <= 0.05 or cpu_s < prev[1]:
            return None
        return round(100.0 * (cpu_s - prev[1]) / (mono - prev[2]), 1)

    def forget_except(self, alive: Iterable[int]) -> None:
        keep = set(alive)
        self._last = {pid: v for pid, v in self._last.items() if pid in keep}


_CPU = CpuMeter()

CGROUP_BYTES = 64 * 1024
# One path segment naming a container: systemd scopes (docker-ID.scope, libpod-ID.scope,
# cri-containerd-ID.scope, crio-ID.scope), podman's cgroupfs and quadlet names, or a bare id under
# docker/, kubepods/.../pod.../, containerd/, ecs/. Each segment is short and matched whole: linear.
_SCOPE = re.compile(r"(docker|libpod|libpod-payload|cri-containerd|crio|containerd)-([0-9a-f]{12,64})(\.scope)?")
_BARE_ID = re.compile(r"[0-9a-f]{64}")
_RUNTIME = {"docker": "docker", "libpod": "podman", "libpod-payload": "podman", "cri-containerd": "containerd",
            "crio": "cri-o", "containerd": "containerd"}


def parse_cgroup(text: str) -> dict[str, str] | None:
    """The container a /proc/PID/cgroup names: {"runtime", "id"}; None for a host process. Every
    line is looked at (cgroup v1 has one per hierarchy, v2 one ``0::`` line); in a line, the
    innermost container wins (kind's pods inside a docker container). ``libpod-conmon-ID`` is
    podman's monitor on the host, not the container."""
    for line in text.splitlines()[:64]:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        segments = parts[2].split("/")
        for i in range(len(segments) - 1, -1, -1):
            seg = segments[i][:256]
            if ":cri-containerd:" in seg:  # containerd's systemd driver on cgroup v1: SLICE:cri-containerd:ID
                cid = seg.rsplit(":", 1)[1]
                if _BARE_ID.fullmatch(cid):
                    return {"runtime": "containerd", "id": cid}
                continue
            m = _SCOPE.fullmatch(seg)
            if m:
                return {"runtime": _RUNTIME[m.group(1)], "id": m.group(2)}
            if _BARE_ID.fullmatch(seg):
                above = "/".join(segments[:i])
                runtime = ("docker" if "docker" in above else "kubepods" if "kubepods" in above
                           else "containerd" if "containerd" in above else "ecs" if "/ecs/" in above + "/"
                           else "podman" if "libpod" in above else None)
                if runtime:
                    return {"runtime": runtime, "id": seg}
    return None


_NAMES: dict[str, tuple[float, str | None]] = {}  # container id -> (when looked up, name or None)
NAME_TTL_S = 60.0
DOCKER_ROOT = "/var/lib/docker/containers"
PODMAN_STORES = ("/var/lib/containers/storage/overlay-containers/containers.json",)


def container_name(runtime: str, cid: str, now: float | None = None) -> str | None:
    """The name a container was given, where its runtime keeps it readable (docker's config.v2.json,
    podman's containers.json: both root's); None otherwise (the short id is shown). Looked up once a
    minute per container."""
    now = time.monotonic() if now is None else now
    hit = _NAMES.get(cid)
    if hit is not None and now - hit[0] < NAME_TTL_S:
        return hit[1]
    name = None
    try:
        if runtime == "docker":
            raw = _read(os.path.join(DOCKER_ROOT, cid, "config.v2.json"), 1 << 20)
            got = json.loads(raw).get("Name") if raw else None
            name = got.lstrip("/") if isinstance(got, str) else None
        elif runtime == "podman":
            for store in PODMAN_STORES:
                raw = _read(store, 4 << 20)
                for c in (json.loads(raw) if raw else []):
                    if isinstance(c, dict) and c.get("id") == cid and c.get("names"):
                        name = str(c["names"][0])
                        break
    except (ValueError, AttributeError, TypeError):
        name = None
    if len(_NAMES) > 512:
        _NAMES.clear()
    _NAMES[cid] = (now, name[:128] if name else None)
    return _NAMES[cid][1]


class ContainerOf:
    """The container of each process, read once per process (its cgroup is set when it starts)."""

    def __init__(self, proc: str = "/proc") -> None:
        self.proc = proc
        self._known: dict[int, tuple[float | None, dict[str, str] | None]] = {}

    def of(self, pid: int, started: float | None) -> dict[str, Any] | None:
        hit = self._known.get(pid)
        if hit is None or hit[0] != started:
            text = _read(os.path.join(self.proc, str(pid), "cgroup"), CGROUP_BYTES)
            hit = (started, parse_cgroup(text) if text else None)
            self._known[pid] = hit
        found = hit[1]
        if found is None:
            return None
        return {**found, "name": container_name(found["runtime"], found["id"])}

    def forget_except(self, alive: Iterable[int]) -> None:
        keep = set(alive)
        self._known = {pid: v for pid, v in self._known.items() if pid in keep}


_CONTAINERS = ContainerOf()


def mem_total(proc: str = "/proc") -> int | None:
    """MemTotal in bytes (the unified pool a row's share is of); None when unreadable."""
    text = _read(os.path.join(proc, "meminfo"), 8192) or ""
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            try:
                return int(line.split()[1]) * 1024
            except (ValueError, IndexError):
                return None
    return None


_WANT_ALL = False


def want_all(on: bool) -> None:
    """The dashboard lists every process (not only the classified ones) while ``on``: the scans
    then describe every process (``others``), which costs only while it is shown."""
    global _WANT_ALL
    _WANT_ALL = bool(on)


# -- psutil scan -------------------------------------------------------------------------------

class ProcLister:
    """Phase 1 from /proc, cheap enough to run every few seconds on a host with hundreds of
    processes: psutil reads stat and argv of each, 43 ms for 563 processes (0.9% of a core at one
    scan per 5 s); this, 1.6 ms averaged (benchmarks/sample_cost.py --extra-processes 500).

    A scan lists /proc and reads only processes it has not seen (stat and argv, then classify)
    and those younger than ``fresh_s`` (one may not have renamed itself yet, as vLLM's engine
    does). Every ``full_every``-th scan rereads everything: late renames, new parents. A pid that
    vanishes is forgotten at once, so a cached row could only belong to a different process if
    the kernel handed the same pid out again between two scans, which needs pid_max forks in one
    interval; a full scan compares start times anyway, and a scan more than ``max_gap_s`` after
    the last one is always full (an occasional caller, like `sparktui check`, trusts nothing)."""

    def __init__(self, proc: str = "/proc", fresh_s: float = 30.0, full_every: int = 12,
                 max_gap_s: float = 15.0) -> None:
        self.proc = proc
        self.fresh_s = fresh_s
        self.full_every = full_every
        self.max_gap_s = max_gap_s
        self.scans = 0
        self.last_scan = float("-inf")
        self._known: dict[int, tuple[float | None, str, dict[str, Any]]] = {}  # pid -> (started, comm, row)
        self._tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self._boot = _boot_time(proc)

    def usable(self) -> bool:
        return os.path.exists(os.path.join(self.proc, "self", "stat"))

    def list(self) -> tuple[list[dict[str, Any]], dict[str, int]]:
        rows: list[dict[str, Any]] = []
        skipped = {"vanished": 0, "denied": 0}
        me, now = os.getpid(), time.time()
        full = self.scans % self.full_every == 0 or time.monotonic() - self.last_scan > self.max_gap_s
        self.scans += 1
        self.last_scan = time.monotonic()
        seen: dict[int, tuple[float | None, str, dict[str, Any]]] = {}
        for name in os.listdir(self.proc):
            if not (name.isascii() and name.isdigit()) or (pid := int(name)) == me:
                continue
            entry = self._known.get(pid)
            if entry is None or full or (entry[0] is not None and now - entry[0] < self.fresh_s):
                entry = self._read_process(pid, entry, skipped)  # new, young, or a full scan
                if entry is None:
                    continue
            seen[pid] = entry
            rows.append(dict(entry[2], cmdline=list(entry[2]["cmdline"])))
        self._known = seen  # exited processes are forgotten: the cache is as big as the process list
        return rows, skipped

    def _read_process(self, pid: int, known: tuple | None,
                      skipped: dict[str, int]) -> tuple[float | None, str, dict[str, Any]] | None:
        """(start time, comm, row), or None counted in ``skipped``: gone (vanished), or a stat line
        that is no process's (unreadable: never a row with a made-up parent or start)."""
        text = _read(os.path.join(self.proc, str(pid), "stat"), STAT_BYTES)
        if text is None:
            skipped["vanished"] += 1
            return None
        parsed = parse_stat(text)
        if parsed is None:
            skipped["unreadable"] = skipped.get("unreadable", 0) + 1
            return None
        comm, ppid, flags, ticks = parsed
        started = self._boot + ticks / self._tick if self._boot is not None else None
        if known is not None and known[0] == started and known[1] == comm and known[2]["ppid"] == ppid and \
                started is not None and time.time() - started >= self.fresh_s:
            return known  # same process, same name, settled: argv as read before
        if flags & 0x00200000:  # PF_KTHREAD: a kernel thread has no argv and never a GPU
            cmd: list[str] = []
            whole = True
        else:
            raw = _read(os.path.join(self.proc, str(pid), "cmdline"), CMDLINE_BYTES, binary=True)
            if raw is None:
                skipped["vanished"] += 1
                return None
            whole = len(raw) < CMDLINE_BYTES
            if not whole and b"\x00" in raw:  # cut mid-argument: NUL-separated still, the cut one dropped
                raw = raw[:raw.rindex(b"\x00") + 1]
            cmd = _split_cmdline(raw)
        cmd, cut, over = cut_argv(cmd, read_whole=whole)
        name = _full_name(comm, cmd)
        kind, server, label = classify(name, cmd)
        return started, comm, {"pid": pid, "ppid": ppid, "name": name, "cmdline": cmd, "kind": kind,
                               "server": server, "label": label, "argv_cut": cut, "argv_over": over,
                               "started": started}  # with the pid, the process's identity: a signal checks it


STAT_BYTES = 4096  # /proc/<pid>/stat: 52 numbers and a 16-byte name
CMDLINE_BYTES = 1 << 20  # the most of an argv read from /proc; a longer one counts as "over 1 MiB"
# Another user's argv is outside text: what is matched is cut first (issue 22). Classification,
# the cap flags and G8's suggestions see the first ARGV_MATCHED characters of the argv; the rest is
# counted (``argv_cut``) and never read as absent: a server whose argv was cut has its cap
# "unreadable" (G6: unknown), never the default "as if no flag were given". The row's command is
# scrubbed from its first COMMAND_SCRUBBED characters and keeps COMMAND_KEPT of them; a longer line
# is then that long or holds [redacted], which G6 reads as "not kept whole" (``command_text``).
ARGV_MATCHED = 64 * 1024
COMMAND_SCRUBBED = 4096
_CAP_FROM_ARGV = ("vllm", "sglang", "trtllm", "tgi")  # servers whose cap is a flag (TGI: a flag beats its env)


def cut_argv(cmd: list[str], read_whole: bool = True) -> tuple[list[str], int, bool]:
    """(the argv words matched, characters left out of them, whether the argv was longer than what
    was read). The words are kept whole up to ARGV_MATCHED characters joined; the word crossing it
    is cut there."""
    kept: list[str] = []
    used = 0
    for word in cmd:
        room = ARGV_MATCHED - used - (1 if kept else 0)
        if room <= 0:
            break
        if len(word) > room:
            kept.append(word[:room])
            used = ARGV_MATCHED
            break
        kept.append(word)
        used += len(word) + (1 if len(kept) > 1 else 0)
    total = sum(len(w) for w in cmd) + max(0, len(cmd) - 1)
    return kept, total - used, not read_whole


COMMAND_KEPT = 400  # characters of the scrubbed command kept in the row (G6's COMMAND_KEPT)


def command_text(cmdline: list[str]) -> str:
    """The row's command: the joined argv's first COMMAND_SCRUBBED characters, secrets scrubbed, then
    COMMAND_KEPT characters. A word cut at COMMAND_SCRUBBED is never shown (a secret cut short has
    no shape the scrubber knows): where it would show, it reads ``[redacted]``, which also tells G6
    the line was not kept whole (as a line of COMMAND_KEPT characters does)."""
    joined = " ".join(cmdline)
    if len(joined) <= COMMAND_SCRUBBED:
        return scrub_secrets(joined)[:COMMAND_KEPT]
    head, sep, _ = joined[:COMMAND_SCRUBBED].rpartition(" ")
    shown = scrub_secrets(head) if sep else ""
    if len(shown) < COMMAND_KEPT:
        shown = f"{shown} {REDACTED}" if shown else REDACTED
    return shown[:COMMAND_KEPT]


def _cap_after_cut(cap: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """A cap read from a cut argv: a flag past the cut would be missed (or, repeated, would win, as in
    argparse), so the cap is unreadable, saying what was seen."""
    if not base.get("argv_cut") and not base.get("argv_over"):
        return cap
    seen = f"{cap['source']}" if cap.get("state") == "set" else "no cap flag"
    more = "over 1 MiB" if base.get("argv_over") else f"{base['argv_cut']:,} more characters"
    return _cap("unreadable", None, f"command line cut for matching at {ARGV_MATCHED // 1024} KiB ({more}): "
                f"{seen} in what was read, a later flag would win", cap.get("detail", ""))


def parse_stat(text: str) -> tuple[str, int, int, int] | None:
    """(comm, ppid, flags, start ticks) of a /proc/<pid>/stat line; None when it is not one (fields
    missing, not numbers, or negative: no parent, flag word or start time is)."""
    try:
        comm = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        ppid, flags, ticks = int(fields[1]), int(fields[6]), int(fields[19])
    except (ValueError, IndexError):
        return None
    if min(ppid, flags, ticks) < 0:
        return None
    return comm, ppid, flags, ticks


def _read(path: str, limit: int, binary: bool = False) -> Any:
    try:
        with open(path, "rb") as f:
            data = f.read(limit)
    except OSError:  # gone (ENOENT/ESRCH) or hidden (hidepid): either way not listed
        return None
    return data if binary else data.decode("utf-8", "replace")


def _split_cmdline(raw: bytes) -> list[str]:
    """argv as psutil reads it: NUL-separated; a process that rewrote its title may use spaces."""
    text = raw.decode("utf-8", "surrogateescape")
    if not text:
        return []
    sep = "\x00" if text.endswith("\x00") else " "
    if text.endswith(sep):
        text = text[:-1]
    parts = text.split(sep)
    if sep == "\x00" and len(parts) == 1 and " " in parts[0]:
        parts = parts[0].split(" ")
    return parts


def _full_name(comm: str, cmd: list[str]) -> str:
    """The kernel keeps 15 characters of a name; like psutil, take the full one from argv."""
    if len(comm) >= 15 and cmd:
        exe = os.path.basename(cmd[0])
        if exe.startswith(comm):
            return exe
    return comm


def _boot_time(proc: str) -> float | None:
    """Boot time (unix seconds) from /proc/stat's btime; None when absent or no time (not a positive
    finite number): start times are then unknown, never computed from it."""
    text = _read(os.path.join(proc, "stat"), 1 << 20)
    for line in (text or "").splitlines():
        if line.startswith("btime "):
            try:
                v = float(line.split()[1])
            except (ValueError, IndexError):
                return None
            return v if math.isfinite(v) and v > 0 else None
    return None


_LISTER: ProcLister | None = None


def list_candidates(proc: str = "/proc") -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Phase 1: every process's pid, ppid, name and argv, with its kind if it is interesting.
    From /proc through a kept ProcLister; psutil where there is no /proc."""
    global _LISTER
    if _LISTER is None or _LISTER.proc != proc:
        _LISTER = ProcLister(proc)
    if _LISTER.usable():
        return _LISTER.list()
    return _psutil_candidates()


def _psutil_candidates() -> tuple[list[dict[str, Any]], dict[str, int]]:
    import psutil

    rows, skipped = [], {"vanished": 0, "denied": 0}
    me = os.getpid()
    for p in psutil.process_iter(["pid", "ppid", "name", "cmdline", "create_time"], ad_value=None):
        try:
            info = p.info
        except Exception:
            skipped["vanished"] += 1
            continue
        if info.get("pid") == me:
            continue
        cmd, cut, _ = cut_argv(list(info.get("cmdline") or []))
        kind, server, label = classify(info.get("name") or "", cmd)
        rows.append({"pid": info["pid"], "ppid": info.get("ppid"), "name": info.get("name") or "",
                     "cmdline": cmd, "kind": kind, "server": server, "label": label, "argv_cut": cut,
                     "argv_over": False, "started": info.get("create_time")})
    return rows, skipped


def describe(pid: int, base: dict[str, Any], now: float, skipped: dict[str, int]) -> dict[str, Any] | None:
    """Phase 2: details of one process; None when it vanished meanwhile."""
    import psutil

    try:
        p = psutil.Process(pid)
        with p.oneshot():
            try:
                user = p.username()
            except (psutil.AccessDenied, KeyError):
                user = None
            try:
                rss = int(p.memory_info().rss)
            except psutil.AccessDenied:
                rss = None
                skipped["denied"] += 1
            created = p.create_time()
            try:
                ct = p.cpu_times()  # from the stat line create_time read: no extra read
                cpu_s: float | None = float(ct.user + ct.system)
            except psutil.AccessDenied:
                cpu_s = None
            cmdline = base.get("cmdline")
            if not cmdline:
                cmdline, cut, _ = cut_argv(list(p.cmdline() or []))
                base = {**base, "argv_cut": cut}
        env, env_error = None, None
        if base.get("server"):
            try:
                env = p.environ()
            except psutil.AccessDenied:
                env_error = "permission denied"
            except psutil.NoSuchProcess:
                raise
            except Exception as e:  # some platforms raise OSError for kernel threads etc.
                env_error = f"{type(e).__name__}"
    except psutil.NoSuchProcess:  # includes ZombieProcess
        skipped["vanished"] += 1
        return None
    except psutil.AccessDenied:
        skipped["denied"] += 1
        return None
    row = {
        "pid": pid, "ppid": base.get("ppid"), "user": user, "kind": base.get("kind") or "gpu-process",
        "server": base.get("server"), "name": base.get("label") or base.get("name") or "",
        "process_name": base.get("name") or "", "command": command_text(cmdline),
        "gpu_mem_bytes": None, "rss_bytes": rss, "age_s": round(max(0.0, now - created), 1), "cap": None,
        "started": created,  # with the pid, the process's identity: a signal checks it
        "cpu_s": cpu_s,
    }
    if base.get("server"):
        cap = parse_cap(base["server"], list(cmdline), env, env_error)
        row["cap"] = _cap_after_cut(cap, base) if base["server"] in _CAP_FROM_ARGV else cap
        keys = SERVER_ENV.get(base["server"], ())
        row["env"] = ({k: env[k] for k in keys if k in env} if env is not None else "unreadable")
    return row


def _same_instance(row: dict[str, Any], anc: dict[str, Any]) -> bool:
    if row.get("server"):
        return anc.get("server") == row["server"]
    if row["kind"] == "training":
        return anc["kind"] == "training"
    if row["kind"] == "gpu-process":  # an unnamed worker of a server or a training launcher
        return anc["kind"] in ("training", "server")
    return False


def _group(rows: list[dict[str, Any]], ppids: dict[int, int | None]) -> None:
    """Give each row ``group``: the pid of its top-most ancestor in the same instance (a vLLM
    launcher and its VLLM::EngineCore, torchrun and its ranks), and let a server's workers inherit
    the cap their launcher was given."""
    by_pid = {r["pid"]: r for r in rows}
    for row in rows:
        top, pid, hops = row["pid"], row.get("ppid"), 0
        while pid and hops < 64:
            anc = by_pid.get(pid)
            if anc is not None and _same_instance(row, anc):
                top = pid
            pid, hops = ppids.get(pid), hops + 1
        row["group"] = top
    for row in rows:
        cap = row.get("cap")
        top = by_pid.get(row["group"])
        if top is None or top is row or not row.get("server") or not cap or cap["state"] not in ("default", "none"):
            continue
        if top.get("cap") and top["cap"]["state"] == "set":
            row["cap"] = dict(top["cap"], source=f"{top['cap']['source']} (launcher pid {top['pid']})")


def is_own_script(cmdline: list[str]) -> bool:
    """A sparktui probe script (``python .../sparktui/probes/target_script.py ...``), whichever
    sparktui started it."""
    tokens = [t for t in (cmdline or []) if t is not None]
    return len(tokens) > 1 and bool(_PY.match(_base(tokens[0]))) and bool(_OWN_SCRIPTS.search(tokens[1]))


def own_pids(cands: list[dict[str, Any]], root: int | None) -> set[int]:
    """sparktui's own processes: ``root`` (this process) and its descendants, and every process
    running a sparktui probe script, with theirs. A parent is followed up to 64 hops."""
    ppids = {c["pid"]: c.get("ppid") for c in cands}
    seeds = {c["pid"] for c in cands if is_own_script(c.get("cmdline") or [])}
    if root is not None:
        seeds.add(root)
    own = set()
    for pid in ppids:
        p, hops = pid, 0
        while p is not None and hops < 64:
            if p in seeds:
                own.add(pid)
                break
            p, hops = ppids.get(p), hops + 1
    return own | ({root} if root is not None else set())


def scan(session: NvmlSession | None, cfg: Config | None = None, *, markers: Iterable[str] = CONTAINER_MARKERS,
         clock=time.time, exclude_own: bool = True, everything: bool | None = None) -> dict[str, Any]:
    """The process view: servers, training jobs and NVML GPU processes. Never raises.

    ``exclude_own``: leave out this process and its descendants (sparktui's probes, ssh to peers).
    Tests whose own children stand in for the user's workloads pass False; any sparktui's probe
    scripts are left out either way. ``everything``: also describe every other process
    (``others``); None: as the dashboard asked (``want_all``)."""
    everything = _WANT_ALL if everything is None else everything
    now = clock()
    mono = time.monotonic()
    nv: dict[str, Any] = (nvml_processes(session) if session is not None
                          else {"ok": False, "error": "NVML not used", "pids": {}})
    try:
        cands, skipped = list_candidates()
    except Exception as e:  # psutil missing or /proc unreadable: a failure, never an empty list
        return {"nvml": _nvml_summary(nv), "container": detect_container(markers),
                "scan_error": f"process scan failed: {e!r}", "skipped": {"vanished": 0, "denied": 0}, "t": now}
    own = own_pids(cands, os.getpid() if exclude_own else None)
    cands = [c for c in cands if c["pid"] not in own]
    by_pid = {c["pid"]: c for c in cands}
    ppids = {c["pid"]: c.get("ppid") for c in cands}
    wanted = [c for c in cands if c["kind"]]
    for pid in nv["pids"]:
        if pid in own:
            continue
        if pid not in by_pid:  # NVML sees it, psutil does not (another PID namespace)
            wanted.append({"pid": pid, "ppid": None, "name": "", "cmdline": [], "kind": "gpu-process",
                           "server": None, "label": "(not visible to psutil)"})
        elif not by_pid[pid]["kind"]:
            wanted.append(by_pid[pid])
    listed = {c["pid"] for c in wanted}
    others = [c for c in cands if c["pid"] not in listed] if everything else []
    rows, other_rows = [], []
    util = nv.get("util") or {}
    for c in wanted + others:
        row: dict[str, Any] | None
        if c["label"] == "(not visible to psutil)":
            row = {"pid": c["pid"], "ppid": None, "user": None, "kind": "gpu-process", "server": None,
                   "name": c["label"], "process_name": "", "command": "", "gpu_mem_bytes": None,
                   "rss_bytes": None, "age_s": None, "cap": None}
        else:
            row = describe(c["pid"], c, now, skipped)
            if row is None:
                continue
            row["cpu_pct"] = _CPU.percent(c["pid"], row.get("started"), row.pop("cpu_s", None), mono)
            row["container"] = _CONTAINERS.of(c["pid"], row.get("started"))
        if c["pid"] in nv["pids"]:
            row["gpu_mem_bytes"] = nv["pids"][c["pid"]]
            row["on_gpu"] = True
            row["gpu_list"] = "compute" if c["pid"] in nv.get("compute", ()) else "graphics"
            row["gpu_util"] = util.get(c["pid"])
        if c["pid"] in listed:
            rows.append(row)
        else:
            row["kind"] = "other"
            other_rows.append(row)
    alive = set(by_pid) | set(nv["pids"])
    _CPU.forget_except(alive)
    _CONTAINERS.forget_except(alive)
    _group(rows, ppids)
    rows.sort(key=lambda r: (-(r.get("gpu_mem_bytes") or 0), r["pid"]))
    out = {"rows": rows, "nvml": _nvml_summary(nv), "container": detect_container(markers),
           "skipped": skipped, "own_excluded": len(own - {os.getpid()}), "scanned": len(cands), "t": round(now, 3),
           "mem_total_bytes": mem_total(), "all": everything, "gpu_util_error": nv.get("util_error")}
    if everything:
        out["others"] = other_rows
    return out


def _nvml_summary(nv: dict[str, Any]) -> dict[str, Any]:
    return {"ok": bool(nv.get("ok")), "error": nv.get("error"), "count": len(nv.get("pids") or {})}


def read(cfg: Config) -> Reading:
    """Probe "processes"."""
    started = time.time()
    session = NvmlSession()
    try:
        data = scan(session, cfg, everything=False)  # the checks judge the classified rows only
    finally:
        session.close()
    return Reading("processes", data, error=data.get("scan_error"), source="NVML process lists + psutil",
                   started_at=started, took_s=time.time() - started)


PROBES = (Probe(shapes.PROCESSES, read),)
