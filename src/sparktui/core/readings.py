"""Probe readings: the plain data a probe returns, and the snapshot that stores them.

A probe never raises past its boundary: it returns a ``Reading`` whose ``error`` says what went
wrong. Judges get a ``Readings`` mapping; a snapshot is the same mapping written to JSON, so a
judge cannot tell a live machine from a recording of one.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

SNAPSHOT_SCHEMA = 1


@dataclass(frozen=True)
class Reading:
    probe: str
    data: dict[str, Any] | None  # None when the probe could not read anything
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
    def from_dict(cls, d: Mapping[str, Any]) -> "Reading":
        return cls(
            probe=str(d["probe"]),
            data=d.get("data"),
            error=d.get("error"),
            source=str(d.get("source", "")),
            started_at=float(d.get("started_at") or 0.0),
            took_s=float(d.get("took_s") or 0.0),
        )


class Readings(Mapping[str, Reading]):
    """Probe name -> Reading. Missing probes read as a Reading with an error, never a KeyError."""

    def __init__(self, readings: Mapping[str, Reading] | None = None) -> None:
        self._r: dict[str, Reading] = dict(readings or {})

    def __getitem__(self, name: str) -> Reading:
        return self._r[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._r)

    def __len__(self) -> int:
        return len(self._r)

    def get_reading(self, name: str) -> Reading:
        r = self._r.get(name)
        if r is None:
            return Reading(probe=name, data=None, error=f"probe '{name}' was not run", started_at=0.0)
        return r

    def data(self, name: str) -> dict[str, Any] | None:
        return self.get_reading(name).data

    def add(self, reading: Reading) -> None:
        self._r[reading.probe] = reading

    def to_dict(self) -> dict[str, Any]:
        return {k: v.to_dict() for k, v in self._r.items()}


class SnapshotError(ValueError):
    """A snapshot file that cannot be used; the message says why."""


def write_snapshot(path: Path | str, readings: Readings, host: dict[str, Any], version: str) -> None:
    doc = {
        "schema": SNAPSHOT_SCHEMA,
        "kind": "sparktui-snapshot",
        "sparktui_version": version,
        "taken_at": time.time(),
        "host": host,
        "readings": readings.to_dict(),
    }
    text = json.dumps(doc, indent=2, sort_keys=True, default=str)
    Path(path).write_text(text + "\n", encoding="utf-8")


def read_snapshot(path: Path | str) -> tuple[Readings, dict[str, Any], dict[str, Any]]:
    """Returns (readings, host, whole document). Raises SnapshotError with a clear message."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SnapshotError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SnapshotError(f"{p}: cannot read: {e}") from None
    except json.JSONDecodeError as e:
        raise SnapshotError(f"{p}: not JSON (line {e.lineno}, column {e.colno}: {e.msg})") from None
    if not isinstance(doc, dict) or doc.get("kind") != "sparktui-snapshot":
        raise SnapshotError(f"{p}: not a sparktui snapshot (no \"kind\": \"sparktui-snapshot\")")
    schema = doc.get("schema")
    if schema != SNAPSHOT_SCHEMA:
        raise SnapshotError(f"{p}: snapshot schema {schema!r}; this sparktui reads schema {SNAPSHOT_SCHEMA}")
    raw = doc.get("readings")
    if not isinstance(raw, dict):
        raise SnapshotError(f"{p}: \"readings\" must be an object")
    readings = Readings()
    for name, value in raw.items():
        if not isinstance(value, dict) or "probe" not in value:
            raise SnapshotError(f"{p}: reading {name!r} is malformed")
        try:
            readings.add(Reading.from_dict(value))
        except (TypeError, ValueError) as e:  # "started_at": "yesterday"
            raise SnapshotError(f"{p}: reading {name!r} is malformed: {e}") from None
    host = doc.get("host") if isinstance(doc.get("host"), dict) else {}
    return readings, host, doc
