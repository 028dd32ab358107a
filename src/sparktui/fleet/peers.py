"""Peers over SSH: run ``sparktui snapshot -o -`` on another machine and judge it here.

Why a snapshot and not the peer's ``check --json``: a snapshot carries the raw readings (driver,
CUDA, torch, NCCL, package versions, container facts), which the comparison needs and verdicts
do not hold; and judging every machine's readings with *this* sparktui's judges means every
column was decided by the same rules, even when the peer runs an older sparktui.

The system's ``ssh`` is used as is: the user's keys, agent, ``~/.ssh/config`` (or ``-F FILE``)
and known_hosts. sparktui only adds ``BatchMode=yes`` (never a password or passphrase prompt),
``ConnectTimeout`` and a total timeout after which the whole process group is killed. Output is
bounded. Every way this can go wrong ends as a ``PeerResult`` whose ``reason`` says it in words;
nothing here raises into the caller, so the local view carries on.
"""

from __future__ import annotations

import enum
import json
import os
import re
import selectors
import shutil
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

from sparktui.core import children
from sparktui.core.config import Config
from sparktui.core.readings import SNAPSHOT_SCHEMA, Reading, Readings
from sparktui.core.verdict import Verdict

if TYPE_CHECKING:
    from sparktui.fleet.compare import Machine

SNAPSHOT_ARGS = "snapshot -o -"
MAX_OUTPUT_BYTES = 16 * 1024 * 1024  # a snapshot is tens of KB; this only stops a runaway command
STDERR_KEEP = 8 * 1024


class PeerState(str, enum.Enum):
    OK = "ok"
    UNREACHABLE = "unreachable"  # no SSH connection (name, route, refused, timed out)
    REFUSED = "refused"  # connected, but login or host-key check failed
    NO_SPARKTUI = "no-sparktui"  # logged in; the peer command is missing (exit 127/126)
    FAILED = "failed"  # the peer command ran and failed, or ssh could not start
    BAD_OUTPUT = "bad-output"  # it answered, but not with a usable snapshot
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class PeerSpec:
    """How to reach one peer. ``host`` is whatever ssh accepts: host, user@host, an alias."""

    host: str
    command: str = "sparktui"
    ssh_config: str | None = None
    connect_timeout_s: float = 10.0
    timeout_s: float = 180.0
    max_bytes: int = MAX_OUTPUT_BYTES

    @classmethod
    def from_config(cls, host: str, cfg: Config) -> "PeerSpec":
        f = cfg.fleet
        return cls(host=host, command=f.peer_command, ssh_config=f.ssh_config,
                   connect_timeout_s=f.connect_timeout_s, timeout_s=f.peer_timeout_s)

    def remote_command(self) -> str:
        """The shell command run on the peer. A command that already names ``snapshot`` is
        taken as complete (it must print the snapshot on stdout); otherwise the snapshot
        arguments are appended."""
        cmd = self.command.strip() or "sparktui"
        return cmd if " snapshot" in f" {cmd}" else f"{cmd} {SNAPSHOT_ARGS}"

    def argv(self, ssh: str = "ssh") -> list[str]:
        args = [ssh, "-T", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={max(1, int(round(self.connect_timeout_s)))}"]
        if self.ssh_config:
            args += ["-F", os.path.expanduser(self.ssh_config)]
        return args + ["--", self.host, self.remote_command()]


def specs_from_config(cfg: Config, hosts: Iterable[str] | None = None) -> list[PeerSpec]:
    """PeerSpecs for ``hosts`` (default: ``[fleet] peers``), duplicates dropped, order kept."""
    chosen = list(hosts) if hosts is not None else list(cfg.fleet.peers)
    return [PeerSpec.from_config(h, cfg) for h in dict.fromkeys(h.strip() for h in chosen if h.strip())]


def validate_host(host: str) -> str | None:
    """Why ``host`` cannot be a peer, or None. (A leading '-' would be read by ssh as an option.)"""
    if not host.strip():
        return "empty peer name"
    if host.strip().startswith("-"):
        return f"peer {host!r} starts with '-': give a host name, user@host or an ssh config alias"
    h = host.strip()
    if any(c.isspace() for c in h):
        return f"peer {host!r} contains white space"
    user, _, name = h.rpartition("@")
    if "@" in h and (not user or not name):
        return f"peer {host!r}: give user@host with both parts"
    if not re.fullmatch(r"[A-Za-z0-9._%+-]+", name) and not re.fullmatch(r"\[?[0-9A-Fa-f:.]+\]?", name):
        return (f"peer {host!r}: not a host name or address (a port goes in ~/.ssh/config as `Port`, "
                "or an alias there)")
    if user and not re.fullmatch(r"[A-Za-z0-9._-]+", user):
        return f"peer {host!r}: user name {user!r} is not one ssh would take"
    return None


@dataclass
class PeerResult:
    """What one peer answered, or why it did not. ``verdicts`` were judged here."""

    spec: PeerSpec
    state: PeerState
    reason: str | None = None  # in words; None when state is OK
    readings: Readings | None = None
    host_facts: dict[str, Any] = field(default_factory=dict)
    sparktui_version: str | None = None
    taken_at: float | None = None
    verdicts: list[Verdict] = field(default_factory=list)
    returncode: int | None = None
    stderr_tail: str = ""
    took_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    fetched_at: float = field(default_factory=time.time)

    @property
    def host(self) -> str:
        return self.spec.host

    @property
    def ok(self) -> bool:
        return self.state is PeerState.OK

    @property
    def label(self) -> str:
        """The peer as the user named it, plus its own hostname when that differs."""
        name = self.host_facts.get("hostname")
        return self.host if not name or name == self.host.split("@")[-1] else f"{self.host} ({name})"

    def machine(self) -> "Machine":
        """This peer as a column of the comparison (readings None when it could not be read)."""
        from sparktui.fleet.compare import Machine

        reason = None if self.ok else (self.reason if self.state is PeerState.UNREACHABLE else f"{self.state.value}: {self.reason}")
        return Machine(self.label, self.readings if self.ok else None, reason, self.sparktui_version, tuple(self.verdicts))

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host, "state": self.state.value, "reason": self.reason, "label": self.label,
            "remote_command": self.spec.remote_command(), "host_facts": self.host_facts,
            "sparktui_version": self.sparktui_version, "taken_at": self.taken_at,
            "returncode": self.returncode, "took_s": round(self.took_s, 3), "notes": self.notes,
            "checks": [v.to_dict() for v in self.verdicts],
        }


