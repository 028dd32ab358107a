"""The target-interpreter probe: torch-side facts from the interpreter the training uses.

sparktui never imports torch itself (that would create a CUDA context in the watcher, taking
memory from the run on unified memory). It runs ``target_script.py`` under the *training*
interpreter as a short-lived subprocess, which also lets it observe a crash instead of suffering
it: an undefined-symbol ImportError, a SIGSEGV, a hang past the timeout are all recorded as data.

The first ``.cuda()`` (G1's smoke test) creates a CUDA context, which takes memory from the one
pool. It is not run when MemAvailable is under G3's floor (``memory.available_floor_gib``): decided
from /proc/meminfo before the interpreter starts, and said in ``cuda_smoke`` (``gated``, the figure
and the floor) rather than taking a context's memory from a run near the edge.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Iterable

from sparktui.core import shapes
from sparktui.core import children
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.shapes import CudaSmoke
from sparktui.probes.declared import Probe
from sparktui.probes.host import MEMINFO as _PROC_MEMINFO
from sparktui.probes.host import read_meminfo_bytes

SCRIPT = Path(__file__).with_name("target_script.py")
MEMINFO = _PROC_MEMINFO  # read for the smoke test's gate (a test points it at a stand-in)
GIB = 1 << 30

# Distributions whose versions G9 compares and G2 needs (pins add their own names).
TRAINING_STACK = (
    "torch", "torchvision", "torchaudio", "triton", "transformers", "accelerate", "peft", "trl",
    "datasets", "tokenizers", "safetensors", "bitsandbytes", "flash-attn", "flash_attn", "xformers",
    "unsloth", "unsloth_zoo", "deepspeed", "vllm", "numpy", "nvidia-cuda-runtime-cu12",
    "nvidia-cuda-runtime-cu13", "nvidia-cuda-runtime", "nvidia-nccl-cu12", "nvidia-nccl-cu13",
    "transformer-engine", "apex", "torchao", "megatron-core", "nemo-toolkit", "torchtitan", "liger-kernel",
    "axolotl", "lightning", "pytorch-lightning",
)

ENV_STAGES = ("python", "packages", "cudart")
TORCH_STAGES = ("import torch", "torch.cuda", "import flash_attn", "first .cuda()")
STDERR_TAIL = 4000


def choose_interpreter(cfg: Config, environ: dict[str, str] | None = None) -> tuple[str, str]:
    """(path, why): --python/config first, then the active venv/conda env, else this interpreter."""
    env = os.environ if environ is None else environ
    if cfg.target.python:
        p = cfg.target.python
        resolved = shutil.which(p) if os.sep not in p else p
        return (resolved or p), "configured (--python or [target] python)"
    for var, label in (("VIRTUAL_ENV", "active virtualenv ($VIRTUAL_ENV)"), ("CONDA_PREFIX", "active conda env ($CONDA_PREFIX)")):
        root = env.get(var)
        if root:
            for name in ("bin/python", "bin/python3"):
                cand = os.path.join(root, name)
                if os.path.exists(cand):
                    return cand, label
    return sys.executable, "sparktui's own interpreter (no --python and no active env)"


def signal_name(returncode: int) -> str | None:
    if returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


@dataclass
class ScriptRun:
    """What one run of the target script left behind."""

    events: list[dict] = field(default_factory=list)
    returncode: int | None = None
    timed_out: bool = False
    stderr_tail: str = ""
    stdout_tail: str = ""
    seconds: float = 0.0
    launch_error: str | None = None
    cancelled: bool = False

    @property
    def finished(self) -> bool:
        return any(e.get("event") == "end" for e in self.events)

    def last_begun(self) -> str | None:
        closed = {e["stage"] for e in self.events if e.get("event") in ("done", "error", "skipped")}
        for e in reversed(self.events):
            if e.get("event") == "begin" and e["stage"] not in closed:
                return e["stage"]
        return None


def launch_failure(python: str, e: OSError) -> str:
    """Why the interpreter did not start, in words that point at the fix: a training environment
    removed mid-run (its path gone, or a venv whose base Python was removed: a dangling link) is
    'interpreter gone', not a bare errno."""
    if isinstance(e, FileNotFoundError):
        if not os.path.lexists(python):
            return "interpreter gone: no such file (the environment was removed or moved?)"
        if os.path.islink(python) and not os.path.exists(python):
            return f"interpreter gone: it links to {os.path.realpath(python)}, which does not exist"
    return e.strerror or str(e)


def run_script(python: str, mode: str, timeout_s: float, skip: Collection[str] = frozenset(), packages=(),
               cancel: threading.Event | None = None) -> ScriptRun:
    """Run target_script.py under ``python`` in one mode. The package names go in a temporary file,
    not on the command line: a pins file of 500k names overflowed the argument list (E2BIG)."""
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", prefix="sparktui-packages-", suffix=".txt") as names:
        names.write("\n".join(packages))
        names.flush()
        return run_staged(python, SCRIPT, ["--mode", mode, "--skip", ",".join(sorted(skip)), "--packages-file", names.name],
                          timeout_s, cancel)


def run_staged(python: str, script: Path, args: list[str], timeout_s: float,
               cancel: threading.Event | None = None) -> ScriptRun:
    """Run a staged-events script under ``python`` (events on the fd passed as ``--fd``).

    Kills the whole process group on timeout, when ``cancel`` is set, and on any exception out of
    the wait (Ctrl-C included), so a hung child leaves nothing behind. stdout/stderr go to
    temporary files (no pipe to fill and block on).
    """
    run = ScriptRun()
    rfd, wfd = os.pipe()
    cmd = [python, str(script), "--fd", str(wfd), *args]
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = children.spawn(cmd, pass_fds=(wfd,), stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env)
        except OSError as e:
            os.close(rfd)
            os.close(wfd)
            run.launch_error = f"cannot start {python}: {launch_failure(python, e)}"
            return run
        try:
            os.close(wfd)
            lines: list[str] = []

            def pump() -> None:
                with os.fdopen(rfd, "r", encoding="utf-8", errors="replace") as f:
                    read_channel(f, lines)

            reader = threading.Thread(target=pump, daemon=True)
            reader.start()
            deadline = time.monotonic() + timeout_s
            while True:
                try:
                    proc.wait(timeout=0.1)
                    break
                except subprocess.TimeoutExpired:
                    if cancel is not None and cancel.is_set():
                        run.cancelled = True
                    elif time.monotonic() >= deadline:
                        run.timed_out = True
                    else:
                        continue
                    break
        finally:
            # The child has its own session, so a terminal's Ctrl-C never reaches it: whatever ends
            # this wait (cancel, timeout, KeyboardInterrupt, any exception, or its own exit, which
            # can leave grandchildren such as compile workers) kills its group.
            children.reap(proc)
        reader.join(timeout=5)
        run.seconds = time.perf_counter() - t0
        run.returncode = proc.returncode
        run.stderr_tail = _tail(err)
        run.stdout_tail = _tail(out)
    run.events = parse_events(lines)
    return run


MAX_EVENT_LINE = 4 << 20  # characters of one event line (the package list, the longest, is some KB)
MAX_CHANNEL = 16 << 20  # characters of event lines kept from one run; the rest is read and dropped
MAX_EVENTS = 1000  # a run reports about 20
MAX_DEPTH = 32  # nesting of an event's data (the script's deepest is 4)
EVENT_KINDS = frozenset({"begin", "done", "error", "skipped", "end"})


def read_channel(f: Any, lines: list[str]) -> None:
    """Lines of a staged script's event channel into ``lines``, bounded: a line longer than
    MAX_EVENT_LINE is skipped whole, and past MAX_CHANNEL characters lines are read and dropped, so
    a flood neither fills memory nor blocks the script on a full pipe."""
    kept = 0
    while line := f.readline(MAX_EVENT_LINE + 1):
        if len(line) > MAX_EVENT_LINE:
            while line and not line.endswith("\n"):
                line = f.readline(MAX_EVENT_LINE + 1)
            continue
        if kept + len(line) <= MAX_CHANNEL:
            kept += len(line)
            lines.append(line)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _shallow(x: Any) -> bool:
    """True when ``x`` nests at most MAX_DEPTH lists/objects deep (looked at without recursion)."""
    level: list[Any] = [x]
    for _ in range(MAX_DEPTH + 1):
        level = [v for c in level if isinstance(c, (dict, list)) for v in (c.values() if isinstance(c, dict) else c)]
        if not level:
            return True
    return False


def parse_events(lines: Iterable[str]) -> list[dict[str, Any]]:
    """The events among the lines a staged script wrote: JSON objects whose ``event`` is one of
    EVENT_KINDS and whose ``stage`` is a string. Anything else is skipped, never raised: a torn last
    line from a killed process, NaN or Infinity (no JSON: a snapshot could not carry them), nesting
    too deep, a record of another shape. At most MAX_EVENTS are kept."""
    out: list[dict[str, Any]] = []
    for line in lines:
        if len(out) >= MAX_EVENTS:
            break
        try:
            rec = json.loads(line, parse_constant=_not_json)
        except (ValueError, RecursionError):
            continue
        if (isinstance(rec, dict) and isinstance(rec.get("event"), str) and rec["event"] in EVENT_KINDS
                and isinstance(rec.get("stage"), str) and _shallow(rec)):
            out.append(rec)
    return out


def _tail(f) -> str:
    f.seek(0, os.SEEK_END)
    size = f.tell()
    f.seek(max(0, size - STDERR_TAIL))
    return f.read().decode("utf-8", "replace")


def _crash_of(run: ScriptRun, mode: str, timeout_s: float) -> dict | None:
    if run.finished and run.returncode == 0:
        return None
    stage = run.last_begun()
    crash: dict[str, Any] = {"mode": mode, "stage": stage, "returncode": run.returncode, "stderr_tail": run.stderr_tail[-1500:]}
    if run.cancelled:
        crash.update(kind="cancelled")
    elif run.timed_out:
        crash.update(kind="hung", seconds=round(timeout_s, 1))
    elif run.returncode is not None and run.returncode < 0:
        crash.update(kind="signal", signal=signal_name(run.returncode))
    elif not any(e.get("event") == "begin" for e in run.events):
        crash.update(kind="no-output")  # not a Python our script runs on, or it printed garbage
    else:
        crash.update(kind="exit")
    return crash


def _run_mode(python: str, mode: str, stages: tuple[str, ...], timeout_s: float, skip: set[str], packages,
              cancel: threading.Event | None = None) -> tuple[dict, list[dict]]:
    """Run one mode; after a crash in a stage, rerun once without it to learn the rest."""
    stage_info: dict[str, dict] = {}
    crashes: list[dict] = []
    data: dict[str, object] = {}
    skip = set(skip)
    deadline = time.monotonic() + timeout_s
    for attempt in range(2):
        remaining = max(1.0, deadline - time.monotonic()) if attempt else timeout_s
        run = run_script(python, mode, remaining, skip, packages, cancel)
        if run.launch_error:
            return {"launch_error": run.launch_error}, crashes
        for e in run.events:
            st = e["stage"]
            if e["event"] == "done":
                stage_info[st] = {"status": "done", "seconds": e.get("seconds"), "warnings": e.get("warnings", [])}
                data[st] = e.get("data")
            elif e["event"] == "error":
                stage_info[st] = {"status": "error", "seconds": e.get("seconds"), "error_type": e.get("error_type"),
                                  "error": e.get("error")}
            elif e["event"] == "skipped" and st not in stage_info:
                stage_info[st] = {"status": "skipped"}
        crash = _crash_of(run, mode, remaining)
        if crash is None:
            break
        crashes.append(crash)
        st = crash["stage"]
        status = {"hung": "hung", "cancelled": "cancelled"}.get(crash["kind"], "crashed")
        if st:
            stage_info[st] = {"status": status, "error": _describe_crash(crash), "signal": crash.get("signal")}
        else:  # it never reached its first stage (an interpreter that hangs or dies at start-up):
            why = f"the interpreter never started its stages: {_describe_crash(crash)}"
            for later in stages:  # none of this run's stages was attempted, and each says why
                stage_info.setdefault(later, {"status": "not reached", "error": why, "signal": crash.get("signal")})
        if crash["kind"] != "signal" or not st or st == stages[-1]:
            break  # a hang already spent the budget; nothing after the last stage to learn
        skip.add(st)
    for st in stages:
        stage_info.setdefault(st, {"status": "not reached"})
    return {"stages": stage_info, "data": data}, crashes


def _describe_crash(crash: dict) -> str:
    stage = crash.get("stage") or "start-up"
    if crash["kind"] == "signal":
        return f"process died by {crash.get('signal')} during '{stage}'"
    if crash["kind"] == "hung":
        return f"no answer after {crash.get('seconds')} s during '{stage}'; killed"
    if crash["kind"] == "cancelled":
        return f"cancelled by the user during '{stage}'"
    if crash["kind"] == "no-output":
        return f"exited with code {crash.get('returncode')} before reporting anything"
    return f"exited with code {crash.get('returncode')} during '{stage}'"


def probe_interpreter(python: str, timeout_s: float, cuda_smoke: bool = True, packages=TRAINING_STACK,
                      cancel: threading.Event | None = None) -> dict:
    """Both modes in parallel; returns the plain dict stored in the Reading."""
    results: dict[str, tuple[dict, list[dict]]] = {}
    torch_skip = set() if cuda_smoke else {"first .cuda()"}

    def go(mode: str, stages, skip) -> None:
        results[mode] = _run_mode(python, mode, stages, timeout_s, skip, packages, cancel)

    threads = [threading.Thread(target=go, args=("env", ENV_STAGES, set())),
               threading.Thread(target=go, args=("torch", TORCH_STAGES, torch_skip))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out: dict = {"stages": {}, "crashes": []}
    for mode in ("env", "torch"):
        res, crashes = results[mode]
        if "launch_error" in res:
            return {"launch_error": res["launch_error"]}
        out["stages"].update(res["stages"])
        out["crashes"].extend(crashes)
        d = res["data"]
        if mode == "env":
            out["python"] = d.get("python")
            out.update(_packages_of(d.get("packages"), out["stages"].get("packages")))
            out["cudart"] = d.get("cudart")
        else:
            out["torch"] = d.get("import torch")
            out["torch_cuda"] = d.get("torch.cuda")
            out["flash_attn"] = d.get("import flash_attn")
            out["cuda_smoke"] = d.get("first .cuda()")
    return out


def _packages_of(data: object, stage: dict | None) -> dict:
    """The reading's package fields: ``packages`` (name -> version, None = not installed) and
    ``packages_unread`` (name -> why its read failed); when the stage gave no list, ``packages``
    is None and ``packages_error`` says why. A failed read is never an empty list."""
    if isinstance(data, dict) and isinstance(data.get("versions"), dict):
        unread = data.get("unread") if isinstance(data.get("unread"), dict) else {}
        return {"packages": data["versions"], "packages_unread": unread}
    st = stage or {}
    status = st.get("status") or "not reported"
    if status == "done":
        why = "the packages stage reported no list of versions"
    else:
        err = st.get("error")
        etype = st.get("error_type")
        why = f"packages stage {status}" + (f": {etype + ': ' if etype else ''}{err}" if err else "")
    return {"packages": None, "packages_error": why}


def smoke_gate(cfg: Config, path: str | None = None) -> CudaSmoke | None:
    """None: the first .cuda() may run. Else why it does not: MemAvailable under G3's floor
    (``memory.available_floor_gib``), with the figure. An unreadable meminfo decides nothing (the
    test runs, as it always has); a smoke test turned off needs no gate."""
    if not cfg.target.cuda_smoke:
        return None
    try:
        avail = read_meminfo_bytes(path or MEMINFO).get("MemAvailable")
    except (OSError, ValueError):
        return None
    floor = float(cfg.memory.available_floor_gib)
    if not isinstance(avail, int) or avail < 0 or avail >= floor * GIB:
        return None
    return {"ran": False, "gated": True, "mem_available_bytes": avail, "floor_gib": floor,
            "reason": (f"MemAvailable {avail / GIB:.1f} GiB is under G3's floor of {floor:g} GiB "
                       "(memory.available_floor_gib): a CUDA context would take memory from a run near the edge")}


def read(cfg: Config, cancel: threading.Event | None = None) -> Reading:
    python, why = choose_interpreter(cfg)
    started = time.time()
    t0 = time.perf_counter()
    from sparktui.probes import pins as pins_probe

    names = list(dict.fromkeys(list(TRAINING_STACK) + pins_probe.pinned_names(cfg)))
    gate = smoke_gate(cfg)  # decided before the interpreter starts
    data = probe_interpreter(python, cfg.target.timeout_s, cfg.target.cuda_smoke and gate is None, names, cancel)
    if cancel is not None and cancel.is_set():
        return Reading("target", None, error="cancelled by the user", source=f"{python} (subprocess)",
                       started_at=started, took_s=time.perf_counter() - t0)
    took = time.perf_counter() - t0
    source = f"{python} (subprocess)"
    if "launch_error" in data:
        return Reading("target", None, error=data["launch_error"], source=source, started_at=started, took_s=took)
    data["interpreter"] = python
    data["selected_by"] = why
    if gate is not None:
        data["cuda_smoke"] = gate
    return Reading("target", data, source=source, started_at=started, took_s=took)


PROBES = (Probe(shapes.TARGET, read, cancellable=True),)
