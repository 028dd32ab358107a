"""Recordings: telemetry as JSON lines, and replaying them into the judges and the dashboard.

Format (schema 1), one JSON object per line:

    {"type": "header", "kind": "sparktui-recording", "schema": 1, "sparktui_version": "0.1.0",
     "started_at": 1733200000.0, "interval_s": 1.0, "host": {...}, "static": {...NVML static...}}
    {"type": "sample", "t": ..., "gpus": [...], "mem": {...}}          # see core/telemetry.py
    {"type": "processes", "t": ..., "data": {...processes reading...}}  # at a lower rate
    {"type": "readings", "t": ..., "readings": {name: reading}}  # check results, as they complete
    {"type": "verdict", "t": ..., "id": "G4", "old": "ok", "status": "warn", "summary": "..."}  # a first verdict or a change
    {"type": "event", "t": ..., "text": "..."}  # something the session did (paused, restored, rotated)

Verdict and event lines were added after schema 1 was first shipped: they need no new schema
number because every reader skips a line type it does not know (counted in ``skipped_types``,
not a problem), so a newer writer's lines never make an older file unreadable.

A recording is written append-only, each line in one write() on an O_APPEND descriptor, so a
crash, a kill -9 or power loss costs at most the line being written: the reader tolerates a torn
last line and names every malformed line,
including a sample whose fields have the wrong shape (skipped, so the judges and the dashboard
never see it). `record -o` continues an existing file after a "segment" line (a header with
``"type": "segment"``); a replay restarts its pacing there, so the time between two segments is
not waited out.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import math
import os
import stat
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from sparktui.core.readings import Reading, Readings, regular_size
from sparktui.core.shapes import ProcessSnapshot
from sparktui.core.validate import shape_problems
from sparktui.core.telemetry import GPU_FIELDS, sample_window
from sparktui.core.units import is_number
from sparktui.core.verdict import Status

RECORDING_SCHEMA = 1
RECORDING_KIND = "sparktui-recording"
MAX_RECORDING_BYTES = 1024 * 1024 * 1024  # about a month of 1 s samples; more is not read into memory
MAX_HEADER_NUMBER = 1e15  # started_at, interval_s: beyond this a header number is not a time
MAX_HEADER_BYTES = 16 * 1024 * 1024  # a header line (NVML static facts, readings) is far smaller
STATUS_NAMES = frozenset(s.value for s in Status)
GAP_CAP_INTERVALS = 5  # a paced replay plays a longer gap between samples as this many intervals


def is_status_name(v: Any) -> bool:
    """A status a verdict line may carry. A JSON list or object is unhashable: `[] in STATUS_NAMES`
    raises TypeError, so the type is asked first (a hostile line once crashed the reader here)."""
    return isinstance(v, str) and v in STATUS_NAMES


class RecordingError(ValueError):
    """A recording that cannot be used at all; the message says why."""


def header(*, interval_s: float, host: dict[str, Any], static: dict[str, Any] | None, version: str,
           started_at: float | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "header", "kind": RECORDING_KIND, "schema": RECORDING_SCHEMA, "sparktui_version": version,
            "started_at": started_at if started_at is not None else time.time(), "interval_s": interval_s,
            "host": host, "static": static or {}, **extra}


class RecordingWriter:
    """Appends lines, each in one write() to an O_APPEND descriptor (no user-space buffer, so a
    killed process leaves whole lines). An existing recording is continued, not overwritten; an
    existing file that is not a recording is refused. ``bytes`` is the file's size as written.

    The file is opened without following a symbolic link at its name (``O_NOFOLLOW``: a link
    planted there cannot redirect the writes) and, with ``exclusive``, only when it does not exist
    yet (``O_EXCL``: FileExistsError otherwise; a session file is always new). While open it holds
    an exclusive ``flock``: a second writer of the same file is refused (RecordingInUse), and a
    session pruner skips it (core/session.prune)."""

    def __init__(self, path: str | os.PathLike, head: dict[str, Any], *, exclusive: bool = False) -> None:
        self.path = Path(path)
        self.lines = 0
        self._lock = threading.Lock()
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | (os.O_EXCL if exclusive else 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise RecordingError(f"{self.path}: is a symbolic link; a recording is not written through one "
                                     "(give the file it names)") from None
            raise
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise RecordingError(f"{self.path}: not a regular file (a pipe, device or folder?); refusing to write")
            hold_lock(fd, self.path)
            existing = st.st_size > 0
            if existing:
                try:
                    doc = json.loads(_first_line_fd(fd))
                except (ValueError, RecursionError):
                    doc = None
                if not isinstance(doc, dict) or doc.get("kind") != RECORDING_KIND:
                    raise RecordingError(f"{self.path}: exists and is not a sparktui recording; refusing to append")
            self._fd: int | None = fd
            self.bytes = st.st_size
            if existing and os.pread(fd, 1, st.st_size - 1) != b"\n":
                self._append(b"\n")  # a torn last line from an earlier crash stays on its own line
            if not existing:
                self._write(head)
            else:
                self._write({**head, "type": "segment"})  # where a continued recording resumes
        except BaseException:
            self._fd = None
            os.close(fd)
            raise

    def _append(self, data: bytes) -> None:
        with self._lock:  # the sampler thread writes samples, the dashboard's thread readings
            if self._fd is None:
                raise ValueError(f"{self.path}: recording closed")
            view = memoryview(data)
            try:
                while view:  # a regular file takes it whole; a short write (disk nearly full) continues
                    view = view[os.write(self._fd, view):]
            except OSError:
                if len(view) < len(data):  # part of the line went out: take it back, so the file stays whole lines
                    with contextlib.suppress(OSError):
                        os.ftruncate(self._fd, self.bytes)
                raise
            self.bytes += len(data)

    def _write(self, obj: dict[str, Any]) -> None:
        self._append((json.dumps(obj, separators=(",", ":"), default=str) + "\n").encode("utf-8"))
        self.lines += 1

    def sample(self, sample: dict[str, Any]) -> None:
        self._write({"type": "sample", **sample})

    def processes(self, data: dict[str, Any]) -> None:
        self._write({"type": "processes", "t": data.get("t"), "data": data})

    def readings(self, readings: dict[str, Any], t: float | None = None) -> None:
        """Probe readings (``Readings.to_dict()``) taken while recording, so a replay can judge
        the checks the samples cannot answer."""
        self._write({"type": "readings", "t": t if t is not None else time.time(), "readings": readings})

    def verdict(self, t: float, gid: str, old: str | None, status: str, summary: str) -> None:
        """A check's first verdict or a change of it (what the events view lists), so a restored
        session shows it again."""
        self._write({"type": "verdict", "t": t, "id": gid, "old": old, "status": status, "summary": summary})

    def event(self, text: str, t: float | None = None) -> None:
        self._write({"type": "event", "t": t if t is not None else time.time(), "text": text})

    @property
    def closed(self) -> bool:
        return self._fd is None

    def still_named(self) -> bool:
        """Whether ``path`` still names the file being written (not deleted or replaced meanwhile)."""
        with self._lock:
            if self._fd is None:
                return False
            try:
                held, named = os.fstat(self._fd), os.lstat(self.path)
            except OSError:
                return False
            return (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> "RecordingWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class RecordingInUse(RecordingError):
    """Another writer holds the file's lock: another sparktui (a dashboard, `record`) writes it now."""


