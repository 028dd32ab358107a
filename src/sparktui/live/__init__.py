"""Where readings come from over time: this machine (the NVML sampler, the kernel-log follower,
the kept session, ``--record``) or a recording played back. One ``Source`` protocol for both; the
dashboard, ``sparktui record`` and ``sparktui export`` build their sampling here, and the front
ends (ui, cli, fleet) never import ``sparktui.probes``: what they read goes through this layer or
the runner. Nothing here creates a CUDA context: NVML and /proc only.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Protocol, runtime_checkable

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.telemetry import History

Callback = Callable[[dict[str, Any]], None]

from sparktui.core.recording import SAMPLED_READINGS  # noqa: F401  (what the samples carry; re-exported)


def list_every_process(on: bool) -> None:
    """The process table's ``a``: while on, the live process scans also describe every process the
    classifier passes over (``others``), which costs only while it is shown."""
    from sparktui.probes import processes

    processes.want_all(on)


@runtime_checkable
class Source(Protocol):
    """What the dashboard reads telemetry from: samples pushed to callbacks from the source's own
    thread into ``history``; ``now`` is the source's clock (a replay's is the recording's)."""

    kind: str  # "live" or "replay"
    label: str  # shown in the header
    history: History
    static: dict[str, Any]  # NVML's static facts (driver, devices): {} until started
    interval_s: float
    first_t: float | None  # a replay: the recording's first sample time; None live
    synthetic: bool  # a synthetic recording (the demo): never mistaken for a measurement
    finished: bool  # a replay fed to its end
    live_since: float | None  # live: samples before this were restored (shown, never judged)
    recording: Any  # a replay's core/recording.Recording; None live
    restored: Any  # live: the previous session shown again (core/session.Restored), or None
    record_error: str | None  # why --record (or a replay's file) is not whole
    session_error: str | None  # why the session is not kept

    @property
    def paused(self) -> bool: ...

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def now(self) -> float: ...
    def record_readings(self, readings: Readings) -> None: ...
    def keep_event(self, text: str, t: float) -> None: ...
    def keep_verdict(self, v: Any, t: float, change: Any) -> None: ...
    def side_readings(self) -> dict[str, Any]: ...  # readings judged beside the window (live: host, pool)
    def kept(self) -> list[str]: ...  # what of this run is kept on disk, in words (the quit question says it)
    def refresh_static(self) -> None: ...  # read NVML's static facts again (a rerun); a replay has none to read
    @property
    def short_label(self) -> str | None: ...  # the header's label when room is short; None: the label
    last_t: float | None  # a replay: the recording's last sample time; None live


class QuietSource:
    """A source's defaults: nothing recorded, kept or restored. A source (or a test's stand-in)
    sets what it has and overrides what it does."""

    kind = "live"
    label = "this machine"
    interval_s = 1.0
    first_t: float | None = None
    last_t: float | None = None
    synthetic = False
    finished = False
    live_since: float | None = None
    recording: Any = None
    restored: Any = None
    record_error: str | None = None
    session_error: str | None = None

    def __init__(self, history: History | None = None, static: dict[str, Any] | None = None) -> None:
        self.history = history if history is not None else History(10)
        self.static: dict[str, Any] = static if static is not None else {}
        self._paused = False

    @property
    def paused(self) -> bool:
        return self._paused

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False

    def now(self) -> float:
        return time.time()

    def record_readings(self, readings: Readings) -> None:
        pass

    def keep_event(self, text: str, t: float) -> None:
        pass

    def keep_verdict(self, v: Any, t: float, change: Any) -> None:
        pass

    def side_readings(self) -> dict[str, Any]:
        """Readings judged beside the window's samples: none (a replay judges what it recorded)."""
        return {}

    def kept(self) -> list[str]:
        """What of this run is kept on disk, in words: nothing."""
        return []

    def refresh_static(self) -> None:
        pass

    @property
    def short_label(self) -> str | None:
        return None


def window_readings(history: History, cfg: Config, *, static: dict[str, Any] | None, processes: Any,
                    interval_s: float, source: str, since: float | None = None, extra_s: float = 0.0) -> Readings | None:
    """The readings the telemetry-fed checks are judged on (runner.judge_window): the samples of
    the trailing window (``[thermal] window_min``, plus ``extra_s``), those before ``since`` left
    out (a restored session is shown, never judged); None when no sample is left."""
    from sparktui.core.recording import readings_from_samples

    samples = history.samples(last_s=cfg.thermal.window_min * 60.0 + extra_s)
    if since is not None:
        samples = [s for s in samples if s["t"] >= since]
        if not samples:
            return None
    return readings_from_samples(samples, static=static, processes=processes, source=source,
                                 meminfo_at="latest", interval_s=interval_s)


def host_facts(cfg: Config) -> dict[str, Any]:
    """This machine's host facts (name, kernel, CPU): cheap, no subprocess."""
    from sparktui.probes.host import read as read_host  # not the whole probe registry: start-up stays quick

    return dict(read_host(cfg).data or {})


def new_sampler(cfg: Config, interval_s: float | None = None, processes_every_s: float | None = None,
                history: int | None = None, on_sample: Callback | None = None,
                on_processes: Callback | None = None) -> Any:
    """The one NVML sampler setup (probes/sampler.py): fixed interval, bounded history, a process
    scan every ``processes_every_s`` (None or 0: never)."""
    from sparktui.probes.sampler import Sampler

    kw: dict[str, Any] = {"interval_s": interval_s or cfg.telemetry.interval_s,
                          "processes_every_s": processes_every_s or None}
    if history is not None:
        kw["history"] = history
    return Sampler(cfg, on_sample=on_sample, on_processes=on_processes, **kw)


def recording_head(cfg: Config, sampler: Any, processes_every_s: float | None,
                   static: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(recording header, host facts) for a recording or a kept session of ``sampler``'s samples;
    ``static``: the sampler's static facts when already read."""
    from sparktui import __version__
    from sparktui.core.recording import header

    host = host_facts(cfg)
    head = header(interval_s=sampler.interval_s, host=host, static=sampler.static() if static is None else static,
                  version=__version__, processes_every_s=processes_every_s or None)
    return head, host


def kernel_log_file(path: str) -> Reading[Any]:
    """A saved kernel log (dmesg, dmesg -T, journal JSON, /dev/kmsg records) as the kernel_log reading."""
    from sparktui.probes.kernel_log import read_file

    return read_file(path)


def sys_root(path: str | None) -> Any:
    """A context in which the link probe reads PATH/sys instead of /sys (``--sys-root``)."""
    from sparktui.probes.link import sys_root as link_sys_root

    return link_sys_root(path)
