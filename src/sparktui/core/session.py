"""The kept session: everything a live dashboard saw, so `q`, a crash or a reboot loses nothing.

Each live dashboard run appends a recording (core/recording.py's format, so `--replay` and
`check --replay` read it) to ``$XDG_STATE_HOME/sparktui/sessions/<start>-<host>.jsonl``, with
each check's first verdict and every change as "verdict" lines. Bounds keep disk flat: a file that
reaches ``session.max_session_mb`` is rotated (closed; the session goes on in a new file whose header
names the one it continues and carries the latest check readings), and before a file is opened the
oldest files are deleted until the others plus the new one's cap fit in ``session.max_mb``; files
last written more than ``session.max_days`` ago go too. Nothing is held in memory but the latest
check readings (one per probe).

On start the dashboard (ui/sources.LiveSource, in a thread before sampling starts) restores this
host's newest session when it was written to within ``session.restore_within_min``: its last
samples (the tail of the file only) into the History, with an empty sample marking the gap, and
its verdict lines into the EventLog.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sparktui.core.config import SessionConfig, default_state_dir
from sparktui.core.events import Change, EventLog
from sparktui.core.recording import MAX_HEADER_BYTES, RecordingWriter, is_status_name, read_recording
from sparktui.core.verdict import Status, Verdict

SUFFIX = ".jsonl"
MB = 1024 * 1024
RESTORE_PROBE_BYTES = 64 * 1024  # the file's last 64 KB say how many bytes a sample takes, lines between included
RESTORE_BYTES_PER_SAMPLE = 3 * 1024  # when those hold no sample: a GB10 sample line is ~1 KB
RESTORE_MAX_BYTES = 32 * MB  # however long the History, a restore never parses more than this
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def sessions_dir() -> Path:
    return default_state_dir() / "sessions"


def session_id(started_at: float, host: str) -> str:
    """``20261204T181740Z-spark-1``: sorts by start time; the host is made safe for a file name."""
    stamp = datetime.fromtimestamp(started_at, timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{_NAME_UNSAFE.sub('_', host)[:64] or 'host'}"


def host_of(session: str) -> str:
    return session.split("-", 1)[1] if "-" in session else ""


def _start_order(p: Path) -> tuple[str, int]:
    """A name's start stamp, then its "+N" (a second file started in the same second)."""
    base, _, n = p.stem.partition("+")
    return base[:16], int(n) if n.isdigit() else 1


def session_files(folder: Path | None = None) -> list[Path]:
    """The session files, newest first (their names start with the start time)."""
    d = folder or sessions_dir()
    try:
        return sorted((p for p in d.iterdir() if p.suffix == SUFFIX and p.is_file()), key=_start_order, reverse=True)
    except OSError:
        return []


@dataclass
class SessionInfo:
    """One kept session file, as `sparktui history` lists it."""

    id: str
    path: str
    size: int
    host: str
    started_at: float | None
    first_t: float | None  # the first sample's time
    ended_at: float | None  # the last sample's time
    samples: int
    worst: str | None  # the worst status any verdict line reached; None: no verdict recorded
    continues: str | None = None

    @property
    def duration_s(self) -> float:
        if self.first_t is None or self.ended_at is None:
            return 0.0
        return max(0.0, self.ended_at - self.first_t)


def _json_line(line: bytes) -> dict[str, Any] | None:
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _time_of(line: dict[str, Any] | None) -> float | None:
    t = (line or {}).get("t")
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None