def hold_lock(fd: int, path: Path) -> None:
    """An exclusive, non-blocking ``flock`` on ``fd``, held until it is closed. RecordingInUse when
    another open file holds it; a file system without flock (some network mounts) is not an error."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise RecordingInUse(f"{path}: another sparktui is writing it now; refusing to write it too") from None
        if e.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
            raise


def _first_line_fd(fd: int) -> str:
    """The header line, read from ``fd`` up to MAX_HEADER_BYTES (a huge file without newlines is not held)."""
    chunks, got = [], 0
    while got < MAX_HEADER_BYTES:
        chunk = os.pread(fd, min(64 * 1024, MAX_HEADER_BYTES - got), got)
        if not chunk:
            break
        end = chunk.find(b"\n")
        if end >= 0:
            chunks.append(chunk[:end + 1])
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


@dataclass
class Recording:
    path: str
    header: dict[str, Any]
    samples: list[dict[str, Any]] = field(default_factory=list)
    processes: list[dict[str, Any]] = field(default_factory=list)  # processes readings' data
    readings: list[dict[str, Any]] = field(default_factory=list)  # "readings" lines' maps, in order
    problems: list[str] = field(default_factory=list)  # malformed lines, in words
    torn_tail: bool = False
    segment_starts: list[int] = field(default_factory=list)  # index in samples of each continued segment's first
    verdicts: list[dict[str, Any]] = field(default_factory=list)  # "verdict" lines: t, id, old, status, summary
    events: list[dict[str, Any]] = field(default_factory=list)  # "event" lines: t, text
    skipped_types: dict[str, int] = field(default_factory=dict)  # line types this reader does not know: count
    lines_skipped: int = 0  # malformed lines
    problems_unnamed: int = 0  # malformed lines past the first MAX_PROBLEMS_KEPT: counted, not named
    samples_seen: int = 0  # valid sample lines; more than ``samples`` holds when the recording was thinned
    sample_stride: int = 1  # 1: every sample kept; n: every n-th (and the lowest-memory moments), see _Thinned

    def skipped_notice(self) -> str | None:
        """What the reader skipped or ignored, in one line for a replay's notice and header:
        "3 lines skipped: line 17: ..."."""
        if not self.problems:
            return None
        n = self.lines_skipped + self.torn_tail
        what = f"{n} line{'s' if n != 1 else ''} skipped" if n else "header fields ignored"
        return f"{what}: {self.problems[0]}"

    def synthetic_note(self) -> str | None:
        """A recording generated rather than measured (the shipped demo) says so wherever it is shown:
        its header's ``demo`` flag and ``note``."""
        if self.header.get("demo") is not True:
            return None
        note = self.header.get("note")
        return note[:200] if isinstance(note, str) and note.strip() else "synthetic recording; not a measurement"

    def thinning_note(self) -> str | None:
        """Said wherever a thinned recording is judged or shown, so a reader knows what was seen."""
        if self.sample_stride == 1:
            return None
        return (f"{self.samples_seen} samples: every {self.sample_stride}th kept ({len(self.samples)}, "
                f"with the lowest-memory moments) to bound memory")

    @property
    def duration_s(self) -> float:
        if len(self.samples) < 2:
            return 0.0
        return float(self.samples[-1]["t"] - self.samples[0]["t"])

    @property
    def interval_s(self) -> float | None:
        """The header's sampling interval, when it is a positive number."""
        v: Any = self.header.get("interval_s")
        return float(v) if _is_number(v) and v > 0 else None


