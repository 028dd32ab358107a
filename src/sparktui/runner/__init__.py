"""Collect the readings the chosen gotchas need (in parallel, each probe once), then judge them.

The runner is the only place that joins probes and judges. It schedules from what each gotcha
declares (``Gotcha.feed``, ``enriched_by``, ``follows``: gotchas/base.py), never from an id: the
dashboard's worker, ``sparktui check``, ``record``, ``export`` and the peers view all come here.

- ``stream``: each check's verdict as soon as its own readings are in (a slow torch import or G10
  scan holds only the checks that need it); a check's enriching readings re-judge it when they come.
- ``judge_window``: the telemetry-fed checks over a window of samples (live) or a recording (review).
- ``judge_recorded``: a check judged from a recording's readings, ``unknown`` when it carries none.
- ``judge_followed``: the checks that follow a reading live, on that reading merged with its events.
"""

from __future__ import annotations

import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from typing import Any, Container, Iterable, Iterator, Mapping, Protocol

from sparktui import probes
from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.recording import SAMPLED_READINGS
from sparktui.core.verdict import Evidence, Status, Verdict
from sparktui.gotchas import REGISTRY, Gotcha
from sparktui.gotchas.base import Feed

# How often the dashboard re-judges the telemetry-fed checks from the sampler's window.
TELEMETRY_REJUDGE_S = 5.0


def fed(feed: Feed, ids: Iterable[str] | None = None) -> list[Gotcha]:
    """The checks fed by ``feed`` (of ``ids``; default all), in the registry's order."""
    chosen = REGISTRY.values() if ids is None else [REGISTRY[i] for i in ids]
    return [g for g in chosen if g.feed is feed]


def followers(reading: str) -> list[Gotcha]:
    """The checks judged again as each live event of ``reading`` arrives (G11: the kernel log)."""
    return [g for g in REGISTRY.values() if g.feed is Feed.FOLLOWED and g.follows == reading]


def showing(panel: str) -> Gotcha | None:
    """The check whose findings the dashboard's ``panel`` lists (its tab is named after it)."""
    return next((g for g in REGISTRY.values() if g.shows == panel), None)


def can_judge(g: Gotcha, have: Container[str]) -> bool:
    """Every probe the check cannot be judged without is in ``have``."""
    return all(p in have for p in g.required)


def needed_probes(gotchas: Iterable[Gotcha]) -> list[str]:
    seen: dict[str, None] = {}
    for g in gotchas:
        for p in g.probes:
            seen.setdefault(p, None)
    return list(seen)


def probe_names() -> list[str]:
    """Every probe, in declaration order (``sparktui snapshot`` reads them all)."""
    return probes.names()


def read(name: str, cfg: Config, cancel: threading.Event | None = None) -> Reading[Any]:
    """One probe's reading; never raises (probes.safe_read)."""
    return probes.safe_read(name, cfg) if cancel is None else probes.safe_read(name, cfg, cancel)


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
    """Apply one judge; a judge bug becomes an ``unknown`` verdict naming it, never a crash. The
    verdict carries when its readings were taken and the pids it marks (``Gotcha.marks``)."""
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
    return with_marks(v).with_timing(measured_at, took + (time.perf_counter() - t0))


def with_marks(v: Verdict) -> Verdict:
    """``v`` carrying the pids its check declares it marks (``Gotcha.marks``): what the dashboard
    marks in its process table travels on the verdict, whoever made it (a judge, a flow)."""
    g = REGISTRY.get(v.id)
    if g is None or g.marks is None:
        return v
    return replace(v, marks=g.marks(v))


def run_checks(ids: Iterable[str], cfg: Config, readings: Readings | None = None,
               cancel: threading.Event | None = None) -> tuple[list[Verdict], Readings]:
    """Judge the given gotcha ids; collect what is missing from ``readings`` (None: collect all).
    ``cancel`` (an Event) cuts sampling and subprocess probes short; what was read is judged."""
    chosen = [REGISTRY[i] for i in ids]
    if readings is None:
        readings = collect(needed_probes(chosen), cfg, cancel=cancel)
    return [judge(g, readings, cfg) for g in chosen], readings


# -- streaming: each verdict as soon as its readings are in ----------------------------------------

@dataclass(frozen=True)
class Judged:
    """Verdicts that became ready together, and the readings they were judged on (a copy: later
    readings do not change it). ``new``: the readings first seen in this batch (what ``--record``
    writes, each once). ``cancelled``: the user cancelled while these were read."""

    verdicts: tuple[Verdict, ...]
    readings: Readings
    new: tuple[str, ...]
    cancelled: bool = False

    @property
    def ids(self) -> list[str]:
        return [v.id for v in self.verdicts]


class Merger(Protocol):
    """A reading followed live (live/kernel.py): the probe's reading, merged with the events seen
    since, is what its followers are judged on."""

    def merge(self, reading: Reading[Any]) -> Reading[Any]: ...


