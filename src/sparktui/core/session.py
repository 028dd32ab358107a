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

import errno
import fcntl
import json
import os
import re
import stat
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sparktui.core.config import SessionConfig, default_state_dir
from sparktui.core.events import Change, EventLog
from sparktui.core.recording import (MAX_LINE_BYTES, RecordingError, RecordingInUse, RecordingWriter, _is_number,
                                     is_status_name, read_recording)
from sparktui.core.verdict import Status, Verdict

SUFFIX = ".jsonl"
MB = 1024 * 1024
RESTORE_PROBE_BYTES = 64 * 1024  # the file's last 64 KB say how many bytes a sample takes, lines between included
RESTORE_BYTES_PER_SAMPLE = 3 * 1024  # when those hold no sample: a GB10 sample line is ~1 KB
RESTORE_MAX_BYTES = 32 * MB  # however long the History, a restore never parses more than this
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_TIME = 253402300799.0  # 9999-12-31 23:59:59 UTC: a session time past this (or before 1970) is not a time
NAME_TRIES = 100  # "+2", "+3"...: names taken (or a link planted there) are passed over, this many at most


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
        return sorted((p for p in d.iterdir() if p.suffix == SUFFIX and _plain_file(p)), key=_start_order, reverse=True)
    except OSError:
        return []


def _plain_file(p: Path) -> bool:
    """A regular file under its own name: a symbolic link in the folder is nobody's session."""
    try:
        return stat.S_ISREG(p.lstat().st_mode)
    except OSError:
        return False


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
    lines_skipped: int = 0  # lines longer than MAX_LINE_BYTES: skipped unread, counted
    problems: list[str] = field(default_factory=list)  # fields refused (an absurd time...), in words

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


def as_time(v: Any) -> float | None:
    """A time a session can carry (1970..9999), or None: ``1e308``, NaN, true or "x" are not times."""
    return float(v) if _is_number(v) and 0 <= v <= MAX_TIME else None