def summarize(path: Path) -> SessionInfo:
    """Counts the samples by their line prefix (our writer's compact JSON) and parses only the
    header, the last sample and the verdict lines: a 50 MB file is read in a fraction of a second."""
    size = path.stat().st_size
    samples, first_sample, last_sample, worst = 0, b"", b"", None
    with open(path, "rb") as f:
        head = _json_line(f.readline(MAX_HEADER_BYTES)) or {}
        for line in f:
            if line.startswith(b'{"type":"sample"'):
                samples += 1
                first_sample = first_sample or line
                last_sample = line
            elif line.startswith(b'{"type":"verdict"'):
                v = _json_line(line)
                if v is not None and is_status_name(v.get("status")):
                    status = Status(v["status"])
                    worst = status if worst is None or status.severity > worst.severity else worst
    first, last = _json_line(first_sample), _json_line(last_sample) if last_sample.endswith(b"\n") else None
    host: dict[str, Any] = head["host"] if isinstance(head.get("host"), dict) else {}
    started = head.get("started_at")
    meta: dict[str, Any] = head["session"] if isinstance(head.get("session"), dict) else {}
    return SessionInfo(id=path.stem, path=str(path), size=size, host=str(host.get("hostname") or host_of(path.stem)),
                       started_at=float(started) if isinstance(started, (int, float)) else None,
                       first_t=_time_of(first), ended_at=_time_of(last),
                       samples=samples, worst=worst.value if worst else None, continues=meta.get("continues"))


def list_sessions(folder: Path | None = None) -> list[SessionInfo]:
    """Every readable session, newest first; a file that vanished or cannot be read is left out."""
    out = []
    for p in session_files(folder):
        try:
            out.append(summarize(p))
        except OSError:
            continue
    return out


def resolve(name: str, folder: Path | None = None) -> str:
    """`--replay` takes a file or a session id from `sparktui history` (or a prefix of exactly
    one); anything else is returned as given, so the reader names the missing file."""
    if os.path.exists(name) or os.sep in name:
        return name
    ids = [p for p in session_files(folder) if p.stem == name or p.name == name]
    if not ids:
        ids = [p for p in session_files(folder) if p.stem.startswith(name)]
    return str(ids[0]) if len(ids) == 1 else name


def prune(cfg: SessionConfig, folder: Path, reserve_bytes: int, now: float | None = None) -> list[Path]:
    """Delete sessions older than ``max_days``, then the oldest until the rest plus
    ``reserve_bytes`` (the cap of the file about to be opened) fit in ``max_mb``. Returns what
    was deleted (a file that cannot be deleted is left, and not counted)."""
    now = time.time() if now is None else now
    doomed = []
    sizes = {}
    for p in session_files(folder):
        try:
            st = p.stat()
        except OSError:
            continue
        if now - st.st_mtime > cfg.max_days * 86400:
            doomed.append(p)
        else:
            sizes[p] = st.st_size
    budget = cfg.max_mb * MB - reserve_bytes
    kept_total = sum(sizes.values())
    for p in sorted(sizes, key=_start_order):  # oldest first
        if kept_total <= budget:
            break
        kept_total -= sizes[p]
        doomed.append(p)
    deleted = []
    for p in doomed:
        try:
            p.unlink()
        except FileNotFoundError:
            pass  # another dashboard's pruning got there first
        except OSError:
            continue
        deleted.append(p)
    return deleted


