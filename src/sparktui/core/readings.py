"""Probe readings: the plain data a probe returns, and the snapshot that stores them.

A probe never raises past its boundary: it returns a ``Reading`` whose ``error`` says what went
wrong. Judges get a ``Readings`` mapping; a snapshot is the same mapping written to JSON, so a
judge cannot tell a live machine from a recording of one.

Each probe's data has one declared shape (core/shapes.py); ``Readings.get_reading(MEMINFO)``
and ``Readings.data(MEMINFO)``, read through a typed key from core/shapes.py, are typed with it,
so mypy checks a judge's reads against what the probe declares (a plain name reads as ``Any``).
A failed probe is ``data is None`` with ``error``, never empty data.
"""

from __future__ import annotations

import json
import math
import os
import stat
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, Iterator, Mapping, TypeVar, overload

from sparktui.core.atomic import write_text_atomic
from sparktui.core.shapes import SHAPES, Key
from sparktui.core.validate import fits, shape_problems

SNAPSHOT_SCHEMA = 1
UNUSABLE = "unusable data"  # how a reading's error starts when its data left the declared shape (``checked``)

D = TypeVar("D", bound=Mapping[str, Any])  # the probe's data shape (core/shapes.py)


@dataclass(frozen=True)
class Reading(Generic[D]):
    probe: str
    data: D | None  # None when the probe could not read anything (a failure, never empty data)
    error: str | None = None  # why data is missing or partial, in words
    source: str = ""  # where it was read from (file, library, command)
    started_at: float = field(default_factory=time.time)
    took_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.data is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "probe": self.probe,
            "data": self.data,
            "error": self.error,
            "source": self.source,
            "started_at": self.started_at,
            "took_s": self.took_s,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Reading[Any]":
        """Raises ValueError (or TypeError/KeyError) when a field has the wrong shape: ``data``
        must be an object or null, ``error`` a string or null, the times finite numbers."""
        data: Any = d.get("data")  # checked below; its keys are the probe's (core/shapes.py)
        error = d.get("error")
        if data is not None and not isinstance(data, dict):
            raise ValueError(f"\"data\" must be an object or null, not {type(data).__name__}")
        if error is not None and not isinstance(error, str):
            raise ValueError(f"\"error\" must be a string or null, not {type(error).__name__}")
        return checked(Reading(
            probe=str(d["probe"]),
            data=data,
            error=error,
            source=str(d.get("source", "")),
            started_at=_finite(d.get("started_at"), "started_at"),
            took_s=_finite(d.get("took_s"), "took_s"),
        ))


def checked(reading: Reading[Any]) -> Reading[Any]:
    """``reading`` itself when its data holds its probe's declared shape (core/shapes.py); else the
    reading failed, its error naming the first field that does not ("field X: expected int, got
    str"): a judge would crash on such data or build a verdict on it. Stored readings are checked
    where they are read (``from_dict``), and every judge's readings again (gotchas/base.py),
    whatever made them (a live probe, a recording's samples)."""
    with _checked_lock:
        hit = _checked.get(id(reading))
    if hit is not None and hit[0] is reading:
        return hit[1]
    misfit = _misfit(reading.probe, reading.data)
    out = reading if not misfit else replace(reading, data=None,
                                             error=misfit + (f"; {reading.error}" if reading.error else ""))
    with _checked_lock:
        if len(_checked) >= CHECKED_KEPT:
            _checked.pop(next(iter(_checked)))
        _checked[id(reading)] = (reading, out)  # the reading itself kept: its id is not reused meanwhile
    return out


# The telemetry judges of one window share its readings (a 5-minute window: 300 samples): each is
# checked once, not once per judge (that was a tenth of the live dashboard's steady CPU). Readings
# are frozen and their data is never changed after it was read.
CHECKED_KEPT = 32
_checked: dict[int, tuple[Reading[Any], Reading[Any]]] = {}
_checked_lock = threading.Lock()


def _misfit(probe: str, data: Mapping[str, Any] | None) -> str | None:
    """Why stored ``data`` does not hold ``probe``'s declared shape (core/shapes.py), or None."""
    if data is None or probe not in SHAPES or fits(data, SHAPES[probe]):
        return None
    found = shape_problems(data, SHAPES[probe], probe, strict=False)
    if not found:
        return None
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return f"{UNUSABLE}: field {found[0]}{more}"


def _finite(v: Any, what: str) -> float:
    """A JSON number as a finite float (null/missing: 0). Huge integers, NaN, Infinity and
    strings raise ValueError."""
    if v is None:
        return 0.0
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise ValueError(f"\"{what}\" must be a number, not {type(v).__name__}")
    try:
        f = float(v)
    except OverflowError:
        raise ValueError(f"\"{what}\" is out of range") from None
    if not math.isfinite(f):
        raise ValueError(f"\"{what}\" must be a finite number")
    return f


MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024  # a real snapshot is well under 1 MiB


