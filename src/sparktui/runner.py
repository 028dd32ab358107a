"""Collect the readings the chosen gotchas need (in parallel, each probe once), then judge them.

The runner is the only place that joins probes and judges; the CLI and the dashboard both use it.
"""

from __future__ import annotations

import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Container, Iterable, Iterator

from sparktui import probes
from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Evidence, Status, Verdict
from sparktui.gotchas import REGISTRY, Gotcha


# Probes a check is judged without, then judged again with once they are in: G8 reads the G10 scan
# only for suggestions (the playbooks its launch scripts point at), so a slow scan must not hold G8.
ENRICHING: dict[str, frozenset[str]] = {"G8": frozenset({"tpscan"})}


def can_judge(g: Gotcha, have: Container[str]) -> bool:
    """Every probe the check cannot be judged without is in ``have``."""
    extra = ENRICHING.get(g.id, frozenset())
    return all(p in have for p in g.probes if p not in extra)


def needed_probes(gotchas: Iterable[Gotcha]) -> list[str]:
    seen: dict[str, None] = {}
    for g in gotchas:
        for p in g.probes:
            seen.setdefault(p, None)
    return list(seen)


def collect(names: Iterable[str], cfg: Config, max_workers: int = 8,
            cancel: threading.Event | None = None) -> Readings:
    """Run the named probes in parallel; never raises. ``cancel`` stops subprocess probes."""
    names = list(dict.fromkeys(names))
    got = {r.probe: r for r in collect_iter(names, cfg, max_workers, cancel)}
    readings = Readings()
    for n in [*names, *(p for p in got if p not in names)]:  # in the order asked, whatever order they finished in
        if n in got:
            readings.add(got[n])
    return readings


def collect_iter(names: Iterable[str], cfg: Config, max_workers: int = 8,
                 cancel: threading.Event | None = None) -> Iterator[Reading[Any]]:
    """The named probes' readings in the order they finish, so a check whose probes are quick is
    judged without waiting for a slow one (the torch import in the training interpreter)."""
    names = list(dict.fromkeys(names))
    if not names:
        return
    with ThreadPoolExecutor(max_workers=min(max_workers, len(names)), thread_name_prefix="probe") as pool:
        futures = [pool.submit(probes.safe_read, n, cfg, cancel) for n in names]
        for fut in as_completed(futures):
            yield fut.result()


def judge(g: Gotcha, readings: Readings, cfg: Config) -> Verdict:
    """Apply one judge; a judge bug becomes an ``unknown`` verdict naming it, never a crash."""
    used = [readings.get_reading(p) for p in g.probes]
    measured_at = max((r.started_at + r.took_s for r in used if r.started_at), default=None)
    took = max((r.took_s for r in used), default=0.0)
    t0 = time.perf_counter()
    try:
        v = g.judge(readings, cfg)
    except Exception as e:
        msg = traceback.format_exception_only(type(e), e)[-1].strip()
        v = Verdict(g.id, Status.UNKNOWN, f"judge error (a sparktui bug, please report): {msg}",
                    evidence=(Evidence("judge", f"sparktui.gotchas {g.slug}", msg),))
    return v.with_timing(measured_at, took + (time.perf_counter() - t0))


def run_checks(ids: Iterable[str], cfg: Config, readings: Readings | None = None,
               cancel: threading.Event | None = None) -> tuple[list[Verdict], Readings]:
    """Judge the given gotcha ids; collect what is missing from ``readings`` (None: collect all).
    ``cancel`` (an Event) cuts sampling and subprocess probes short; what was read is judged."""
    chosen = [REGISTRY[i] for i in ids]
    if readings is None:
        readings = collect(needed_probes(chosen), cfg, cancel=cancel)
    return [judge(g, readings, cfg) for g in chosen], readings
