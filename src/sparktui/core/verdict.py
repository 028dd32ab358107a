"""The verdict model: what a check concluded and the evidence it was based on.

A verdict never lies: ``ok`` only when the evidence was actually seen; what could not be seen is
``unknown`` with the reason. Every verdict carries its evidence.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any


class Status(str, enum.Enum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"
    UNKNOWN = "unknown"  # could not be determined; the summary says why
    SKIP = "skip"  # not applicable here, or intrusive and not run

    @property
    def severity(self) -> int:
        """Order used for "worst of": fail > warn > unknown > ok/skip."""
        return _SEVERITY[self]

    @property
    def glyph(self) -> str:
        return _GLYPH[self]


_SEVERITY = {Status.OK: 0, Status.SKIP: 0, Status.UNKNOWN: 1, Status.WARN: 2, Status.FAIL: 3}
_GLYPH = {Status.OK: "✔", Status.WARN: "▲", Status.FAIL: "✘", Status.UNKNOWN: "?", Status.SKIP: "–"}


@dataclass(frozen=True)
class Evidence:
    """One thing a judge looked at: what was read, where from, and the value seen."""

    what: str
    source: str
    value: Any

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "source": self.source, "value": self.value}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Evidence":
        return cls(what=d["what"], source=d["source"], value=d.get("value"))


@dataclass(frozen=True)
class Verdict:
    """A check's conclusion. ``measured_at``/``took_s`` are filled in by the runner."""

    id: str
    status: Status
    summary: str
    evidence: tuple[Evidence, ...] = ()
    fix: str = ""
    details: tuple[str, ...] = ()  # extra lines (e.g. G10's file:line list)
    measured_at: float | None = None  # unix time of the readings judged
    took_s: float | None = None  # how long the readings took to gather
    # the pids the dashboard marks in its process table (the runner fills it from the check's
    # declared ``marks``); derived from the verdict, so not written to JSON
    marks: frozenset[int] = field(default=frozenset(), compare=False)

    def with_timing(self, measured_at: float | None, took_s: float | None) -> "Verdict":
        return replace(self, measured_at=measured_at, took_s=took_s)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status.value,
            "summary": self.summary,
            "evidence": [e.to_dict() for e in self.evidence],
            "fix": self.fix,
            "details": list(self.details),
            "measured_at": self.measured_at,
            "took_s": self.took_s,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Verdict":
        return cls(
            id=d["id"],
            status=Status(d["status"]),
            summary=d["summary"],
            evidence=tuple(Evidence.from_dict(e) for e in d.get("evidence", ())),
            fix=d.get("fix", ""),
            details=tuple(d.get("details", ())),
            measured_at=d.get("measured_at"),
            took_s=d.get("took_s"),
        )


def worst(statuses: list[Status] | tuple[Status, ...]) -> Status:
    """The most severe status (fail > warn > unknown > ok); ``ok`` for an empty list."""
    result = Status.OK
    for s in statuses:
        if s.severity > result.severity:
            result = s
    return result


class EvidenceList:
    """Small builder so judges read as a list of observations."""

    def __init__(self) -> None:
        self.items: list[Evidence] = []

    def add(self, what: str, source: str, value: Any) -> Any:
        self.items.append(Evidence(what, source, value))
        return value

    def __iter__(self):
        return iter(self.items)

    def tuple(self) -> tuple[Evidence, ...]:
        return tuple(self.items)
