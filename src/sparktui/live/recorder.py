"""The check readings of a recording: which probes a recording carries as "readings" lines, and
the recorder that takes them in a thread while the samples go on. Used by ``sparktui record`` and
by the dashboard's ``--record`` (the same lines, so ``check --replay`` judges both alike)."""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable

from sparktui.core.readings import Readings
from sparktui.gotchas import REGISTRY
from sparktui.gotchas.base import Feed
from sparktui.live import SAMPLED_READINGS
from sparktui.runner import collect_iter, fed, needed_probes, read

# Readings the samples and the header already carry; every other probe a judge uses is read once
# when a recording starts and written as "readings" lines, so `check --replay` judges every check.
CARRIED_BY_SAMPLES = SAMPLED_READINGS


def recorded_probes() -> list[str]:
    """The probes whose readings `record` writes as "readings" lines: every probe a check uses
    (a check fed on request only reads its kept result; nothing intrusive runs) but those the
    samples carry."""
    return [p for p in needed_probes(REGISTRY.values()) if p not in CARRIED_BY_SAMPLES]


def replay_ids_for(readings: Readings) -> list[str]:
    """The telemetry-fed checks that any recording's samples answer, plus every check whose
    readings the recording carries (G14 when the recording followed a run)."""
    from sparktui.core.recording import replay_ids

    extra = set(replay_ids(readings, REGISTRY))
    telemetry = {g.id for g in fed(Feed.TELEMETRY) if all(p in SAMPLED_READINGS or p in readings for p in g.required)}
    return [gid for gid in REGISTRY if gid in telemetry or gid in extra]


class ReadingsRecorder:
    """Takes the check readings in a thread and appends each to the recording as it completes, so
    the samples start at once and a slow probe (the torch import in the target) costs no sample.
    Readings that a cancel cut short are not written: a replay then says the check was not recorded.
    A write the disk refuses goes to ``on_write_error`` (the recording then ends with 74, as when a
    sample's write is refused), never silently into the end-of-run summary alone."""

    def __init__(self, writer: Any, cfg: Any, names: list[str],
                 on_write_error: Callable[[OSError], None] | None = None) -> None:
        self.writer, self.cfg, self.names = writer, cfg, names
        self.on_write_error = on_write_error
        self.cancel = threading.Event()
        self.written: list[str] = []
        self.error: str | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.thread = threading.Thread(target=self._run, name="sparktui-record-readings", daemon=True)

    def start(self) -> "ReadingsRecorder":
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            for reading in collect_iter(self.names, self.cfg, cancel=self.cancel):
                with self._lock:
                    if self.cancel.is_set() or self._closed:
                        continue
                    self.writer.readings({reading.probe: reading.to_dict()})
                    self.written.append(reading.probe)
        except OSError as e:  # the disk refused it: the recording ends there, said (74)
            self._write_failed(e)
        except Exception as e:  # a write that fails costs the readings, never the samples
            self.error = repr(e)

    def _write_failed(self, e: OSError) -> None:
        self.error = f"{e.strerror or e}"
        if self.on_write_error is not None:
            self.on_write_error(e)

    def finish(self, wait_s: float) -> None:
        """Wait for the readings still being taken (Ctrl-C skips them), then write nothing more."""
        if self.thread.is_alive():
            print(f"sparktui: waiting up to {wait_s:g} s for the check readings (Ctrl-C skips them)", file=sys.stderr)
            try:
                self.thread.join(wait_s)
            except KeyboardInterrupt:
                pass
        self.cancel.set()
        self.thread.join(2.0)
        with self._lock:
            self._read_again_at_end()
            self._closed = True

    READ_AGAIN_AT_END = ("kernel_log",)  # what happened during the run: an OOM kill at hour 3 is in it

    def _read_again_at_end(self) -> None:
        """Readings that grow during the run are taken again as it ends (a later "readings" line
        replaces the earlier one in a replay): the kernel log then holds every event of the run."""
        for name in (n for n in self.READ_AGAIN_AT_END if n in self.names):
            try:
                self.writer.readings({name: read(name, self.cfg).to_dict()})
            except OSError as e:
                self._write_failed(e)
            except Exception as e:  # a write that fails costs this reading, never the samples
                self.error = repr(e)

    @property
    def missing(self) -> list[str]:
        return [n for n in self.names if n not in self.written]