class SessionWriter:
    """A RecordingWriter that rotates at ``max_session_mb`` and keeps the folder within its bounds.

    Raises OSError (or RecordingError) when the folder or first file cannot be made; the caller
    says so and the dashboard carries on. ``deleted`` counts the files the bounds removed."""

    def __init__(self, cfg: SessionConfig, head: dict[str, Any], host: str, folder: Path | None = None) -> None:
        self.cfg, self.head, self.host = cfg, head, host
        self.folder = folder or sessions_dir()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.cap_bytes = int(min(cfg.max_session_mb, cfg.max_mb) * MB)
        self.readings_now: dict[str, Any] = {}  # the latest reading per probe: a rotated file's header
        self.deleted = 0
        self._lock = threading.Lock()
        self.writer = self._open(None)

    def _open(self, continues: str | None) -> RecordingWriter:
        started = time.time()
        name = session_id(started, self.host)
        path = self.folder / f"{name}{SUFFIX}"
        n = 1
        while path.exists():  # two starts in one second
            n += 1
            path = self.folder / f"{name}+{n}{SUFFIX}"  # "+" is never in a host part
        self.deleted += len(prune(self.cfg, self.folder, self.cap_bytes))
        head = {**self.head, "started_at": started, "session": {"id": path.stem, "continues": continues}}
        if self.readings_now:
            head["readings"] = dict(self.readings_now)
        return RecordingWriter(path, head)

    @property
    def path(self) -> Path:
        return self.writer.path

    def _do(self, method: str, *args: Any) -> None:
        with self._lock:
            if self.writer.bytes >= self.cap_bytes:
                old = self.writer
                self.writer = self._open(old.path.stem)
                old.event(f"rotated at {self.cap_bytes // MB} MB; continued in {self.writer.path.stem}")
                old.close()
            getattr(self.writer, method)(*args)

    def sample(self, s: dict[str, Any]) -> None:
        self._do("sample", s)

    def processes(self, p: dict[str, Any]) -> None:
        self._do("processes", p)

    def readings(self, readings: dict[str, Any], t: float | None = None) -> None:
        self.readings_now.update(readings)
        self._do("readings", readings, t)

    def verdict(self, t: float, gid: str, old: str | None, status: str, summary: str) -> None:
        self._do("verdict", t, gid, old, status, summary)

    def event(self, text: str, t: float | None = None) -> None:
        self._do("event", text, t)

    def close(self) -> None:
        with self._lock:
            self.writer.close()


@dataclass
class Restored:
    """What the dashboard shows again from the previous session."""

    session: str
    path: str
    samples: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    ended_at: float = 0.0  # the last thing written: the gap starts here

    def gap_sample(self, interval_s: float) -> dict[str, Any]:
        """An empty sample just after the last one: every series has a hole there, so the plots
        show where the dashboard was not watching."""
        return {"t": self.ended_at + interval_s}


def newest_for_host(host: str, within_s: float, folder: Path | None = None, now: float | None = None) -> Path | None:
    """This host's newest session, when it was last written less than ``within_s`` ago."""
    now = time.time() if now is None else now
    safe = _NAME_UNSAFE.sub("_", host)[:64]
    for p in session_files(folder):
        if re.fullmatch(rf"\d{{8}}T\d{{6}}Z-{re.escape(safe)}(\+\d+)?", p.stem) is None:
            continue
        try:
            return p if now - p.stat().st_mtime <= within_s else None
        except OSError:
            return None
    return None


def load_restore(path: Path, history_len: int) -> Restored:
    """The end of a session: as many samples as the History holds (only the file's tail is
    read), and its verdict changes in that stretch. Raises RecordingError/OSError when unusable."""
    probe = read_recording(path, tail_bytes=RESTORE_PROBE_BYTES)  # how many bytes a sample takes here
    per_sample = RESTORE_PROBE_BYTES / len(probe.samples) if probe.samples else RESTORE_BYTES_PER_SAMPLE
    budget = min(RESTORE_MAX_BYTES, int(max(history_len, 1) * per_sample * 1.2) + RESTORE_PROBE_BYTES)
    rec = read_recording(path, tail_bytes=budget)
    last_times = [x["t"] for x in (rec.samples[-1:] + rec.verdicts[-1:] + rec.events[-1:])]
    return Restored(session=path.stem, path=str(path), samples=rec.samples[-history_len:], verdicts=rec.verdicts,
                    ended_at=max(last_times) if last_times else path.stat().st_mtime)


def restore_events(log: EventLog, restored: Restored, now: float) -> None:
    """The previous session's verdict changes into the EventLog in order, then a row that marks
    the gap, so the events view reads as one story."""
    for v in restored.verdicts:
        log.observe(Verdict(v["id"], Status(v["status"]), v["summary"]), v["t"])
    gap_min = max(0.0, now - restored.ended_at) / 60
    log.changes.append(Change(t=now, id="—", old=None, new=Status.SKIP,
                              summary=f"after session {restored.session}: not watching for {gap_min:.0f} min "
                                      "(the rows below are from it)"))