def regular_size(path: Path, limit: int, error: type[Exception], what: str) -> int:
    """The size of ``path``, refusing what is not a regular file (a FIFO or a device would block
    or never end) and files over ``limit`` bytes, with ``error(message)``: check before opening."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{path}: is a folder, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{path}: not a regular file (a pipe or a device?); give a {what} file")
    if st.st_size > limit:
        raise error(f"{path}: {st.st_size} bytes, more than a {what} can be ({limit} bytes)")
    return st.st_size


def read_regular(path: Path, limit: int, error: type[Exception], what: str) -> bytes:
    """The bytes of ``path`` (see regular_size: only a regular file of at most ``limit`` bytes)."""
    size = regular_size(path, limit, error, what)
    try:
        with open(path, "rb") as f:
            raw = f.read(size + 1)  # sized by the file: read(n) allocates n bytes first (1 GiB for a recording)
            if len(raw) > size:  # it grew since the stat: the rest, still bounded
                raw += f.read(limit + 1 - len(raw))
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror or e}") from None
    if len(raw) > limit:
        raise error(f"{path}: more than a {what} can be ({limit} bytes)")
    return raw


class Readings(Mapping[str, "Reading[Any]"]):
    """Probe name -> Reading. Missing probes read as a Reading with an error, never a KeyError."""

    def __init__(self, readings: Mapping[str, Reading[Any]] | None = None) -> None:
        self._r: dict[str, Reading[Any]] = dict(readings or {})

    def __getitem__(self, name: str) -> Reading[Any]:
        return self._r[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._r)

    def __len__(self) -> int:
        return len(self._r)

    @overload
    def get_reading(self, key: Key[D]) -> Reading[D]: ...
    @overload
    def get_reading(self, key: str) -> Reading[Any]: ...

    def get_reading(self, key: Key[Any] | str) -> Reading[Any]:
        """The reading under ``key`` (a typed key from core/shapes.py, or its name); a probe
        that was not run reads as a failed Reading, never a KeyError."""
        name = key if isinstance(key, str) else key.name
        r = self._r.get(name)
        if r is None:
            return Reading(probe=name, data=None, error=f"probe '{name}' was not run", started_at=0.0)
        return r

    @overload
    def data(self, key: Key[D]) -> D | None: ...
    @overload
    def data(self, key: str) -> Mapping[str, Any] | None: ...

    def data(self, key: Key[Any] | str) -> Any:
        """The probe's data in its declared shape (core/shapes.py), or None when it failed."""
        return self.get_reading(key).data

    def add(self, reading: Reading[Any]) -> None:
        self._r[reading.probe] = reading

    def to_dict(self) -> dict[str, Any]:
        return {k: v.to_dict() for k, v in self._r.items()}


class SnapshotError(ValueError):
    """A snapshot file that cannot be used; the message says why."""


def snapshot_text(readings: Readings, host: dict[str, Any], version: str) -> str:
    """The snapshot document as written to a file or stdout."""
    doc = {
        "schema": SNAPSHOT_SCHEMA,
        "kind": "sparktui-snapshot",
        "sparktui_version": version,
        "taken_at": time.time(),
        "host": host,
        "readings": readings.to_dict(),
    }
    return json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n"


def write_snapshot(path: Path | str, readings: Readings, host: dict[str, Any], version: str) -> None:
    """Atomically (core/atomic.py): a failed write leaves the earlier snapshot whole."""
    write_text_atomic(path, snapshot_text(readings, host, version))


def read_snapshot(path: Path | str) -> tuple[Readings, dict[str, Any], dict[str, Any]]:
    """Returns (readings, host, whole document). Raises SnapshotError with a clear message."""
    p = Path(path)
    raw = read_regular(p, MAX_SNAPSHOT_BYTES, SnapshotError, "snapshot")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise SnapshotError(f"{p}: cannot read: {e}") from None
    except json.JSONDecodeError as e:
        raise SnapshotError(f"{p}: not JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    except RecursionError:
        raise SnapshotError(f"{p}: JSON nested too deeply to be a sparktui snapshot") from None
    if not isinstance(doc, dict) or doc.get("kind") != "sparktui-snapshot":
        raise SnapshotError(f"{p}: not a sparktui snapshot (no \"kind\": \"sparktui-snapshot\")")
    schema = doc.get("schema")
    if schema != SNAPSHOT_SCHEMA:
        raise SnapshotError(f"{p}: snapshot schema {schema!r}; this sparktui reads schema {SNAPSHOT_SCHEMA}")
    stored = doc.get("readings")
    if not isinstance(stored, dict):
        raise SnapshotError(f"{p}: \"readings\" must be an object")
    readings = Readings()
    for name, value in stored.items():
        if not isinstance(value, dict) or "probe" not in value:
            raise SnapshotError(f"{p}: reading {name!r} is malformed")
        try:
            readings.add(Reading.from_dict(value))
        except (TypeError, ValueError, KeyError) as e:  # "started_at": "yesterday"
            raise SnapshotError(f"{p}: reading {name!r} is malformed: {e}") from None
    host = doc.get("host")
    if not isinstance(host, dict):
        host = {}
    return readings, host, doc
