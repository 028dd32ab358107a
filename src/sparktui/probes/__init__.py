"""Probes read the machine and return plain data (a ``Reading``); they never judge.

Every probe is ``read(cfg) -> Reading`` and must not raise: ``safe_read`` turns an unexpected
exception into a Reading whose error names it, so one broken probe costs one reading.
"""

from __future__ import annotations

import threading
import time
import traceback
from typing import Any, Callable, Protocol

from sparktui.core.config import Config
from sparktui.core.readings import Reading

Probe = Callable[[Config], Reading[Any]]


class CancellableProbe(Protocol):
    """A probe that runs subprocesses or waits, and stops when ``cancel`` is set."""

    def __call__(self, cfg: Config, cancel: threading.Event | None = None) -> Reading[Any]: ...


def _registry() -> dict[str, Probe]:
    # Imported lazily so `sparktui explain` does not pay for probe imports.
    from sparktui.probes import container, cudalibs, host, nvml, pins, target, tpscan, state

    return {
        "host": host.read,
        "nvml": nvml.read_static,
        "target": target.read,
        "cudalibs": cudalibs.read,
        "container": container.read,
        "pins": pins.read,
        "tpscan": tpscan.read,
        "meminfo": host.read_meminfo,
        "bandwidth_last": state.read_bandwidth_last,
        "telemetry": __import__("sparktui.probes.sampler", fromlist=["read_telemetry"]).read_telemetry,
        "processes": __import__("sparktui.probes.processes", fromlist=["read"]).read,
        "playbook_issues": __import__("sparktui.probes.playbooks", fromlist=["read"]).read,
        "kernel_log": __import__("sparktui.probes.kernel_log", fromlist=["read"]).read,
        "driver_flavour": __import__("sparktui.probes.driver_flavour", fromlist=["read"]).read,
        "link": __import__("sparktui.probes.link", fromlist=["read"]).read,
    }


def _cancellable() -> dict[str, CancellableProbe]:
    """The probes whose read() takes ``cancel`` (they run subprocesses, sample or scan for a while)."""
    from sparktui.probes import sampler, target, tpscan

    return {"target": target.read, "telemetry": sampler.read_telemetry, "tpscan": tpscan.read}


def names() -> list[str]:
    return list(_registry())


CANCELLABLE = frozenset({"target", "telemetry", "tpscan"})  # the names _cancellable() holds, without importing them


def safe_read(name: str, cfg: Config, cancel: threading.Event | None = None) -> Reading[Any]:
    """Run probe ``name``; whatever happens, return a Reading. ``cancel`` (a threading.Event)
    stops the probes that can be stopped."""
    started = time.time()
    t0 = time.perf_counter()
    try:
        fn = _registry().get(name)
        if fn is None:
            return Reading(probe=name, data=None, error=f"no such probe '{name}'", started_at=started)
        stoppable = _cancellable().get(name) if (cancel is not None and name in CANCELLABLE) else None
        reading = stoppable(cfg, cancel=cancel) if stoppable is not None else fn(cfg)
    except Exception as e:  # a probe bug must not take the tool down
        tb = traceback.format_exception_only(type(e), e)[-1].strip()
        return Reading(probe=name, data=None, error=f"probe crashed: {tb}", started_at=started,
                       took_s=time.perf_counter() - t0)
    if reading.took_s == 0.0:
        from dataclasses import replace

        reading = replace(reading, started_at=started, took_s=time.perf_counter() - t0)
    return reading
