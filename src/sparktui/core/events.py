"""Verdict changes over a session: what got worse, and when. Bounded, pure, UI-agnostic.

Someone returning after hours should see what happened and when; the dashboard shows this log
and raises a notification (and optionally a bell) for each change for the worse.

Three rules keep that news and not noise:
- "worse" is measured against the last status that was actually known: unknown (a cancelled
  check, a network blip) is a gap, so warn -> unknown -> warn is not news, and a session's first
  known status is shown by the checklist, not announced;
- a check that flips back and forth does not fill the log: a repeat of the same transition
  within ``flap_window_s`` bumps a count on its entry instead of adding one;
- ``should_alert`` rings once per check per ``alert_every_s``, unless the status is worse than
  anything announced for that check in that time (warn then fail always gets through).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from typing import Iterator

from sparktui.core.verdict import Status, Verdict

KNOWN = (Status.OK, Status.WARN, Status.FAIL)


@dataclass(frozen=True)
class Change:
    t: float
    id: str
    old: Status | None  # None: the first verdict of the session
    new: Status
    summary: str
    baseline: Status | None = None  # the last known (ok/warn/fail) status before this change
    repeats: int = 1  # the same transition seen this many times (a flapping check)
    last_t: float | None = None  # when it was last seen, if repeated
    kind: str = "verdict"  # "verdict": a check's status changed; "kernel": a kernel log event (G11 live)

    @property
    def worse(self) -> bool:
        """To warn/fail from a better known status. A first known status is not news: the
        checklist already shows it."""
        if self.new not in (Status.WARN, Status.FAIL) or self.baseline is None:
            return False
        return self.new.severity > self.baseline.severity

    def line(self) -> str:
        old = self.old.value if self.old else "—"
        times = f" (x{self.repeats})" if self.repeats > 1 else ""
        return f"{self.id}: {old} → {self.new.value}{times}: {self.summary}"


class EventLog:
    """Remembers the last verdict per check and logs status changes (bounded)."""

    def __init__(self, maxlen: int = 500, flap_window_s: float = 1800.0, alert_every_s: float = 600.0) -> None:
        self.changes: deque[Change] = deque(maxlen=maxlen)
        self.last: dict[str, Verdict] = {}
        self.known: dict[str, Status] = {}  # last ok/warn/fail per check
        self.flap_window_s, self.alert_every_s = flap_window_s, alert_every_s
        self._alerted: dict[str, tuple[float, Status]] = {}  # id -> (when, status) of the last alert
        self.worse_count = 0  # changes for the worse so far (the header counts those not yet looked at)
        self.version = 0  # bumped by every write: a view of the log redraws when it moved

    def observe(self, v: Verdict, t: float) -> Change | None:
        """Record ``v``; returns the Change when its status differs from the previous one."""
        prev = self.last.get(v.id)
        self.last[v.id] = v
        baseline = self.known.get(v.id)
        if v.status in KNOWN:
            self.known[v.id] = v.status
        if prev is not None and prev.status is v.status:
            return None
        ch = Change(t=t, id=v.id, old=prev.status if prev else None, new=v.status, summary=v.summary, baseline=baseline)
        self._append(ch)
        self.worse_count += ch.worse
        return ch

    def kernel_event(self, t: float, status: Status, summary: str, id: str = "G11") -> Change:
        """A kernel log event seen live (an Xid, an OOM kill...): one row of its own whose summary is
        the event, never merged with a verdict change nor counted as one (the G11 re-judge that
        follows it is)."""
        return self.add(Change(t=t, id=id, old=None, new=status, summary=summary, kind="kernel"))

    def add(self, ch: Change) -> Change:
        """A row of its own (a kernel event, the run's story, a restored session's gap)."""
        self.changes.append(ch)
        self.version += 1
        return ch

    def replace_last(self, ch: Change) -> None:
        """The newest row said again (its words, not its place)."""
        self.changes[-1] = ch
        self.version += 1

    def _append(self, ch: Change) -> None:
        self.version += 1
        for i in range(len(self.changes) - 1, -1, -1):
            e = self.changes[i]
            if e.kind != "verdict":
                continue
            if ch.t - (e.last_t or e.t) > self.flap_window_s:
                break
            if e.id == ch.id and e.old is ch.old and e.new is ch.new:
                del self.changes[i]  # move the entry to the end, counted
                self.changes.append(replace(e, repeats=e.repeats + 1, last_t=ch.t, summary=ch.summary))
                return
        self.changes.append(ch)

    def should_alert(self, ch: Change) -> bool:
        """Announce (notify, bell) this change? Only news, and not the same news every minute."""
        if not ch.worse:
            return False
        last = self._alerted.get(ch.id)
        if last is not None and ch.t - last[0] < self.alert_every_s and ch.new.severity <= last[1].severity:
            return False
        self._alerted[ch.id] = (ch.t, ch.new)
        return True

    def __iter__(self) -> Iterator[Change]:
        return iter(self.changes)

    def __len__(self) -> int:
        return len(self.changes)
