"""The checklist's state, apart from any widget: each gotcha's verdict, whether it is running, and
when it is next due. The app asks the board what to run; the board never runs anything itself."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from sparktui.core.verdict import Verdict
from sparktui.gotchas import REGISTRY, Gotcha

# Checks judged from the live sampler (cheap, no probe run), and how often they are re-judged.
TELEMETRY_CHECKS = ("G3", "G4", "G6")
TELEMETRY_REJUDGE_S = 5.0


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
        """Probe-driven checks whose cadence has come round and that are not running. G5 is listed
        once: its judge only reads the kept result; the measurement itself is never automatic."""
        out = []
        for gid, st in self.states.items():
            g = st.gotcha
            if gid in TELEMETRY_CHECKS or st.running_since is not None:
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
        st.next_due = now + (st.gotcha.cadence_s or 600.0)

    def running(self) -> list[str]:
        return [gid for gid, st in self.states.items() if st.running_since is not None]
