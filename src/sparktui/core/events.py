"""Verdict changes over a session: what got worse, and when. Bounded, pure, UI-agnostic.

Someone returning after hours should see what happened and when; the dashboard shows this log
and raises a notification (and optionally a bell) for each change for the worse.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Iterator

from sparktui.core.verdict import Status, Verdict


@dataclass(frozen=True)
class Change:
    t: float
    id: str
    old: Status | None  # None: the first verdict of the session
    new: Status
    summary: str

    @property
    def worse(self) -> bool:
        """ok/unknown/skip -> warn/fail, or warn -> fail. A session's first verdict is logged but is
        not news: the checklist already shows it."""
        if self.new not in (Status.WARN, Status.FAIL) or self.old is None:
            return False
        return self.new.severity > self.old.severity

    def line(self) -> str:
        old = self.old.value if self.old else "—"
        return f"{self.id}: {old} → {self.new.value}: {self.summary}"


class EventLog:
    """Remembers the last verdict per check and logs status changes (bounded)."""

    def __init__(self, maxlen: int = 500) -> None:
        self.changes: deque[Change] = deque(maxlen=maxlen)
        self.last: dict[str, Verdict] = {}

    def observe(self, v: Verdict, t: float) -> Change | None:
        """Record ``v``; returns the Change when its status differs from the previous one."""
        prev = self.last.get(v.id)
        self.last[v.id] = v
        if prev is not None and prev.status is v.status:
            return None
        ch = Change(t=t, id=v.id, old=prev.status if prev else None, new=v.status, summary=v.summary)
        self.changes.append(ch)
        return ch

    def __iter__(self) -> Iterator[Change]:
        return iter(self.changes)

    def __len__(self) -> int:
        return len(self.changes)