def stream(ids: Iterable[str], cfg: Config, cancel: threading.Event | None = None,
           recorded: Readings | None = None, followed: Mapping[str, Merger] | None = None) -> Iterator[Judged]:
    """The checks ``ids`` judged as their readings arrive, every probe in its own thread, each read
    once (the training interpreter's shared by the checks that need it). A check is judged as soon
    as its required readings are in and again once its enriching ones are (unless cancelled).
    ``recorded``: judge a recording's readings instead (one batch, nothing read from the machine).
    ``followed``: readings followed live; a fresh one is merged with its live events before judging.
    Never raises for a probe's or a judge's fault."""
    gs = [REGISTRY[i] for i in ids]
    if recorded is not None:
        yield Judged(tuple(judge_recorded(g, recorded, cfg) for g in gs), recorded, ())
        return
    cancel = cancel or threading.Event()
    names = needed_probes(gs)
    readings, merged, waiting, new = Readings(), {}, list(gs), []
    early: list[Gotcha] = []  # judged without their enriching readings: judged again once those are in
    for reading in collect_iter(names, cfg, max_workers=max(len(names), 1), cancel=cancel):
        readings.add(reading)
        new.append(reading.probe)
        merger = (followed or {}).get(reading.probe)
        if merger is not None and not cancel.is_set():
            merged[reading.probe] = merger.merge(reading)  # judged on; the probe's own reading is what is kept
        ready = [g for g in waiting if can_judge(g, readings)]
        waiting = [g for g in waiting if g not in ready]
        whole = [g for g in early if all(p in readings for p in g.probes)] if not cancel.is_set() else []
        early = [g for g in early if g not in whole] + [g for g in ready if not all(p in readings for p in g.probes)]
        if ready or whole:
            snap = Readings(dict(readings))  # later probes must not change what these were judged on
            judged_on = _with(snap, merged)
            yield Judged(tuple(judge(g, judged_on, cfg) for g in ready + whole), snap, tuple(new), cancel.is_set())
            new = []


def judge_readings(ids: Iterable[str], readings: Readings, cfg: Config,
                   followed: Mapping[str, Merger] | None = None) -> Judged:
    """The checks ``ids`` judged on readings already taken (one batch, as ``stream`` delivers it): a
    followed reading among them is merged with its live events first. Every reading counts as new."""
    merged = {n: m.merge(readings.get_reading(n)) for n, m in (followed or {}).items() if n in readings}
    return Judged(tuple(judge(REGISTRY[i], _with(readings, merged), cfg) for i in ids), readings, tuple(readings))


def _with(readings: Readings, merged: Mapping[str, Reading[Any]]) -> Readings:
    """``readings`` with the followed ones replaced by their merged readings (what is judged)."""
    return Readings({**dict(readings), **merged}) if merged else readings


def judge_recorded(g: Gotcha, readings: Readings, cfg: Config) -> Verdict:
    """A check judged from a recording: ``unknown`` naming what the recording does not carry."""
    missing = [p for p in g.required if p not in readings]
    if missing:
        return Verdict(g.id, Status.UNKNOWN, f"replay: the recording carries no {', '.join(missing)} reading")
    return judge(g, readings, cfg)


def long_lived() -> None:
    """This process stays for days (the dashboard): the probes declared ``isolated`` are read in
    child processes from now on, so what they allocate is not kept in its heap (probes/isolated.py)."""
    probes.isolate(True)


def judge_window(readings: Readings, cfg: Config, have_processes: bool = True) -> list[Verdict]:
    """The telemetry-fed checks on readings built from samples (core/recording.py
    ``readings_from_samples``: a live window, or a whole recording in review mode, plus what is
    followed beside the samples: the run, G14). Without a process scan yet (``have_processes``
    False) the checks that need one wait; so does a check that requires a reading the samples do not
    carry and that is not there yet (live: the run), while a reviewed recording that does not carry
    it says so (``judge_recorded``)."""
    out = []
    for g in fed(Feed.TELEMETRY):
        if not have_processes and "processes" in g.probes:
            continue
        if can_judge(g, readings) or set(g.required) <= SAMPLED_READINGS:
            out.append(judge(g, readings, cfg))
        elif _reviewed(readings):  # a whole recording: what it does not carry is said, not waited for
            out.append(judge_recorded(g, readings, cfg))
    return out


def _reviewed(readings: Readings) -> bool:
    tele = readings.data("telemetry") if "telemetry" in readings else None
    return isinstance(tele, Mapping) and bool(tele.get("review"))


def judge_followed(reading: Reading[Any], cfg: Config) -> list[Verdict]:
    """The checks following ``reading.probe`` live, judged on it (the merged reading)."""
    rs = Readings({reading.probe: reading})
    return [judge(g, rs, cfg) for g in followers(reading.probe)]


def scheduled(ids: Iterable[str]) -> list[str]:
    """Of ``ids``, the checks a run of probes judges: the telemetry-fed ones are judged from the
    sampler's window instead (``judge_window``)."""
    return [i for i in ids if REGISTRY[i].feed is not Feed.TELEMETRY]
