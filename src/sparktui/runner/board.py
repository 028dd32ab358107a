"""Each check's schedule, apart from any widget: its verdict, whether it is running, and when it
is next due. The dashboard asks the board what to run; the board never runs anything itself."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from sparktui.core.verdict import Verdict
from sparktui.gotchas import REGISTRY, Gotcha
from sparktui.gotchas.base import Feed

ABORTED_RETRY_S = 600.0  # a check without a cadence whose run was cut short: tried again after this


@dataclass
class CheckState:
    gotcha: Gotcha
    verdict: Verdict | None = None
    running_since: float | None = None  # monotonic time, None when idle
    next_due: float = 0.0  # monotonic time of the next periodic run
    cancel: threading.Event | None = None
    runs: int = 0


@dataclass
class Board:
    states: dict[str, CheckState] = field(default_factory=lambda: {g.id: CheckState(g) for g in REGISTRY.values()})

    def __getitem__(self, gid: str) -> CheckState:
        return self.states[gid]

    def due(self, now: float, include: tuple[str, ...] | None = None) -> list[str]:
        """Probe-read checks whose cadence has come round and that are not running; the
        telemetry-fed ones are judged from the sampler instead. A check fed on request is listed
        once: its judge reads the kept result; the measurement itself is never automatic."""
        out = []
        for gid, st in self.states.items():
            g = st.gotcha
            if g.feed is Feed.TELEMETRY or st.running_since is not None:
                continue
            if include is not None and gid not in include:
                continue
            if st.runs == 0 or (g.cadence_s is not None and now >= st.next_due):
                out.append(gid)
        return out

    def start(self, ids: list[str], now: float) -> threading.Event:
        cancel = threading.Event()
        for gid in ids:
            st = self.states[gid]
            st.running_since, st.cancel = now, cancel
        return cancel

    def finish(self, v: Verdict, now: float) -> None:
        st = self.states[v.id]
        st.verdict, st.running_since, st.cancel = v, None, None
        st.runs += 1
        cadence = st.gotcha.cadence_s
        st.next_due = now + cadence if cadence else float("inf")

    def abort(self, gid: str, now: float) -> None:
        st = self.states[gid]
        st.running_since, st.cancel = None, None
        st.runs += 1
        st.next_due = now + (st.gotcha.cadence_s or ABORTED_RETRY_S)

    def running(self) -> list[str]:
        return [gid for gid, st in self.states.items() if st.running_since is not None]

    def marked(self) -> tuple[frozenset[int], str]:
        """Every pid the latest verdicts mark (``Verdict.marks``), and the ids of those checks."""
        by = [st.verdict for st in self.states.values() if st.verdict is not None and st.verdict.marks]
        return frozenset().union(*(v.marks for v in by)), ", ".join(v.id for v in by)
