"""The memory guard (opt-in, ``[guard]``; docs/guard.md): acts before the unified pool wedges the host.

On a Spark the GPU allocates from the same pool as the host; when it runs dry the host can wedge with
no OOM kill and no panic (a power cycle is the fix). Users write their own watchdogs that stop
containers when MemAvailable falls under 8 or 16 GiB; this is one, with a dry run by default and an
audit log of every decision.

Two parts:

- ``decide`` (pure): given the recent readings ``(t, MemAvailable, PSI full avg10 or None)`` and the
  settings, the state: ``armed`` (watching; under the floor for less than ``hold_s``, or not
  confirmed by PSI), ``triggered``, ``cooling down`` (an action was taken less than ``cooldown_s``
  ago) or ``blind`` (MemAvailable cannot be read: nothing is decided). Where PSI is readable the
  pressure must be confirmed by ``full avg10 >= psi_full_avg10_min`` (MemAvailable low from page
  cache the kernel can drop is not a wedge); where it is not, the floor alone decides, and the
  decision says so (``basis``).
- ``act``: what the configured action does, or (a dry run, the default) would do: ``stop-container``
  (``docker stop NAME``), ``stop-unit`` (``systemctl stop UNIT``), ``term-kind`` (SIGTERM the
  processes G6 classifies as the target kind, ``server`` by default: the instance holding the most
  memory, launcher first then its workers; the next one only if, after the cooldown, memory is
  still short), ``pause-run`` (SIGSTOP the training run: the processes G6 classifies as training,
  their workers and descendants; ``kill -CONT PID ...`` resumes it). Every signal goes through
  ``flows.signals.target(pid, started=...)``: a pid now held by a process that started at another
  time is never signalled, and neither is sparktui, one of its children, or pid 1.

``Guard`` reads /proc/meminfo and /proc/pressure/memory (paths given, so tests use stand-ins), keeps
the readings of the last ``hold_s`` (bounded), decides, acts, and appends each decision that differs
from the last (and every trigger) to the audit log as one JSON line, ``AuditLog``: one ``write`` with
O_APPEND per line, rotated at ``AUDIT_MAX_BYTES`` (one older file kept). ``GuardThread`` runs it in a
thread of its own, one reading a second (a wait, not a busy loop): the dashboard's and
``sparktui guard``'s loop.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from sparktui.core.config import Config, GuardConfig, default_state_dir
from sparktui.core.inert import visible

GIB = 1 << 30
INTERVAL_S = 1.0  # one reading a second: two small /proc reads (tens of microseconds)
COMMAND_TIMEOUT_S = 60.0  # docker stop waits 10 s for the container before SIGKILL; systemctl stop its unit's
AUDIT_MAX_BYTES = 2 << 20  # the audit log is rotated at this size (to guard.jsonl.1; one older file kept)
MAX_LINE_BYTES = 16 << 10  # one audit line at most (long command lines are cut before)
MAX_READINGS = 4096  # readings kept, whatever hold_s and the interval are
MAX_GAP_S = 10.0  # readings further apart than this (a stalled loop, a suspend) start the hold again: no evidence between
HEARTBEAT_S = 60.0  # an unchanged "armed" decision is said again this often (the guard is alive)
COMMAND_SHOWN = 200  # characters of a process's command line in a decision

STATES = ("armed", "triggered", "cooling down", "blind")
KINDS = ("server", "training", "gpu-process")  # G6's kinds (probes/processes.py)
SERVERS = ("vllm", "sglang", "llamacpp", "ollama", "trtllm", "nim", "triton", "tgi")  # a server by name


# -- readings ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sample:
    """One reading: ``t`` (monotonic s), MemAvailable (bytes, None when unreadable), PSI memory
    ``full avg10`` (%, None when unreadable), and why a part could not be read."""

    t: float
    avail: int | None
    psi_full: float | None
    mem_why: str | None = None
    psi_why: str | None = None


def read_sample(t: float, meminfo: str = "/proc/meminfo", pressure: str = "/proc/pressure/memory") -> Sample:
    """MemAvailable and PSI ``full avg10`` now, with the readers G3 uses (probes/host.py). Never raises."""
    from sparktui.probes.host import read_meminfo_bytes, read_psi

    avail, mem_why = None, None
    try:
        mi = read_meminfo_bytes(meminfo)
        avail = mi.get("MemAvailable")
        if avail is None:
            mem_why = f"no MemAvailable in {meminfo}"
        elif mi.get("MemTotal") is not None and avail > mi["MemTotal"]:
            avail, mem_why = None, f"MemAvailable over MemTotal in {meminfo}: no reading"
    except OSError as e:
        mem_why = f"cannot read {meminfo}: {e.strerror or e}"
    psi, psi_why = read_psi(pressure)
    full = None
    if psi is not None:
        full = (psi.get("full") or {}).get("avg10")
        if full is None:
            psi_why = f"{pressure} has no 'full avg10' figure"
    return Sample(t, avail, full, mem_why, psi_why)


# -- the decision (pure) ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Decision:
    state: str  # one of STATES
    phase: str  # finer: above, holding, unconfirmed, triggered, cooling, blind (a change is written)
    reason: str  # one line, what was seen
    basis: str  # "floor and PSI" or "floor alone (PSI ...: why)"
    avail_bytes: int | None
    psi_full_avg10: float | None
    held_s: float  # how long MemAvailable has been under the floor (0: it is not)
    t: float

    def line(self) -> str:
        return f"guard {self.state}: {self.reason}"


def _gib(v: float | None) -> str:
    return "unreadable" if v is None else f"{v / GIB:.1f} GiB"


def decide(readings: Sequence[Sample], cfg: GuardConfig, last_action_t: float | None = None,
           max_gap_s: float = MAX_GAP_S) -> Decision:
    """The guard's state after ``readings`` (oldest first; the newest is now). ``last_action_t``: when
    the guard last triggered (the cooldown counts from it). The hold is an unbroken run of readings
    under the floor, none more than ``max_gap_s`` after the one before."""
    if not readings:
        return Decision("blind", "blind", "no reading yet", "none", None, None, 0.0, 0.0)
    now = readings[-1]
    floor = cfg.floor_gib * GIB
    if now.psi_full is not None:
        basis = "floor and PSI"
    else:
        basis = f"floor alone (PSI unreadable: {now.psi_why or 'no figure'})"
    if last_action_t is not None and now.t - last_action_t < cfg.cooldown_s:
        left = cfg.cooldown_s - (now.t - last_action_t)
        return Decision("cooling down", "cooling", f"acted {now.t - last_action_t:.0f} s ago; watching again in "
                        f"{left:.0f} s (MemAvailable {_gib(now.avail)})", basis, now.avail, now.psi_full, 0.0, now.t)
    if now.avail is None:
        return Decision("blind", "blind", f"MemAvailable unreadable ({now.mem_why or 'no figure'}): nothing decided",
                        basis, None, now.psi_full, 0.0, now.t)
    if now.avail >= floor:
        return Decision("armed", "above", f"MemAvailable {_gib(now.avail)} at or over the floor {cfg.floor_gib:g} GiB",
                        basis, now.avail, now.psi_full, 0.0, now.t)
    since = now.t  # the start of the unbroken run of readings under the floor that ends now
    for r in reversed(readings):
        if r.avail is None or r.avail >= floor or since - r.t > max_gap_s:
            break
        since = r.t
    held = now.t - since
    under = f"MemAvailable {_gib(now.avail)} under the floor {cfg.floor_gib:g} GiB for {held:.0f} s"
    if held < cfg.hold_s:
        return Decision("armed", "holding", f"{under} (acts after {cfg.hold_s:g} s)", basis, now.avail,
                        now.psi_full, held, now.t)
    if now.psi_full is not None and now.psi_full < cfg.psi_full_avg10_min:
        return Decision("armed", "unconfirmed", f"{under}, but PSI memory full avg10 {now.psi_full:g}% is under "
                        f"{cfg.psi_full_avg10_min:g}%: no stalls, not acting (memory the kernel can still reclaim)",
                        basis, now.avail, now.psi_full, held, now.t)
    psi = f", PSI memory full avg10 {now.psi_full:g}%" if now.psi_full is not None else ""
    return Decision("triggered", "triggered", f"{under}{psi}", basis, now.avail, now.psi_full, held, now.t)


# -- acting -----------------------------------------------------------------------------------------

@dataclass
class Outcome:
    """What the action did (or, a dry run, would have done)."""

    action: str
    dry_run: bool
    did: list[str] = field(default_factory=list)  # one line per thing done or that would be done
    errors: list[str] = field(default_factory=list)
    targets: list[dict[str, Any]] = field(default_factory=list)  # pid, started, command, held_bytes, result
    resume: str | None = None  # pause-run: the command that resumes the run

    def text(self) -> str:
        parts = self.did + [f"error: {e}" for e in self.errors]
        if self.resume:
            parts.append(f"resume with: {self.resume}")
        return "; ".join(parts) or "nothing done"


def target_problem(cfg: GuardConfig) -> str | None:
    """Why ``[guard] target`` cannot be used with ``[guard] action``, or None."""
    t = cfg.target
    if cfg.action in ("stop-container", "stop-unit"):
        what = "container" if cfg.action == "stop-container" else "systemd unit"
        if not t:
            return f"[guard] action = {cfg.action} needs [guard] target: the {what}'s name"
        if t.startswith("-") or any(c.isspace() or not c.isprintable() for c in t):
            return f"[guard] target {visible(t)}: not a {what} name"
    elif cfg.action == "term-kind" and t and t not in KINDS + SERVERS:
        return f"[guard] target {visible(t)}: term-kind needs a process kind ({', '.join(KINDS)}) or a server ({', '.join(SERVERS)})"
    return None


def _run(argv: list[str], timeout_s: float) -> tuple[int | None, str]:
    """(exit status or None on a timeout, its output's last line) of a command sparktui starts
    (tracked: it does not outlive sparktui)."""
    from sparktui.core import children

    proc = children.spawn(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        children.kill_group(proc)
        proc.communicate()
        children.reap(proc)
        return None, f"no answer in {timeout_s:g} s"
    children.reap(proc)
    lines = (out or b"").decode("utf-8", "replace").strip().splitlines()
    return proc.returncode, visible(lines[-1][:300]) if lines else ""


def _command(argv: list[str], what: str, dry_run: bool, out: Outcome, timeout_s: float = COMMAND_TIMEOUT_S) -> None:
    shown = " ".join(argv)
    if dry_run:
        out.did.append(f"dry run: would run {shown}")
        if shutil.which(argv[0]) is None:
            out.errors.append(f"{argv[0]} not found on PATH: acting, it could not stop {what}")
        return
    if shutil.which(argv[0]) is None:
        out.errors.append(f"{argv[0]} not found on PATH: {what} not stopped")
        return
    try:
        rc, last = _run(argv, timeout_s)
    except OSError as e:
        out.errors.append(f"{shown}: cannot run: {e.strerror or e}")
        return
    if rc == 0:
        out.did.append(f"ran {shown}")
    elif rc is None:
        out.errors.append(f"{shown}: {last}")
    else:
        out.errors.append(f"{shown} exited {rc}" + (f": {last}" if last else ""))


def _held(row: Mapping[str, Any]) -> int:
    return int(row.get("gpu_mem_bytes") or 0) + int(row.get("rss_bytes") or 0)


def _row_target(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"pid": row.get("pid"), "started": row.get("started"), "kind": row.get("kind"),
            "command": visible(str(row.get("command") or row.get("name") or ""))[:COMMAND_SHOWN],
            "held_bytes": _held(row)}


def _signal(rows: Iterable[Mapping[str, Any]], sig: signal.Signals, dry_run: bool, out: Outcome,
            own_pid: int | None = None) -> list[int]:
    """Send ``sig`` to each row's process, identity (pid and start time) checked first; the pids
    signalled (or, a dry run, that would be)."""
    from sparktui.flows import signals  # psutil: loaded when the guard first acts, not with the dashboard

    done: list[int] = []
    for row in rows:
        entry = _row_target(row)
        out.targets.append(entry)
        pid, started = row.get("pid"), row.get("started")
        if not isinstance(pid, int) or started is None:
            entry["result"] = "refused: start time unknown (a reused pid could not be told apart): not signalled"
            out.errors.append(f"pid {pid}: start time unknown: not signalled")
            continue
        try:
            t = signals.target(pid, own_pid=own_pid, started=started)
            if sig is signal.SIGSTOP and t.proc.status() == "stopped":
                entry["result"] = "already stopped"
                done.append(pid)
                continue
            if dry_run:
                entry["result"] = f"dry run: would send {sig.name}"
            else:
                signals.send(t, sig)
                entry["result"] = f"sent {sig.name}"
            done.append(pid)
        except signals.Refused as e:
            entry["result"] = f"refused: {e}"
            out.errors.append(str(e))
        except Exception as e:  # psutil's status() on a vanished process, etc.
            entry["result"] = f"refused: {type(e).__name__}: {e}"
            out.errors.append(f"pid {pid}: {type(e).__name__}: {e}")
    if done:
        verb = f"would send {sig.name} to" if dry_run else f"sent {sig.name} to"
        out.did.append(f"{'dry run: ' if dry_run else ''}{verb} pid {', '.join(map(str, done))}")
    return done


def instances(rows: Sequence[Mapping[str, Any]], kind: str) -> list[list[Mapping[str, Any]]]:
    """The rows of ``kind`` (a G6 kind or a server's name) as instances (a launcher and its workers,
    by the scan's ``group``), the one holding the most memory first; in each, the launcher first."""
    wanted = [r for r in rows if r.get("kind") == kind or (kind in SERVERS and r.get("server") == kind)]
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for r in wanted:
        groups.setdefault(r.get("group", r.get("pid")), []).append(r)
    out = [sorted(g, key=lambda r: (r.get("pid") != top, -_held(r), r.get("pid") or 0)) for top, g in groups.items()]
    return sorted(out, key=lambda g: (-sum(_held(r) for r in g), g[0].get("pid") or 0))


def run_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The training run's processes: G6's training rows, the rows in their groups (ranks NVML
    lists), and every descendant of them (ranks nothing classified), launchers first, each once."""
    import psutil

    train = [r for r in rows if r.get("kind") == "training"]
    tops = {r.get("group", r.get("pid")) for r in train} | {r.get("pid") for r in train}
    picked: dict[int, dict[str, Any]] = {}
    for r in sorted(rows, key=lambda r: (r.get("kind") != "training", r.get("pid") or 0)):
        if r.get("kind") == "training" or r.get("group") in tops:
            picked.setdefault(r["pid"], dict(r))
    for pid in list(picked):
        try:
            kids = psutil.Process(pid).children(recursive=True)
        except psutil.Error:
            continue
        for k in kids:
            try:
                with k.oneshot():
                    picked.setdefault(k.pid, {"pid": k.pid, "started": k.create_time(), "kind": "descendant",
                                              "command": " ".join(k.cmdline()) or k.name(),
                                              "rss_bytes": k.memory_info().rss})
            except psutil.Error:
                continue
    return list(picked.values())


def scan_processes(cfg: Config) -> dict[str, Any]:
    """A fresh process scan as the process table's (G6's kinds, NVML's per-process memory where read)."""
    from sparktui.probes.nvml import NvmlSession
    from sparktui.probes.processes import scan

    session = NvmlSession()
    try:
        return scan(session, cfg)
    finally:
        session.close()


def act(cfg: Config, dry_run: bool, *, scan: Callable[[Config], Mapping[str, Any]] = scan_processes,
        own_pid: int | None = None, timeout_s: float = COMMAND_TIMEOUT_S) -> Outcome:
    """Do (or, ``dry_run``, say what would be done for) ``[guard] action``. Never raises."""
    g = cfg.guard
    out = Outcome(g.action, dry_run)
    problem = target_problem(g)
    if problem:
        out.errors.append(problem)
        return out
    try:
        if g.action == "stop-container":
            _command(["docker", "stop", str(g.target)], f"container {g.target}", dry_run, out, timeout_s)
        elif g.action == "stop-unit":
            _command(["systemctl", "stop", str(g.target)], f"unit {g.target}", dry_run, out, timeout_s)
        else:
            data = scan(cfg)
            rows = data.get("rows")
            if rows is None:
                out.errors.append(f"no process list: {data.get('scan_error') or 'scan failed'}")
            elif g.action == "term-kind":
                kind = g.target or "server"
                found = instances(rows, kind)
                if not found:
                    out.did.append(f"no process of kind {kind} running: nothing to stop")
                else:
                    _signal(found[0], signal.SIGTERM, dry_run, out, own_pid)
                    if len(found) > 1:
                        out.did.append(f"{len(found) - 1} more {kind} instance(s) left running (the next after "
                                       f"the cooldown, if memory is still short)")
            else:  # pause-run
                run = run_rows(rows)
                if not run:
                    out.did.append("no training run found: nothing to pause")
                else:
                    paused = _signal(run, signal.SIGSTOP, dry_run, out, own_pid)
                    if paused and not dry_run:
                        out.resume = "kill -CONT " + " ".join(map(str, paused))
    except Exception as e:  # never the guard's end: said in the audit log
        out.errors.append(f"{g.action} failed: {type(e).__name__}: {e}")
    return out


# -- the audit log ----------------------------------------------------------------------------------

def audit_path(cfg: GuardConfig) -> Path:
    return Path(os.path.expanduser(cfg.audit_log)) if cfg.audit_log else default_state_dir() / "guard.jsonl"


_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)


class AuditLog:
    """JSON lines, appended: each line one ``os.write`` on an O_APPEND descriptor (two writers, the
    dashboard and `sparktui guard`, never interleave inside a line), rotated at ``max_bytes`` to
    ``NAME.1``. ``write`` returns why a line could not be written (None when it was), never raises."""

    def __init__(self, path: Path | str, max_bytes: int = AUDIT_MAX_BYTES) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()

    def _append(self, data: bytes) -> None:
        """One write of ``data`` under an flock of the file (writers in other processes take turns
        at the rotation); a file rotated by another writer meanwhile is left for the new one."""
        import fcntl

        for _ in range(8):
            fd = os.open(self.path, _FLAGS, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                st = os.fstat(fd)
                try:
                    current = os.stat(self.path)
                except FileNotFoundError:
                    continue  # rotated away between our open and our lock: open the new one
                if (current.st_dev, current.st_ino) != (st.st_dev, st.st_ino):
                    continue  # another writer rotated it meanwhile
                if st.st_size > 0 and st.st_size + len(data) > self.max_bytes:
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
                    continue  # the next turn opens (and creates) the new file
                os.write(fd, data)
                return
            finally:
                os.close(fd)  # releases the lock
        raise OSError("the log kept being rotated by another writer")

    def write(self, record: Mapping[str, Any]) -> str | None:
        data = (json.dumps(record, ensure_ascii=True, default=str, allow_nan=False) + "\n").encode()
        if len(data) > MAX_LINE_BYTES:
            data = (json.dumps({k: record.get(k) for k in ("t", "time", "event", "state", "reason")},
                               ensure_ascii=True, default=str)[:MAX_LINE_BYTES - 64] + "\n").encode()
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._append(data)
            except (OSError, ValueError) as e:
                return f"guard audit log {self.path} not written: {getattr(e, 'strerror', None) or e}"
        return None


# -- the loop ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One evaluation: the decision, the action's outcome when it triggered, whether it was written
    (a change, a trigger, a heartbeat), and the audit record."""

    decision: Decision
    outcome: Outcome | None
    said: bool
    record: dict[str, Any]
    audit_error: str | None = None

    def line(self) -> str:
        when = time.strftime("%H:%M:%S", time.localtime(self.record["t"]))
        text = f"{when} {self.decision.line()} [{self.decision.basis}]"
        if self.outcome is not None:
            text += f" -> {self.outcome.action}: {self.outcome.text()}"
        return visible(text)  # a stand-in file's name, a command line: shown inert


class Guard:
    """Reads, decides, acts and writes the audit log, one ``step`` at a time."""

    def __init__(self, cfg: Config, *, act_for_real: bool | None = None, meminfo: str = "/proc/meminfo",
                 pressure: str = "/proc/pressure/memory", audit: AuditLog | None = None,
                 scan: Callable[[Config], Mapping[str, Any]] = scan_processes, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time, own_pid: int | None = None) -> None:
        self.cfg = cfg
        self.dry_run = not (cfg.guard.act if act_for_real is None else act_for_real)
        self.meminfo, self.pressure = meminfo, pressure
        self.audit = audit or AuditLog(audit_path(cfg.guard))
        self.scan, self.clock, self.wall, self.own_pid = scan, clock, wall, own_pid
        self.readings: deque[Sample] = deque(maxlen=MAX_READINGS)
        self.last_action_t: float | None = None
        self._last_phase: str | None = None
        self._last_said = float("-inf")

    def problem(self) -> str | None:
        """Why the settings cannot work (said before watching), or None."""
        return target_problem(self.cfg.guard)

    def step(self, sample: Sample | None = None) -> Step:
        s = sample or read_sample(self.clock(), self.meminfo, self.pressure)
        self.readings.append(s)
        keep = self.cfg.guard.hold_s + 10 * INTERVAL_S  # what the hold can look back over
        while len(self.readings) > 1 and s.t - self.readings[0].t > keep:
            self.readings.popleft()
        d = decide(self.readings, self.cfg.guard, self.last_action_t)
        outcome = None
        if d.state == "triggered":
            self.last_action_t = s.t
            outcome = act(self.cfg, self.dry_run, scan=self.scan, own_pid=self.own_pid)
        said = (outcome is not None or d.phase != self._last_phase
                or s.t - self._last_said >= HEARTBEAT_S)
        self._last_phase = d.phase
        now = self.wall()
        record: dict[str, Any] = {
            "t": round(now, 3), "time": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now)),
            "event": "action" if outcome is not None else "decision", "state": d.state, "reason": d.reason,
            "basis": d.basis, "mem_available_bytes": d.avail_bytes, "psi_full_avg10": d.psi_full_avg10,
            "held_s": round(d.held_s, 1), "floor_gib": self.cfg.guard.floor_gib, "hold_s": self.cfg.guard.hold_s,
            "psi_full_avg10_min": self.cfg.guard.psi_full_avg10_min, "action": self.cfg.guard.action,
            "target": self.cfg.guard.target, "dry_run": self.dry_run, "pid": os.getpid(),
        }
        if outcome is not None:
            record.update({"did": outcome.did, "errors": outcome.errors, "targets": outcome.targets,
                           "resume": outcome.resume})
        err = None
        if said:
            self._last_said = s.t
            err = self.audit.write(record)
        return Step(d, outcome, said, record, err)


class GuardThread:
    """The guard in a thread of its own: one step every ``interval_s`` (a wait on an Event, so
    ``stop`` ends it at once). ``on_step(step)`` is called from that thread for each step that is
    said (a change, a trigger, a heartbeat)."""

    def __init__(self, guard: Guard, on_step: Callable[[Step], None], interval_s: float = INTERVAL_S) -> None:
        self.guard, self.on_step, self.interval_s = guard, on_step, interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name="sparktui-guard", daemon=True)
            self._thread.start()

    def run(self) -> None:
        while not self._stop.is_set():
            try:
                st = self.guard.step()
                if st.said:
                    self.on_step(st)
            except Exception:  # a bug in one step must not end the guard; the next step tries again
                pass
            self._stop.wait(self.interval_s)

    def stop(self, wait_s: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(wait_s)


def summary(cfg: GuardConfig, dry_run: bool) -> str:
    """One line: what the guard watches for and what it would do."""
    what = {"stop-container": f"docker stop {cfg.target}", "stop-unit": f"systemctl stop {cfg.target}",
            "term-kind": f"SIGTERM the largest {cfg.target or 'server'} instance", "pause-run": "SIGSTOP the training run"}
    return (f"guard: MemAvailable under {cfg.floor_gib:g} GiB for {cfg.hold_s:g} s (confirmed by PSI memory full "
            f"avg10 >= {cfg.psi_full_avg10_min:g}% where readable) -> {what[cfg.action]}"
            f"{' (dry run: nothing is done)' if dry_run else ''}; cooldown {cfg.cooldown_s:g} s")


__all__ = ["Decision", "Sample", "Outcome", "AuditLog", "Guard", "GuardThread", "Step", "decide", "act", "read_sample",
           "instances", "run_rows", "audit_path", "summary", "target_problem"]
