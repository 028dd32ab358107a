"""The kernel log followed live while the dashboard runs (never in a replay).

``KernelWatch`` starts ``probes.kernel_log.follow`` (its own thread, a blocking wait: no polling)
and hands each event to ``on_event`` (the dashboard logs it in the events view, notifies at once,
rings with --bell) and keeps it: the checks that follow the kernel log (``Feed.FOLLOWED``) are
judged on the boot-time reading merged with the events seen live (``merged_reading``; the runner
merges a fresh boot-time reading through ``merge``). A follower that cannot start or read says so
once through ``on_error``; its checks then stay as judged from the boot-time reading.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.core.xids import AER_SEVERITIES, MAX_KEPT, EventKeeper
from sparktui.gotchas.g11_kernel_log import KINDS, is_fail, is_warn, describe

MAX_LIVE = MAX_KEPT  # live events kept for the re-judge, per class (EventKeeper: every one is counted)


def status_of(ev: Mapping[str, Any]) -> Status:
    """What the event alone makes G11: fail (Xid, NV_ERR_NO_MEMORY, OOM kill, fatal AER, lockup),
    warn (non-fatal AER), ok (corrected AER: shown, not judged)."""
    return Status.FAIL if is_fail(ev) else Status.WARN if is_warn(ev) else Status.OK


def merged_reading(boot: Reading[Any] | None, live: list[dict[str, Any]], live_lines: int,
                   keeper: EventKeeper | None = None) -> Reading[Any]:
    """The kernel_log reading G11 is re-judged on: the boot-time reading's events plus those seen
    live. Without a readable boot-time reading, the live events alone (a follower that read lines
    read the log), with the boot-time failure kept as a note. ``keeper`` (the live events' counts,
    kept or not) decides the counts: 500 corrected AER after an Xid do not make it ok again."""
    if keeper is None:
        keeper = EventKeeper()
        for ev in live:
            keeper.add(ev)
    counts = {k: keeper.counts.get(k, 0) for k in KINDS}
    severities = {s: keeper.severities.get(s, 0) for s in AER_SEVERITIES}
    not_kept = keeper.not_kept
    bd = boot.data if boot is not None and isinstance(boot.data, Mapping) else None
    if bd is not None:
        events = list(bd.get("events") or []) + live
        old = bd.get("counts") if isinstance(bd.get("counts"), Mapping) else {}
        for k in KINDS:
            n = old.get(k) if isinstance(old, Mapping) else None
            counts[k] += n if isinstance(n, int) and not isinstance(n, bool) else 0
        old_sev = bd.get("severities")
        for sv in AER_SEVERITIES:
            n = old_sev.get(sv) if isinstance(old_sev, Mapping) else None
            severities[sv] += n if isinstance(n, int) and not isinstance(n, bool) else 0
        n = bd.get("not_kept")
        not_kept += n if isinstance(n, int) and not isinstance(n, bool) else 0
        lines = bd.get("lines_read")
        lines = (lines if isinstance(lines, int) and not isinstance(lines, bool) else 0) + live_lines
        data = {**bd, "events": events, "counts": counts, "severities": severities, "not_kept": not_kept,
                "truncated": not_kept > 0 or bool(bd.get("truncated")), "lines_read": lines,
                "note": "; ".join(x for x in (bd.get("note"), f"{len(live)} event(s) seen live since") if x)}
        return Reading("kernel_log", data, source=f"{boot.source if boot else ''} + live follower".strip(" +"))
    why = (boot.error if boot is not None else None) or "no boot-time reading yet"
    data = {"source": "live follower", "boot_id": None, "lines_read": max(live_lines, len(live)), "events": list(live),
            "truncated": not_kept > 0, "counts": counts, "severities": severities, "not_kept": not_kept,
            "note": f"events seen live only; the boot-time log: {why}"}
    return Reading("kernel_log", data, source="live follower")


class KernelWatch:
    """Owns the kernel-log follower. ``path`` is /dev/kmsg unless a test points it elsewhere.
    ``on_event`` and ``on_error`` are called from the follower's thread; ``add``, ``merge`` and
    ``reading`` may be called from any thread (a lock keeps the events whole)."""

    reading_name = "kernel_log"  # the probe whose reading this follows

    def __init__(self, on_event: Callable[[dict[str, Any]], None] | None = None,
                 on_error: Callable[[str], None] | None = None, path: str | None = None, enabled: bool = True) -> None:
        self.on_event = on_event or (lambda ev: None)
        self.on_error = on_error or (lambda why: None)
        self.path, self.enabled = path, enabled
        self.follower: Any = None
        self.keeper = EventKeeper()  # the live events: bounded per class, every one counted
        self.live: list[dict[str, Any]] = self.keeper.events
        self.boot: Reading[Any] | None = None
        self.error: str | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        if not self.enabled:
            return
        from sparktui.probes import kernel_log

        try:
            self.follower = kernel_log.follow(self._on_event, self._on_error,
                                              **({"path": self.path} if self.path else {}))
        except OSError as e:
            self._on_error(str(e))

    def stop(self) -> None:
        if self.follower is not None:
            self.follower.stop()

    # called from the follower's thread
    def _on_event(self, ev: dict[str, Any]) -> None:
        self.on_event(dict(ev))

    def _on_error(self, why: str) -> None:
        self.on_error(why)

    def saw_boot_reading(self, r: Reading[Any]) -> bool:
        """A fresh boot-time reading (it holds what was logged before it was taken): live events
        from before it are dropped, not counted twice. True when live events remain to merge."""
        with self._lock:
            self.boot = r
            self.keeper = self.keeper.since(r.started_at)
            self.live = self.keeper.events
            return bool(self.live) or self.keeper.not_kept > 0

    def merge(self, r: Reading[Any]) -> Reading[Any]:
        """The runner's hook (runner.Merger): a fresh boot-time reading, merged with the live
        events seen since it was taken; the reading itself when none are (or nothing follows)."""
        if not self.enabled:
            return r
        return self.reading() if self.saw_boot_reading(r) else r

    def add(self, ev: dict[str, Any]) -> None:
        if not isinstance(ev.get("t"), (int, float)):
            ev["t"] = time.time()
        with self._lock:
            self.keeper.add(ev)

    def reading(self) -> Reading[Any]:
        lines = getattr(self.follower, "lines", 0) if self.follower is not None else 0
        with self._lock:
            return merged_reading(self.boot, list(self.live), lines if isinstance(lines, int) else 0, self.keeper)

    def text(self, ev: Mapping[str, Any]) -> str:
        return f"kernel log: {describe(ev)}"


def victim_seen(processes: Mapping[str, Any] | None, pid: Any) -> dict[str, Any] | None:
    """The OOM victim as the last process scan saw it (kind, server, command), or None when that
    scan did not hold it: the one G6 knew as the training job or a server."""
    rows = (processes or {}).get("rows") if isinstance(processes, Mapping) else None
    if not isinstance(rows, list) or pid is None:
        return None
    for row in rows:
        if isinstance(row, Mapping) and row.get("pid") == pid:
            return {"kind": row.get("kind"), "server": row.get("server"), "command": row.get("command")}
    return None