MAX_NUMBER = 1e18  # no reading a recording carries (bytes, watts, seconds) comes near this


def _is_number(v: Any) -> bool:
    """A finite int or float of sane size (JSON true/false, NaN, Infinity and integers too big
    for a float are not numbers here)."""
    return is_number(v) and abs(v) <= MAX_NUMBER


def _kind(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(v), "a number")


def _errors_problem(what: str, errors: Any) -> str | None:
    if not isinstance(errors, dict) or not all(isinstance(v, str) for v in errors.values()):
        return f"{what} is not an object of reasons (strings)"
    return None


def sample_problem(obj: dict[str, Any]) -> str | None:
    """Why a sample line does not have the shape the sampler writes (core/telemetry.py), or None.
    Fields may be missing or null; a present one must be of its type. Unknown fields are kept."""
    if not _is_number(obj.get("t")):
        return "without a finite numeric \"t\""
    gpus = obj.get("gpus")
    if gpus is not None:
        if not isinstance(gpus, list):
            return f"with \"gpus\" {_kind(gpus)}, not a list of GPU readings"
        for i, g in enumerate(gpus):
            if not isinstance(g, dict):
                return f"with gpus[{i}] {_kind(g)}, not an object"
            if g.get("index") is not None and not (isinstance(g["index"], int) and not isinstance(g["index"], bool)):
                return f"with gpus[{i}].index {_kind(g['index'])}, not an integer"
            for f in GPU_FIELDS:
                if g.get(f) is not None and not _is_number(g[f]):
                    return f"with gpus[{i}].{f} {_kind(g[f])}, not a number or null"
            reasons = g.get("reasons")
            if reasons is not None and not (isinstance(reasons, list) and all(isinstance(r, str) for r in reasons)):
                return f"with gpus[{i}].reasons not a list of names"
            if g.get("errors") is not None and (why := _errors_problem(f"gpus[{i}].errors", g["errors"])):
                return f"whose {why}"
    mem = obj.get("mem")
    if mem is not None:
        if not isinstance(mem, dict):
            return f"with \"mem\" {_kind(mem)}, not an object of /proc/meminfo numbers"
        for k, v in mem.items():
            if v is not None and not _is_number(v):
                return f"with mem.{k} {_kind(v)}, not a number or null"
    if obj.get("errors") is not None and (why := _errors_problem("\"errors\"", obj["errors"])):
        return f"whose {why}"
    return None


def header_problems(head: dict[str, Any]) -> list[str]:
    """Drops the header's fields of the wrong shape (so the samples are not lost over them) and
    says which, in words. Missing or null fields are fine."""
    out = []
    for k in ("started_at", "interval_s"):
        v = head.get(k)
        if v is not None and not (_is_number(v) and abs(v) <= MAX_HEADER_NUMBER):
            out.append(f"line 1: header \"{k}\" is {_kind(v)}, not a finite number in range; ignored")
            head.pop(k)
    for k in ("host", "static", "readings"):
        v = head.get(k)
        if v is not None and not isinstance(v, dict):
            out.append(f"line 1: header \"{k}\" is {_kind(v)}, not an object; ignored")
            head.pop(k)
    return out


NOTE_TEXT_MAX = 4096  # a verdict summary or an event text longer than this is cut


def _note_problem(obj: dict[str, Any]) -> str | None:
    """Why a "verdict" or "event" line cannot be used, or None (long texts are cut, not refused)."""
    if not _is_number(obj.get("t")):
        return "without a finite numeric \"t\""
    if obj["type"] == "event":
        if not isinstance(obj.get("text"), str):
            return "without a \"text\" string"
        obj["text"] = obj["text"][:NOTE_TEXT_MAX]
        return None
    if not isinstance(obj.get("id"), str) or not is_status_name(obj.get("status")):
        return "without a check id and a known status"
    if obj.get("old") is not None and not is_status_name(obj["old"]):
        obj["old"] = None
    obj["summary"] = str(obj.get("summary") or "")[:NOTE_TEXT_MAX]
    return None