def _shown(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _time_field(obj: dict[str, Any] | None, key: str, where: str, problems: list[str]) -> float | None:
    """``obj[key]`` when it is a time; a value that is not is refused, named in ``problems``."""
    v = (obj or {}).get(key)
    t = as_time(v)
    if t is None and v is not None:
        problems.append(f"{where} \"{key}\" is {_shown(v)}, not a time (1970..9999); ignored")
    return t


def _text_field(obj: dict[str, Any], key: str, where: str, problems: list[str], cut: int = 256) -> str | None:
    v = obj.get(key)
    if v is None or isinstance(v, str):
        return v[:cut] if v else None
    problems.append(f"{where} \"{key}\" is {_shown(v)}, not a string; ignored")
    return None


def _open_plain(path: Path) -> int:
    """A read descriptor on ``path`` itself (never through a link at its name; a FIFO never hangs),
    when it is a regular file; OSError otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def summarize(path: Path) -> SessionInfo:
    """Counts the samples by their line prefix (our writer's compact JSON) and parses only the
    header, the first and last sample and the verdict lines: a 50 MB file is read in a fraction of
    a second. Lines are read with a cap (MAX_LINE_BYTES): a longer one is skipped without being
    held and counted in ``lines_skipped``; a header field or time that is absurd (``1e308``) is
    refused and named in ``problems``. Raises OSError when the file cannot be read (or is a link)."""
    samples, first_sample, last_sample, worst = 0, b"", b"", None
    head: dict[str, Any] = {}
    problems: list[str] = []
    skipped = 0
    with open(_open_plain(path), "rb") as f:
        size = os.fstat(f.fileno()).st_size
        budget = size + 1  # a file still being written is not followed
        readline, cap, n = f.readline, MAX_LINE_BYTES + 1, 0
        while budget > 0:  # recording._lines, inlined: a 50 MB file in under 0.1 s
            line = readline(cap)
            if not line:
                break
            budget -= len(line)
            n += 1
            if len(line) == cap and not line.endswith(b"\n"):  # skipped unread, never held whole
                while line and not line.endswith(b"\n") and budget > 0:
                    line = readline(1 << 20)
                    budget -= len(line)
                skipped += 1
                if n == 1:
                    problems.append(f"line 1: header longer than {MAX_LINE_BYTES} bytes; not read")
            elif n == 1:
                head = _json_line(line) or {}
            elif line.startswith(b'{"type":"sample"'):
                samples += 1
                first_sample = first_sample or line
                if line.endswith(b"\n"):  # a torn last line is not the last sample
                    last_sample = line
            elif line.startswith(b'{"type":"verdict"'):
                v = _json_line(line)
                if v is not None and is_status_name(v.get("status")):
                    status = Status(v["status"])
                    worst = status if worst is None or status.severity > worst.severity else worst
    host: dict[str, Any] = head["host"] if isinstance(head.get("host"), dict) else {}
    meta: dict[str, Any] = head["session"] if isinstance(head.get("session"), dict) else {}
    started = _time_field(head, "started_at", "line 1: header", problems)
    first_t = _time_field(_json_line(first_sample), "t", "first sample:", problems)
    ended_at = _time_field(_json_line(last_sample), "t", "last sample:", problems)
    hostname = _text_field(host, "hostname", "line 1: header host", problems)
    continues = _text_field(meta, "continues", "line 1: header session", problems)
    if skipped:
        problems.append(f"{skipped} line{'s' if skipped != 1 else ''} longer than {MAX_LINE_BYTES} bytes skipped unread")
    return SessionInfo(id=path.stem, path=str(path), size=size, host=hostname or host_of(path.stem),
                       started_at=started, first_t=first_t, ended_at=ended_at, samples=samples,
                       worst=worst.value if worst else None, continues=continues, lines_skipped=skipped,
                       problems=problems)


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


def in_use(path: Path) -> bool:
    """Whether a writer (this or another dashboard, `record`) holds ``path`` open now: its flock."""
    try:
        fd = _open_plain(path)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as e:
        return e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
    finally:
        os.close(fd)
    return False


def _delete_unless_open(p: Path) -> bool | None:
    """Delete ``p`` unless a writer holds it (its flock, RecordingWriter): True when deleted, None
    when it was gone already (another dashboard's pruning got there first), False when it is kept
    (open, a link, replaced meanwhile, or it cannot be deleted). The lock is held while deleting,
    so a writer cannot take the file in between."""
    try:
        fd = _open_plain(p)
    except FileNotFoundError:
        return None
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                return False  # another dashboard writes it now: never deleted under it
        held = os.fstat(fd)
        try:
            named = p.lstat()
        except FileNotFoundError:
            return None
        if (named.st_dev, named.st_ino) != (held.st_dev, held.st_ino):
            return False  # another file under that name now: not the one judged
        p.unlink()
        return True
    except FileNotFoundError:
        return None
    except OSError:
        return False
    finally:
        os.close(fd)


def prune(cfg: SessionConfig, folder: Path, reserve_bytes: int, now: float | None = None) -> list[Path]:
    """Delete sessions older than ``max_days``, then the oldest until the rest plus
    ``reserve_bytes`` (the cap of the file about to be opened) fit in ``max_mb``. Returns what
    was deleted (a file that cannot be deleted is left, and not counted). A session a writer holds
    open (another dashboard's, or this one's before a rotation) is never deleted: it is kept and
    still counts, so older closed files go in its place."""
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
    deleted = [p for p in doomed if _delete_unless_open(p) is not False]
    kept_total = sum(sizes.values())
    for p in sorted(sizes, key=_start_order):  # oldest first
        if kept_total <= budget:
            break
        if _delete_unless_open(p) is False:
            continue  # open (or undeletable): kept, and still counted
        kept_total -= sizes[p]
        deleted.append(p)
    return deleted


class SessionWriter:
    """A RecordingWriter that rotates at ``max_session_mb`` and keeps the folder within its bounds.

    Raises OSError (or RecordingError) when the folder or first file cannot be made; the caller
    says so and the dashboard carries on. ``deleted`` counts the files the bounds removed.

    Each file is created new (``O_EXCL``, never through a link: a name taken, or a link planted
    under it, is passed over for the next "+N") and locked while open (``flock``), so another
    dashboard's pruning never deletes it. A folder that is a symbolic link to a folder of another
    user is refused."""

    def __init__(self, cfg: SessionConfig, head: dict[str, Any], host: str, folder: Path | None = None) -> None:
        self.cfg, self.head, self.host = cfg, head, host
        self.folder = folder or sessions_dir()
        self.folder.mkdir(parents=True, exist_ok=True)
        _check_folder(self.folder)
        self.cap_bytes = int(min(cfg.max_session_mb, cfg.max_mb) * MB)
        self.readings_now: dict[str, Any] = {}  # the latest reading per probe: a rotated file's header
        self.deleted = 0
        self._lock = threading.Lock()
        self.writer = self._open(None)

    def _open(self, continues: str | None) -> RecordingWriter:
        self.deleted += len(prune(self.cfg, self.folder, self.cap_bytes))
        started = time.time()
        name = session_id(started, self.host)
        for n in range(1, NAME_TRIES + 1):  # two starts in one second: "+2" ("+" is never in a host part)
            path = self.folder / (f"{name}{SUFFIX}" if n == 1 else f"{name}+{n}{SUFFIX}")
            head = {**self.head, "started_at": started, "session": {"id": path.stem, "continues": continues}}
            if self.readings_now:
                head["readings"] = dict(self.readings_now)
            try:
                writer = RecordingWriter(path, head, exclusive=True)
            except (FileExistsError, RecordingInUse):
                continue  # taken (a file, or a link planted there), or another pruner holds it
            if writer.still_named():
                return writer
            writer.close()  # another dashboard's pruning deleted it before it was locked: a new name
        raise RecordingError(f"{self.folder}: no free session file name after {NAME_TRIES} tries ({name}...)")

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


def _check_folder(folder: Path) -> None:
    """The sessions folder is a folder; when it is a symbolic link, the folder it names must be this
    user's (a link to someone else's folder would hand them the session). RecordingError if not."""
    st = os.stat(folder)
    if not stat.S_ISDIR(st.st_mode):
        raise RecordingError(f"{folder}: not a folder; sessions are not kept")
    if os.path.islink(folder) and st.st_uid != os.geteuid():
        raise RecordingError(f"{folder}: a symbolic link to {os.path.realpath(folder)}, which belongs to user id "
                             f"{st.st_uid}, not to you; sessions are not kept there")


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
    """This host's newest session, when it was last written less than ``within_s`` ago. A session
    another dashboard is writing now (its lock is held) is that one's, not a previous run: passed over."""
    now = time.time() if now is None else now
    safe = _NAME_UNSAFE.sub("_", host)[:64]
    for p in session_files(folder):
        if re.fullmatch(rf"\d{{8}}T\d{{6}}Z-{re.escape(safe)}(\+\d+)?", p.stem) is None or in_use(p):
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
    log.add(Change(t=now, id="—", old=None, new=Status.SKIP, kind="gap",
                   summary=f"after session {restored.session}: not watching for {gap_min:.0f} min "
                                      "(the rows below are from it)"))