# -- running ssh ---------------------------------------------------------------------------------

@dataclass
class RawRun:
    returncode: int | None = None
    stdout: bytes = b""
    stderr: str = ""
    timed_out: bool = False
    overflow: bool = False
    cancelled: bool = False
    launch_error: str | None = None
    seconds: float = 0.0


def run_bounded(argv: list[str], timeout_s: float, max_bytes: int = MAX_OUTPUT_BYTES,
                cancel: threading.Event | None = None, env: dict[str, str] | None = None) -> RawRun:
    """Run ``argv`` in its own process group; stop it (the whole group) on timeout, on more than
    ``max_bytes`` of stdout, or when ``cancel`` is set. Keeps the tail of stderr."""
    run = RawRun()
    t0 = time.monotonic()
    try:
        proc = children.spawn(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    except OSError as e:
        run.launch_error = f"cannot run {argv[0]}: {e.strerror or e}"
        return run
    out = bytearray()
    err = bytearray()
    streams = (proc.stdout, proc.stderr)  # both PIPE: never None
    sel = selectors.DefaultSelector()
    for stream, tag in zip(streams, ("out", "err")):
        if stream is not None:
            sel.register(stream, selectors.EVENT_READ, tag)
    open_streams = len(sel.get_map())
    deadline = t0 + timeout_s
    try:
        while open_streams:
            if cancel is not None and cancel.is_set():
                run.cancelled = True
                break
            left = deadline - time.monotonic()
            if left <= 0:
                run.timed_out = True
                break
            for key, _ in sel.select(timeout=min(left, 0.25)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_streams -= 1
                elif key.data == "out":
                    out += chunk
                else:
                    err += chunk
                    if len(err) > 4 * STDERR_KEEP:
                        del err[:-STDERR_KEEP]
            if len(out) > max_bytes:
                run.overflow = True
                break
        if not open_streams:  # both streams closed: give it until the deadline to exit
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                run.timed_out = True
    finally:
        # stopped early, or ended: kill everything the command started (ssh's ProxyCommand too)
        run.returncode = children.reap(proc)
        sel.close()
        for s in streams:
            try:
                if s is not None:
                    s.close()
            except OSError:
                pass
    run.stdout = bytes(out[: max_bytes + 1])
    run.stderr = err[-STDERR_KEEP:].decode("utf-8", "replace")
    run.seconds = time.monotonic() - t0
    return run


# -- reading what came back ----------------------------------------------------------------------

class PeerOutputError(ValueError):
    """The peer's stdout is not a usable snapshot; the message says why."""


def _preview(text: str, n: int = 120) -> str:
    t = text.strip().replace("\n", "⏎")
    return repr(t[:n] + ("…" if len(t) > n else ""))


def parse_snapshot_output(raw: bytes) -> tuple[Readings, dict[str, Any], dict[str, Any], list[str]]:
    """(readings, host facts, document, notes) from a peer's stdout. Text a shell profile printed
    before the snapshot (a banner, a "welcome" echo) is skipped and noted."""
    notes: list[str] = []
    text = raw.decode("utf-8", "replace")
    if not text.strip():
        raise PeerOutputError("the peer printed nothing (expected a sparktui snapshot on stdout)")
    start = len(text) - len(text.lstrip())
    if not text.startswith("{", start):
        nl = text.find("\n{")
        if nl < 0:
            raise PeerOutputError(f"not a sparktui snapshot: no JSON object in the output; it starts with {_preview(text)}")
        notes.append(f"skipped {nl + 1} bytes printed before the snapshot (a login banner or shell profile output?)")
        start = nl + 1
    try:
        doc, end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as e:
        raise PeerOutputError(f"not a sparktui snapshot: not JSON (line {e.lineno}, column {e.colno}: {e.msg}); "
                              f"it starts with {_preview(text[start:])}") from None
    if text[end:].strip():
        notes.append(f"ignored {len(text[end:].strip())} bytes printed after the snapshot")
    if not isinstance(doc, dict) or doc.get("kind") != "sparktui-snapshot":
        raise PeerOutputError("not a sparktui snapshot: JSON without \"kind\": \"sparktui-snapshot\" "
                              f"(it starts with {_preview(text[start:])})")
    if doc.get("schema") != SNAPSHOT_SCHEMA:
        raise PeerOutputError(f"the peer's sparktui ({doc.get('sparktui_version') or 'unknown version'}) writes snapshot "
                              f"schema {doc.get('schema')!r}; this sparktui reads schema {SNAPSHOT_SCHEMA}: "
                              "install the same sparktui on both machines")
    raw_readings = doc.get("readings")
    if not isinstance(raw_readings, dict):
        raise PeerOutputError("not a sparktui snapshot: \"readings\" is not an object")
    readings = Readings()
    for name, value in raw_readings.items():
        try:
            readings.add(Reading.from_dict(value))
        except (KeyError, TypeError, ValueError, AttributeError):
            notes.append(f"reading {name!r} is malformed; left out")
    host = doc.get("host")
    return readings, host if isinstance(host, dict) else {}, doc, notes


# (stderr fragment, state, reason template); first match in this order wins.
_SSH_ERRORS: tuple[tuple[str, PeerState, str], ...] = (
    ("Could not resolve hostname", PeerState.UNREACHABLE, "cannot resolve the host name ({line})"),
    ("Connection refused", PeerState.UNREACHABLE, "connection refused: nothing listens for SSH there ({line})"),
    ("timed out", PeerState.UNREACHABLE, "connection timed out after {connect} s ({line})"),
    ("No route to host", PeerState.UNREACHABLE, "no route to host ({line})"),
    ("Network is unreachable", PeerState.UNREACHABLE, "network unreachable ({line})"),
    ("Host key verification failed", PeerState.REFUSED,
     "the peer's host key is not in known_hosts, or it changed: run `ssh {host}` once to check and accept it"),
    ("REMOTE HOST IDENTIFICATION HAS CHANGED", PeerState.REFUSED,
     "the peer's host key changed since it was accepted: check why, then fix known_hosts"),
    ("Permission denied", PeerState.REFUSED,
     "login refused ({line}): the peer accepts none of the keys offered; sparktui runs ssh with BatchMode, so it "
     "never asks for a password or passphrase: load the key into ssh-agent or name it in ~/.ssh/config"),
    ("Too many authentication failures", PeerState.REFUSED, "login refused ({line}): set IdentitiesOnly and one IdentityFile for this host"),
    ("kex_exchange_identification", PeerState.UNREACHABLE, "the SSH handshake failed ({line})"),
    ("Connection closed by", PeerState.UNREACHABLE, "the peer closed the connection ({line})"),
    ("Connection reset", PeerState.UNREACHABLE, "the connection was reset ({line})"),
    ("Bad configuration option", PeerState.FAILED, "ssh configuration error: {line}"),
    ("Can't open user config file", PeerState.FAILED, "ssh configuration error: {line}"),
    ("terminating,", PeerState.FAILED, "ssh configuration error: {line}"),
)


def _last_lines(text: str, n: int = 3) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("Warning: Permanently added")]
    return " | ".join(lines[-n:])


def classify(raw: RawRun, spec: PeerSpec) -> tuple[PeerState, str | None]:
    """(state, reason in words) for a finished run whose stdout was not (yet) parsed."""
    if raw.launch_error:
        hint = " (install the OpenSSH client)" if "No such file" in raw.launch_error or "not found" in raw.launch_error else ""
        return PeerState.FAILED, raw.launch_error + hint
    if raw.cancelled:
        return PeerState.CANCELLED, "cancelled"
    if raw.overflow:
        return PeerState.BAD_OUTPUT, (f"the peer printed more than {spec.max_bytes // (1024 * 1024)} MiB; stopped "
                                      f"(is `{spec.remote_command()}` the right command?)")
    if raw.timed_out:
        tail = _last_lines(raw.stderr, 1)
        return PeerState.TIMEOUT, (f"no complete answer within {spec.timeout_s:g} s; ssh and the peer command were "
                                   "stopped" + (f" (last said: {tail})" if tail else ""))
    rc = raw.returncode
    if rc == 0:
        return PeerState.OK, None
    if rc == 255:
        for line in reversed(raw.stderr.splitlines()):
            for needle, state, template in _SSH_ERRORS:
                if needle in line:
                    return state, template.format(line=line.strip(), host=spec.host,
                                                  connect=f"{spec.connect_timeout_s:g}")
        return PeerState.UNREACHABLE, f"ssh failed (exit 255): {_last_lines(raw.stderr) or 'no message'}"
    if rc in (126, 127):
        said = _last_lines(raw.stderr, 1)
        what = "sparktui is not installed on the peer (or not on PATH for non-interactive shells)" if rc == 127 \
            else "the peer command exists but cannot be run (permissions?)"
        return PeerState.NO_SPARKTUI, (f"{what}: `{spec.remote_command()}` gave exit {rc}" + (f" ({said})" if said else "")
                                       + "; give its full path with --peer-command, e.g. --peer-command '~/.venv/bin/sparktui'")
    said = _last_lines(raw.stderr)
    hint = " (an older sparktui without `snapshot -o -`? upgrade it)" if rc == 64 else ""
    return PeerState.FAILED, f"`{spec.remote_command()}` on the peer exited with code {rc}{hint}" + (f": {said}" if said else "")


def fetch_peer(spec: PeerSpec, cfg: Config, ids: Iterable[str] | None = None, *,
               cancel: threading.Event | None = None, ssh: str | None = None) -> PeerResult:
    """Fetch and judge one peer. Never raises."""
    t0 = time.monotonic()
    bad = validate_host(spec.host)
    if bad:
        return PeerResult(spec, PeerState.FAILED, bad)
    ssh_bin = ssh or shutil.which("ssh")
    if ssh_bin is None:
        return PeerResult(spec, PeerState.FAILED, "no `ssh` on this machine's PATH (install the OpenSSH client)")
    raw = run_bounded(spec.argv(ssh_bin), spec.timeout_s, spec.max_bytes, cancel)
    state, reason = classify(raw, spec)
    result = PeerResult(spec, state, reason, returncode=raw.returncode, stderr_tail=raw.stderr[-2000:],
                        took_s=time.monotonic() - t0)
    if state is not PeerState.OK:
        return result
    try:
        readings, host, doc, notes = parse_snapshot_output(raw.stdout)
    except PeerOutputError as e:
        result.state, result.reason = PeerState.BAD_OUTPUT, str(e)
        return result
    result.readings, result.host_facts, result.notes = readings, host, notes
    result.sparktui_version = doc.get("sparktui_version")
    result.taken_at = doc.get("taken_at") if isinstance(doc.get("taken_at"), (int, float)) else None
    result.verdicts = judge_peer(readings, cfg, ids)
    result.took_s = time.monotonic() - t0
    return result


def judge_peer(readings: Readings, cfg: Config, ids: Iterable[str] | None = None) -> list[Verdict]:
    """The peer's readings judged by this sparktui (same rules for every column)."""
    from sparktui.gotchas import IDS
    from sparktui.runner import run_checks

    verdicts, _ = run_checks(list(ids) if ids is not None else list(IDS), cfg, readings)
    return verdicts


def local_machine(readings: Readings, verdicts: Iterable[Verdict] = (), name: str | None = None) -> "Machine":
    """This machine as the comparison's first column."""
    from sparktui import __version__
    from sparktui.fleet.compare import Machine

    host = readings.data("host") or {}
    return Machine(name or host.get("hostname") or "this machine", readings, None, __version__, tuple(verdicts), local=True)


def fetch_peers(specs: list[PeerSpec], cfg: Config, ids: Iterable[str] | None = None, *,
                cancel: threading.Event | None = None) -> list[PeerResult]:
    """All peers in parallel, results in the order given."""
    if not specs:
        return []
    ids = list(ids) if ids is not None else None
    with ThreadPoolExecutor(max_workers=min(8, len(specs)), thread_name_prefix="peer") as pool:
        return list(pool.map(lambda s: fetch_peer(s, cfg, ids, cancel=cancel), specs))


class PeerFetcher:
    """Background fetches for a view that must not wait (the dashboard).

    ``start()`` fetches every peer in its own daemon thread; ``refresh(host)`` fetches one again.
    Each finished fetch lands in ``results[host]`` and is passed to ``on_result`` (called from the
    worker thread: hand it to your UI thread). ``pending`` holds hosts being fetched. ``cancel()``
    kills the running ssh processes.
    """

    def __init__(self, specs: list[PeerSpec], cfg: Config, on_result: Callable[[PeerResult], None] | None = None,
                 ids: Iterable[str] | None = None) -> None:
        self.specs = {s.host: s for s in specs}
        self.cfg = cfg
        self.on_result = on_result
        self.ids = list(ids) if ids is not None else None
        self.results: dict[str, PeerResult] = {}
        self.pending: set[str] = set()
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def start(self) -> "PeerFetcher":
        for host in self.specs:
            self.refresh(host)
        return self

    def refresh(self, host: str | None = None) -> None:
        for h in ([host] if host else list(self.specs)):
            with self._lock:
                if h in self.pending or h not in self.specs:
                    continue
                self.pending.add(h)
            t = threading.Thread(target=self._fetch, args=(h,), name=f"peer-{h}", daemon=True)
            self._threads.append(t)
            t.start()

    def _fetch(self, host: str) -> None:
        try:
            result = fetch_peer(self.specs[host], self.cfg, self.ids, cancel=self._cancel)
        except Exception as e:  # belt and braces: fetch_peer does not raise
            result = PeerResult(self.specs[host], PeerState.FAILED, f"sparktui bug while fetching: {e!r}")
        with self._lock:
            self.results[host] = result
            self.pending.discard(host)
        if self.on_result is not None:
            try:
                self.on_result(result)
            except Exception:
                pass

    def wait(self, timeout: float | None = None) -> bool:
        """True when no fetch is running any more."""
        end = None if timeout is None else time.monotonic() + timeout
        for t in list(self._threads):
            t.join(None if end is None else max(0.0, end - time.monotonic()))
        return not self.pending

    def cancel(self) -> None:
        self._cancel.set()

    def ordered(self) -> list[PeerResult | None]:
        """Results in the peers' order (None for a peer not answered yet)."""
        return [self.results.get(h) for h in self.specs]