MAX_LINE_BYTES = MAX_HEADER_BYTES  # a longer line is skipped without being held
MAX_KEPT_SAMPLES = 43_200  # 12 h at 1 s at full resolution; a longer recording is thinned (_Thinned)
MAX_KEPT_PROCESSES = 4_320  # 12 h of process snapshots at the default 10 s
MAX_KEPT_NOTES = 10_000  # verdict and event lines: the latest are kept
MAX_PROBLEMS_KEPT = 200  # malformed lines named; the rest are counted (``lines_skipped``)


Check = Callable[[Any], "str | None"]


class _Thinned:
    """At most about ``cap`` items of a stream, evenly spread: past the cap every second kept item
    is dropped and from then on only every ``stride``-th is kept, so memory stays bounded whatever
    the file's size. Pinned items (by role: the lowest-memory moment) and the last one are always
    kept; a marked item (a segment's first sample) that is dropped passes its mark to the next kept.

    Only an item that is kept is checked (``check``: why its shape is wrong, or None): a thinned
    recording's lines off the stride cost a parse, not a check. The last is checked in result()."""

    def __init__(self, cap: int, check: Check) -> None:
        self.cap = cap
        self.check = check
        self.stride = 1
        self.seen = 0
        self.pins: dict[str, int] = {}
        self.marks: set[int] = set()
        self._kept: list[tuple[int, Any]] = []
        self._last: tuple[int, Any, int] | None = None  # (seq, item, line number), unchecked
        self._carry_mark = False

    def add(self, n: int, item: Any, roles: list[str] | tuple[str, ...] = (), mark: bool = False) -> str | None:
        """Offer line ``n``'s item; returns why it is malformed when it was checked and failed."""
        seq = self.seen
        mark = mark or self._carry_mark
        if seq % self.stride and not roles and not mark:
            self.seen += 1
            self._last = (seq, item, n)
            return None
        why = self.check(item)
        if why is not None:
            return why
        self.seen += 1
        self._last = None
        for role in roles:
            self.pins[role] = seq
        self._carry_mark = False
        if mark:
            self.marks.add(seq)
        self._kept.append((seq, item))
        if len(self._kept) > self.cap:
            self._halve()
        return None

    def _halve(self) -> None:
        self.stride *= 2
        pinned = set(self.pins.values())
        kept: list[tuple[int, Any]] = []
        for seq, item in self._kept:
            if seq % self.stride == 0 or seq in pinned:
                if self._carry_mark:
                    self.marks.add(seq)
                    self._carry_mark = False
                kept.append((seq, item))
            elif seq in self.marks:
                self.marks.discard(seq)
                self._carry_mark = True
        self._kept = kept

    def result(self) -> tuple[list[Any], list[int], tuple[int, str] | None]:
        """The kept items in order (the last one seen included when well-formed), the indexes of
        the marked, and (line number, why) when the last one was not."""
        kept, bad = self._kept, None
        if self._last is not None:
            seq, item, n = self._last
            why = self.check(item)
            if why is None:
                kept = kept + [(seq, item)]
                if self._carry_mark:
                    self.marks.add(seq)
            else:
                bad = (n, why)
        return [item for _, item in kept], [i for i, (seq, _) in enumerate(kept) if seq in self.marks], bad


def _low_roles(mem: Any, lows: dict[str, float]) -> dict[str, float]:
    """The lowest-memory moments G3's review can pick (readings_from_samples, meminfo "lowest")
    that this sample would now be, with its values (``lows`` holds the lowest so far; the caller
    updates it once the sample is kept). Pinned, they survive thinning."""
    if not isinstance(mem, dict) or not _is_number(mem.get("MemAvailable")):
        return {}
    total: Any = mem.get("MemTotal")
    free: Any = mem.get("MemFree")
    avail: float = mem["MemAvailable"]
    plausible = _plausible_mem(mem)
    free_ok = _is_number(free) and free >= 0 and (not _is_number(total) or free <= total)
    roles: dict[str, float] = {}
    for role, value, counts in (("avail", avail, True), ("avail ok", avail, plausible),
                                ("free", free, free_ok), ("free ok", free, free_ok and plausible)):
        if counts and value < lows.get(role, math.inf):  # strict: the first of equal lows, as min() picks
            roles[role] = value
    return roles


def _lines(f: Any, first: int, budget: int) -> Iterator[tuple[int, bytes | None, bool]]:
    """(line number, the line without its newline, whether one ended it), one at a time. A line
    over MAX_LINE_BYTES comes as None (its bytes skipped, never held); reading stops after
    ``budget`` bytes (a file that grows while read is not followed forever)."""
    n = first
    while budget > 0:
        line = f.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        budget -= len(line)
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n") and budget > 0:
                line = f.readline(1 << 20)
                budget -= len(line)
            yield n, None, True
        elif line.endswith(b"\n"):
            yield n, line[:-1], True
        else:
            yield n, line, False
        n += 1


