"""Probes read the machine and return plain data (a ``Reading``); they never judge.

Every probe is ``read(cfg) -> Reading`` and must not raise: ``safe_read`` turns an unexpected
exception into a Reading whose error names it, so one broken probe costs one reading.

A probe is declared once, in its own module: ``PROBES = (Probe(shapes.HOST, read),)`` names the
reading it fills (a typed key of core/shapes.py), its reader and whether the reader takes
``cancel`` (probes/declared.py). The registry, ``names()``, the cancellable set and ``safe_read``
below are derived from those declarations; adding a probe is its module and one import line here.
"""

from __future__ import annotations

import threading
import time
import traceback
from typing import Any, cast

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.probes.declared import CancellableReader, Probe, Reader

__all__ = ["CancellableReader", "Probe", "Reader", "cancellable", "declarations", "isolate", "names", "safe_read"]


def declarations() -> tuple[Probe, ...]:
    """Every probe, as its own module declares it (``PROBES``), in the order they are started."""
    # Imported here, not at the top, so `sparktui explain` does not pay for the probe modules.
    from sparktui.probes import (
        container,
        cudalibs,
        driver_flavour,
        host,
        kernel_log,
        link,
        nvml,
        pins,
        playbooks,
        pool,
        processes,
        run_log,
        sampler,
        state,
        target,
        tpscan,
    )

    return (*host.PROBES, *nvml.PROBES, *target.PROBES, *cudalibs.PROBES, *container.PROBES, *pins.PROBES,
            *tpscan.PROBES, *state.PROBES, *sampler.PROBES, *processes.PROBES, *playbooks.PROBES,
            *kernel_log.PROBES, *driver_flavour.PROBES, *link.PROBES, *run_log.PROBES, *pool.PROBES)


def _declared() -> dict[str, Probe]:
    return {p.name: p for p in declarations()}


def _registry() -> dict[str, Reader]:
    """Probe name -> its reader (as its module holds it now)."""
    return {name: p.reader for name, p in _declared().items()}


def cancellable() -> frozenset[str]:
    """The probes whose reader takes ``cancel`` (they run subprocesses, sample or scan for a while)."""
    return frozenset(p.name for p in declarations() if p.cancellable)


def names() -> list[str]:
    return list(_declared())


def __getattr__(name: str) -> Any:
    if name == "CANCELLABLE":  # the old constant, derived now (imports the probe modules)
        return cancellable()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_isolating = threading.Event()  # set by a long-lived caller (the dashboard): see isolate()


def isolate(on: bool = True) -> None:
    """From now on, read the probes declared ``isolated`` in a short-lived child process
    (probes/isolated.py): for a process that lives for days, whose heap would keep what a scan or
    an HTTP client allocated. A one-shot command (``check``) reads them in-process."""
    (_isolating.set if on else _isolating.clear)()


def safe_read(name: str, cfg: Config, cancel: threading.Event | None = None,
              isolated: bool | None = None) -> Reading[Any]:
    """Run probe ``name``; whatever happens, return a Reading. ``cancel`` (a threading.Event)
    stops the probes that can be stopped. ``isolated``: read an ``isolated`` probe in a child
    process (None: as ``isolate()`` set)."""
    try:
        probe = _declared().get(name)
    except Exception as e:  # a probe module that fails to import must not take the tool down
        return Reading(probe=name, data=None, error=f"probe crashed: {_one_line(e)}")
    if probe is None:
        return Reading(probe=name, data=None, error=f"no such probe '{name}'")
    if probe.isolated and (_isolating.is_set() if isolated is None else isolated):
        from sparktui.probes.isolated import read_in_child

        return read_in_child(probe, cfg, cancel)
    return read_declared(probe, cfg, cancel)


def read_declared(probe: Probe, cfg: Config, cancel: threading.Event | None = None) -> Reading[Any]:
    """``probe``'s reader, here; whatever happens, a Reading (what ``safe_read`` runs)."""
    started = time.time()
    t0 = time.perf_counter()
    try:
        fn = probe.reader
        if cancel is not None and probe.cancellable:
            reading = cast(CancellableReader, fn)(cfg, cancel=cancel)
        else:
            reading = fn(cfg)
    except Exception as e:  # a probe bug must not take the tool down
        return Reading(probe=probe.name, data=None, error=f"probe crashed: {_one_line(e)}", started_at=started,
                       took_s=time.perf_counter() - t0)
    if reading.took_s == 0.0:
        from dataclasses import replace

        reading = replace(reading, started_at=started, took_s=time.perf_counter() - t0)
    return reading


def _one_line(e: BaseException) -> str:
    return traceback.format_exception_only(type(e), e)[-1].strip()