def _header(p: Path, f: Any) -> dict[str, Any]:
    first = f.readline(MAX_HEADER_BYTES + 1)
    if not first.strip():
        raise RecordingError(f"{p}: empty file, not a sparktui recording")
    if len(first) > MAX_HEADER_BYTES:
        raise RecordingError(f"{p}: line 1 is longer than {MAX_HEADER_BYTES} bytes; not a sparktui recording")
    try:
        head = json.loads(first.decode("utf-8", "replace"))
    except ValueError as e:
        raise RecordingError(f"{p}: line 1 is not JSON ({e}); not a sparktui recording") from None
    except RecursionError:
        raise RecordingError(f"{p}: line 1 is JSON nested too deeply; not a sparktui recording") from None
    if not isinstance(head, dict) or head.get("kind") != RECORDING_KIND:
        raise RecordingError(f"{p}: not a sparktui recording (line 1 has no \"kind\": \"{RECORDING_KIND}\")")
    if head.get("schema") != RECORDING_SCHEMA:
        raise RecordingError(f"{p}: recording schema {_show(head.get('schema'))}; this sparktui reads schema {RECORDING_SCHEMA}")
    return head


def _show(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def read_recording(path: str | os.PathLike, tail_bytes: int | None = None) -> Recording:
    """Parse a recording, streamed: memory is bounded by the caps above (MAX_KEPT_SAMPLES...),
    not by the file's size. Raises RecordingError only when nothing usable is there.

    ``tail_bytes``: read only the header line and the last this many bytes (a restored session
    needs its end, not a whole day; memory and time stay bounded)."""
    p = Path(path)
    size = regular_size(p, MAX_RECORDING_BYTES if tail_bytes is None else sys.maxsize, RecordingError, "recording")
    try:
        with open(p, "rb") as f:
            rec = Recording(str(p), _header(p, f))
            if tail_bytes is not None and size - f.tell() > tail_bytes:
                f.seek(size - tail_bytes)
                for _ in _lines(f, 0, MAX_LINE_BYTES + 1):
                    break  # from the first whole line on
            _read_lines(rec, _lines(f, 2, MAX_RECORDING_BYTES))
    except OSError as e:
        raise RecordingError(f"{p}: cannot read: {e.strerror or e}") from None
    return rec


def _read_lines(rec: Recording, lines: Iterator[tuple[int, bytes | None, bool]]) -> None:
    """Every line after the header into ``rec``: malformed ones named and counted, samples and
    process snapshots thinned past their caps."""
    rec.problems.extend(header_problems(rec.header))
    samples = _Thinned(MAX_KEPT_SAMPLES, _sample_line_problem)
    snapshots = _Thinned(MAX_KEPT_PROCESSES, lambda obj: processes_problem(obj["data"]))
    verdicts: deque[dict[str, Any]] = deque(maxlen=MAX_KEPT_NOTES)
    events: deque[dict[str, Any]] = deque(maxlen=MAX_KEPT_NOTES)
    readings: dict[str, Any] = {}
    lows: dict[str, float] = {}
    pending_segment = False

    def skip(problem: str) -> None:
        rec.lines_skipped += 1
        if len(rec.problems) < MAX_PROBLEMS_KEPT:
            rec.problems.append(problem)
        else:
            rec.problems_unnamed += 1

    for n, raw, complete in lines:
        if raw is None:
            skip(f"line {n}: longer than {MAX_LINE_BYTES} bytes; skipped")
            continue
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8", "replace"))
        except RecursionError:
            skip(f"line {n}: JSON nested too deeply; skipped")
            continue
        except ValueError as e:
            if not complete:
                rec.torn_tail = True  # the writer was cut off mid-line: expected after a crash
                rec.problems.append(f"line {n}: torn last line ignored ({len(raw)} bytes)")
            else:
                bad = f"{e.msg} at column {e.colno}" if isinstance(e, json.JSONDecodeError) else str(e)[:80]
                skip(f"line {n}: not JSON ({bad}); skipped")
            continue
        kind = obj.get("type") if isinstance(obj, dict) else None
        if kind == "sample":
            roles = _low_roles(obj.get("mem"), lows)
            why = samples.add(n, obj, list(roles), mark=pending_segment)
            if why is not None:
                skip(f"line {n}: {why}; skipped")
                continue
            lows.update(roles)
            pending_segment = False
        elif kind == "processes" and isinstance(obj.get("data"), dict):
            why = snapshots.add(n, obj)
            if why is not None:
                skip(f"line {n}: {why}; skipped")
        elif kind == "readings" and isinstance(obj.get("readings"), dict):
            batch = obj["readings"]
            if RUN_READING in batch and RUN_READING in readings:  # the run's lines are deltas: joined
                batch = {**batch, RUN_READING: _joined_dicts(readings[RUN_READING], batch[RUN_READING])}
            readings.update(batch)  # a later reading of a probe replaces an earlier one
        elif kind == "segment":
            pending_segment = samples.seen > 0  # the next sample starts a new stretch of time
        elif kind in ("verdict", "event"):
            why = _note_problem(obj)
            if why is not None:
                skip(f"line {n}: {kind} {why}; skipped")
                continue
            (verdicts if kind == "verdict" else events).append(obj)
        elif isinstance(kind, str) and kind not in ("sample", "processes", "readings"):
            rec.skipped_types[kind] = rec.skipped_types.get(kind, 0) + 1  # a newer writer's line: not ours to judge
        else:
            skip(f"line {n}: unknown line type {_show(kind)}; skipped")
    rec.samples, rec.segment_starts, bad_sample = samples.result()
    rec.processes, _, bad_snapshot = snapshots.result()
    for n, why in sorted(b for b in (bad_sample, bad_snapshot) if b):
        skip(f"line {n}: {why}; skipped")
    for s in rec.samples:
        s.pop("type", None)
    rec.processes = [obj["data"] for obj in rec.processes]
    rec.samples_seen, rec.sample_stride = samples.seen - (bad_sample is not None), samples.stride
    rec.readings = [readings] if readings else []
    rec.verdicts, rec.events = list(verdicts), list(events)


def _sample_line_problem(obj: dict[str, Any]) -> str | None:
    why = sample_problem(obj)
    return None if why is None else f"sample {why}"


def processes_problem(data: dict[str, Any]) -> str | None:
    """Why a process snapshot does not have the declared shape (core/shapes.ProcessSnapshot), in
    words, or None: a row with ``"rss_bytes": "x"`` or a NaN age would crash the process table."""
    problems = shape_problems(data, ProcessSnapshot, "data", strict=False)
    return f"processes snapshot with {problems[0]}" if problems else None


class Replay:
    """Yields a recording's samples paced by their timestamps divided by ``speed``.

    ``speed=None`` (or 0) yields as fast as possible (tests, `check --replay`). ``stop()`` ends a
    paced replay promptly from another thread; ``pause()``/``resume()`` hold it, and the pause does
    not count against the schedule. ``monotonic`` is injectable so pacing can be tested exactly.

    Gaps are not waited out: the first sample of a continued segment follows the previous one after
    at most one sampling interval, and any other gap longer than ``max_gap_s`` (default
    ``GAP_CAP_INTERVALS`` intervals: a paused or suspended recorder) plays as ``max_gap_s``. A clock
    that went backwards plays as no gap. The samples keep their own timestamps.
    """

    def __init__(self, recording: Recording, speed: float | None = 1.0, *,
                 monotonic: Callable[[], float] = time.monotonic, max_gap_s: float | None = None) -> None:
        if speed is not None and speed < 0:
            raise ValueError("speed must be positive")
        self.recording = recording
        self.speed = speed or None
        self.monotonic = monotonic
        self.interval_s = (recording.interval_s or 1.0) * recording.sample_stride  # a thinned recording's step
        self.max_gap_s = max_gap_s if max_gap_s is not None else GAP_CAP_INTERVALS * self.interval_s
        self._stop = threading.Event()
        self._resume = threading.Event()
        self._resume.set()
        self.position = 0

    def stop(self) -> None:
        self._stop.set()
        self._resume.set()

    def pause(self) -> None:
        self._resume.clear()

    def resume(self) -> None:
        self._resume.set()

    def _wait(self, seconds: float) -> bool:
        """Wait ``seconds``; False when stopped."""
        if seconds > 0:
            self._stop.wait(seconds)
        return not self._stop.is_set()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        samples = self.recording.samples
        if not samples:
            return
        starts = set(self.recording.segment_starts)
        played = 0.0  # recording seconds played so far, gaps capped: the schedule
        t0_wall = self.monotonic()
        for i, s in enumerate(samples):
            if i:
                gap = min(max(s["t"] - samples[i - 1]["t"], 0.0),
                          self.interval_s if i in starts else self.max_gap_s)
                played += gap
            if self._stop.is_set():
                return
            if not self._resume.is_set():
                paused_at = self.monotonic()
                self._resume.wait()
                t0_wall += self.monotonic() - paused_at
                if self._stop.is_set():
                    return
            if self.speed:
                due = t0_wall + played / self.speed
                if not self._wait(due - self.monotonic()):
                    return
            self.position = i + 1
            yield s

    def processes_at(self, t: float) -> dict[str, Any] | None:
        """The latest processes snapshot taken at or before ``t``."""
        best = None
        for p in self.recording.processes:
            if (p.get("t") or 0) <= t:
                best = p
        return best


MEM_SERIES_S = 600.0  # the recent MemAvailable series a live meminfo reading carries (G3's hysteresis)


def _plausible_mem(mem: dict[str, Any]) -> bool:
    """MemAvailable within 0..MemTotal (when MemTotal was read): a sample a pick can rest on."""
    avail: Any = mem.get("MemAvailable")
    total: Any = mem.get("MemTotal")
    if not _is_number(avail) or avail < 0:
        return False
    return not _is_number(total) or avail <= total


def _lowest_memfree(samples: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The sample whose MemFree (what CUDA's free-memory call sees) was lowest, among those where it
    is within 0..MemTotal."""
    ok = [s for s in samples if _is_number(s["mem"].get("MemFree")) and s["mem"]["MemFree"] >= 0
          and (not _is_number(s["mem"].get("MemTotal")) or s["mem"]["MemFree"] <= s["mem"]["MemTotal"])]
    return min(ok, key=lambda s: s["mem"]["MemFree"]) if ok else None


def mem_series(samples: list[dict[str, Any]], seconds: float = MEM_SERIES_S) -> list[list[Any]]:
    """``[[t, MemAvailable, MemFree], ...]`` (bytes; MemFree may be None) of the samples within
    ``seconds`` of the last one that has MemAvailable, oldest first."""
    rows = [(s["t"], s["mem"]) for s in samples
            if _is_number(s.get("t")) and isinstance(s.get("mem"), dict) and _is_number(s["mem"].get("MemAvailable"))]
    if not rows:
        return []
    end = rows[-1][0]
    return [[t, m["MemAvailable"], m.get("MemFree") if _is_number(m.get("MemFree")) else None]
            for t, m in rows if t >= end - seconds]


def _meminfo_reading(all_samples: list[dict[str, Any]], source: str, meminfo_at: str, review: bool) -> Reading:
    """The meminfo reading: the latest sample (live; with the recent series for G3's hysteresis) or
    the lowest-MemAvailable moment (review; with its time and the recording's first time)."""
    with_mem = [s for s in all_samples if _is_number((s.get("mem") or {}).get("MemAvailable"))]
    if not with_mem:
        return Reading("meminfo", None, error=f"no /proc/meminfo figures in {source}", source=source, started_at=0.0)
    if meminfo_at == "lowest":
        plausible = [s for s in with_mem if _plausible_mem(s["mem"])]
        pick = min(plausible or with_mem, key=lambda s: s["mem"]["MemAvailable"])
        data: dict[str, Any] = dict(pick["mem"])
        data["t0"] = all_samples[0]["t"]
        low_free = _lowest_memfree(plausible or with_mem)
        if low_free is not None and low_free is not pick:
            data["low_free"] = {**low_free["mem"], "t": low_free["t"]}  # G3's page-cache rule at its worst
        if len(plausible) < len(with_mem):
            data["skipped_implausible"] = len(with_mem) - len(plausible)
        if review:
            data["review"] = True
        what = "lowest MemAvailable"
    else:
        pick = with_mem[-1]
        data = dict(pick["mem"])
        data["series"] = mem_series(with_mem)
        what = "latest sample"
    data["t"] = pick["t"]
    return Reading("meminfo", data, source=f"/proc/meminfo via {source} ({what}, t={pick['t']:.0f})",
                   started_at=pick["t"])


# The readings the sampler's samples (and a recording's header) carry: a recording, the exporter and
# the dashboard build them from samples (readings_from_samples), never by a probe run.
SAMPLED_READINGS = frozenset({"telemetry", "processes", "meminfo", "nvml"})


def readings_from_samples(samples: list[dict[str, Any]], *, static: dict[str, Any] | None = None,
                          static_read_at: float | None = None,
                          processes: dict[str, Any] | None = None, source: str = "recording",
                          meminfo_at: str = "latest", window_s: float | None = None,
                          interval_s: float | None = None, review: bool = False,
                          process_history: list[dict[str, Any]] | None = None) -> Readings:
    """The readings G3, G4 and G6 judge, built from samples (a recording or the live history).

    ``meminfo_at``: "latest" (dashboard: now, with ``data["series"]``, the MemAvailable of the
    last ``MEM_SERIES_S`` seconds, so G3's hysteresis is a function of the readings alone) or
    "lowest" (the moment MemAvailable was lowest over all samples, ``data["t"]`` its time and
    ``data["t0"]`` the first sample's, and ``data["low_free"]`` the figures (with "t") of the moment
    MemFree was lowest when that is another sample; samples whose MemAvailable is outside 0..MemTotal
    are not picked while a plausible one exists). ``window_s`` keeps only the trailing window for
    "telemetry"; G4's judge applies its own rolling window (``thermal.window_min``) on top.

    ``review`` (review mode, review.md): the judges get the whole recording and report its worst
    window or moment with when: ``data["review"] = True`` on the telemetry, meminfo and processes
    readings, and ``processes["history"]`` = ``process_history`` (every snapshot, in time order).
    """
    r = Readings()
    all_samples = samples
    if window_s is not None:
        samples = sample_window(samples, window_s)
    started = samples[-1]["t"] if samples else 0.0
    span = (samples[-1]["t"] - samples[0]["t"]) if len(samples) > 1 else 0.0
    tele: dict[str, Any] = {"samples": samples, "window_s": round(span, 3), "requested_window_s": window_s,
                            "interval_s": interval_s, "static": static or {}, "source": source}
    if review:
        tele["review"] = True
    r.add(Reading("telemetry", tele, error=None if samples else "no samples", source=source, started_at=started))
    r.add(_meminfo_reading(all_samples, source, meminfo_at, review))
    if static:
        err = static.get("error") if isinstance(static, dict) else None
        # static facts are read once, when sampling starts: their age is that of the first sample
        # (a recording's header time), never that of the last (G1's evidence would look fresh)
        static_at = static_read_at if static_read_at is not None else (samples[0]["t"] if samples else 0.0)
        r.add(Reading("nvml", None if err else static, error=err, source=f"NVML via {source}", started_at=static_at))
    if processes is not None:
        pdata = dict(processes)  # the recording's own snapshot stays as it was read
        if review:
            pdata["history"] = list(process_history if process_history is not None else [processes])
            pdata["review"] = True
        r.add(Reading("processes", pdata, error=processes.get("scan_error"), source=f"process view via {source}",
                      started_at=processes.get("t") or started))
    return r


def header_readings(rec: Recording) -> Readings:
    """The probe readings a recording carries for the checks its samples cannot answer: the
    header's snapshot, then any "readings" lines (a later reading of a probe replaces an earlier
    one; the run's are joined as they are read: ``joined_run``). Malformed entries are left out,
    so their checks say so."""
    r = Readings()
    raw = rec.header.get("readings")
    for batch in ([raw] if isinstance(raw, dict) else []) + list(rec.readings):
        for value in batch.values():
            try:
                r.add(Reading.from_dict(value))
            except (KeyError, TypeError, ValueError, AttributeError):
                continue
    return r


RUN_READING = "run"  # the training run (G14): written as it goes, each line holding the progress since the last
MAX_JOINED_POINTS = 200_000  # a week of one step a second; a longer run keeps its newest points


def _event_key(e: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(e.get("kind")), str(e.get("t")), str(e.get("text"))[:200])


def _joined_dicts(old: Any, new: Any) -> Any:
    """Two run readings as a recording's lines hold them, joined; a malformed one is replaced."""
    try:
        return joined_run(Reading.from_dict(old), Reading.from_dict(new)).to_dict()
    except (KeyError, TypeError, ValueError, AttributeError):
        return new


def joined_run(old: Reading[Any], new: Reading[Any]) -> Reading[Any]:
    """A recording's run readings joined: each "readings" line carries the progress seen since the
    one before (live/run.py writes deltas), so the whole run is their points in time order, and
    the rest (alive, the log, its end) is the newest line's. Points both lines hold are kept once.
    ``old``'s lists are extended in place (the reader joins hundreds of lines: no copy each time)."""
    if not isinstance(old.data, dict) or not isinstance(new.data, dict):
        return new if new.data is not None else old
    points = _list_in(old.data, "progress")
    more = [p for p in _list_in(new.data, "progress") if isinstance(p, dict)]
    last_t = max((p["t"] for p in points if isinstance(p, dict) and is_number(p.get("t"))), default=None)
    held = {(p.get("t"), p.get("step")) for p in points[-len(more):] if isinstance(p, dict)} if more else set()
    points.extend(p for p in more if (p.get("t"), p.get("step")) not in held
                  and (last_t is None or not is_number(p.get("t")) or p["t"] >= last_t))
    del points[:-MAX_JOINED_POINTS]
    events = _list_in(old.data, "events")
    known = {_event_key(e) for e in events if isinstance(e, dict)}
    events.extend(e for e in _list_in(new.data, "events") if isinstance(e, dict) and _event_key(e) not in known)
    del events[:-MAX_JOINED_POINTS]
    data = {**new.data, "progress": points, "events": events, "first": old.data.get("first") or new.data.get("first")}
    return Reading(new.probe, data, error=new.error, source=new.source, started_at=new.started_at, took_s=new.took_s)


def _list_in(data: dict[str, Any], key: str) -> list[Any]:
    """``data[key]`` when it is a list (the one kept, extended in place), else a new empty one."""
    got = data.get(key)
    return got if isinstance(got, list) else []


def readings_from_recording(rec: Recording, *, window_s: float | None = None, meminfo_at: str = "lowest",
                            review: bool = True) -> Readings:
    """Readings for `check --replay` and the dashboard once a replay has finished (one function, so
    both say the same): review mode over the whole recording (all samples for G4, every process
    snapshot for G6, the lowest-MemAvailable moment for G3, each judge reporting the worst window or
    moment with when), plus whatever the header and "readings" lines carry for the other checks
    (the samples win where both have a reading)."""
    source = f"recording {os.path.basename(rec.path)}"
    history = sorted(rec.processes, key=lambda p: p.get("t") or 0.0)
    head_t = rec.header.get("started_at")
    r = readings_from_samples(rec.samples, static=rec.header.get("static") or None,
                              static_read_at=head_t if _is_number(head_t) else None,
                              processes=history[-1] if history else None, source=source,
                              meminfo_at=meminfo_at, window_s=window_s, interval_s=rec.header.get("interval_s"),
                              review=review, process_history=history)
    for name, reading in header_readings(rec).items():
        if name not in r:
            r.add(reading)
    return r


def replay_ids(readings: Readings, registry: Mapping[str, Any]) -> list[str]:
    """The checks a recording can answer: those whose probes all have a reading in it."""
    return [gid for gid, g in registry.items() if g.probes and all(p in readings for p in g.probes)]
