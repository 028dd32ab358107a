"""The two ``Source``s (live/__init__.py): this machine (the NVML sampler, the kept session,
``--record``) and a recording played back.

Both push plain dicts to callbacks from their own thread; the dashboard turns them into messages.
Neither creates a CUDA context: the live source is NVML + /proc only.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable

from sparktui.core.config import Config
from sparktui.core.telemetry import History
from sparktui.live import Callback, QuietSource, new_sampler, recording_head


class LiveSource(QuietSource):
    """This machine, through the NVML sampler. Every sample, process scan, check reading and
    verdict change is appended to the kept session (core/session.py; unless ``keep_session`` is
    False or ``[session] keep = false``) and, with ``record_path``, to that recording too
    (`sparktui --record FILE`). A writer that fails costs its file, never the dashboard: the
    reason is in ``record_error`` / ``session_error``."""

    kind = "live"

    def __init__(self, cfg: Config, on_sample: Callback, on_processes: Callback, record_path: str | None = None,
                 keep_session: bool = True, on_session: Callable[[], None] | None = None) -> None:
        """``on_session`` is called (from the session thread) once the previous session has been
        restored, or not, and this one opened, or not: ``restored`` and ``session_error`` say which."""
        self.cfg = cfg
        self.sampler = new_sampler(cfg, processes_every_s=cfg.telemetry.processes_every_s, on_sample=on_sample,
                                   on_processes=on_processes)
        self.history: History = self.sampler.history
        self.interval_s = self.sampler.interval_s
        self.static: dict[str, Any] = {}
        self.label = "this machine"
        self.record_path = record_path
        self.keep_session = keep_session and cfg.session.keep
        self.writer: Any = None  # the --record recording
        self.session: Any = None  # the kept session (core/session.SessionWriter)
        self.record_error: str | None = None
        self.session_error: str | None = None
        self.restored: Any = None  # core/session.Restored: the previous session, shown again
        self.live_since: float | None = time.time()  # samples before this were restored: shown, not judged
        self._verdicts_kept: set[str] = set()
        self.on_session = on_session
        self.session_ready = threading.Event()  # set once the session thread is done
        self._early: list[tuple[str, tuple]] = []  # lines for the session from before it opened (a quick check)
        self._early_lock = threading.Lock()
        if not self.keep_session:
            self.session_ready.set()
        self._stopping = threading.Event()
        self._session_thread: threading.Thread | None = None

    def start(self) -> None:
        """Sampling starts at once, or, when a session is kept, once the previous one has been
        read into the History (in a thread: a restore of an hour of samples costs the first paint
        nothing; restored samples must come before live ones)."""
        self.static = self.sampler.static()
        self.live_since = time.time()
        if self.record_path or self.keep_session:
            head, host = self._open_writers()
        if not self.keep_session:
            self.sampler.start()
            return
        self._session_thread = threading.Thread(target=self._session_then_sample, args=(head, host),
                                                name="sparktui-session", daemon=True)
        self._session_thread.start()

    def _session_then_sample(self, head: dict[str, Any], host: str) -> None:
        try:
            self._open_session(head, host)
        finally:
            with self._early_lock:
                for method, args in self._early:
                    self._write_one("session", method, args)
                self._early.clear()
                self.session_ready.set()
            if not self._stopping.is_set():
                self.sampler.start()
            if self.on_session is not None:
                self.on_session()

    def _open_writers(self) -> tuple[dict[str, Any], str]:
        """The --record file, and the samples' way to both writers; returns the header and host
        name the session is opened with."""
        from sparktui.core.recording import RecordingError, RecordingWriter

        head, host = recording_head(self.cfg, self.sampler, self.cfg.telemetry.processes_every_s, self.static)
        if self.record_path:
            try:
                self.writer = RecordingWriter(self.record_path, head)
            except (RecordingError, OSError) as e:
                self.record_error = f"not recording: {e}"
            else:
                self.label = f"this machine, recording to {os.path.basename(self.record_path)}"
        show_sample, show_processes = self.sampler.on_sample, self.sampler.on_processes

        def on_sample(s: dict[str, Any]) -> None:
            self._write("sample", s)
            if show_sample is not None:
                show_sample(s)

        def on_processes(p: dict[str, Any]) -> None:
            self._write("processes", p)
            if show_processes is not None:
                show_processes(p)

        self.sampler.on_sample, self.sampler.on_processes = on_sample, on_processes
        return head, str(host.get("hostname") or "host")

    def _open_session(self, head: dict[str, Any], host: str) -> None:
        """Show the previous session again (when recent), then keep this one in a new file."""
        from sparktui.core import session
        from sparktui.core.recording import RecordingError

        cfg = self.cfg.session
        try:  # whatever goes wrong costs the restore, never the sampling
            last = session.newest_for_host(host, cfg.restore_within_min * 60)
            if last is not None:
                self.restored = session.load_restore(last, self.history.maxlen)
                if self.restored.samples:  # filled aside, then swapped in: the UI never sees it half-built
                    history = History(self.history.maxlen)
                    for s in self.restored.samples:
                        history.append(s)
                    history.append(self.restored.gap_sample(self.interval_s))
                    self.history = self.sampler.history = history
        except Exception as e:
            self.session_error = f"previous session not restored: {e}"
        try:
            self.session = session.SessionWriter(cfg, head, host)
        except (RecordingError, OSError) as e:
            self.session_error = f"session not kept (sparktui history will not list it): {e}"
            return
        if self.restored is not None:
            self.session.event(f"continues after session {self.restored.session}")

    def _write(self, method: str, *args: Any) -> None:
        """To each open writer; the session's lines wait while it is being opened."""
        self._write_one("writer", method, args)
        if not self.session_ready.is_set():
            with self._early_lock:
                if not self.session_ready.is_set():
                    self._early.append((method, args))
                    return
        self._write_one("session", method, args)

    def _write_one(self, attr: str, method: str, args: tuple) -> None:
        """One writer; one that fails (disk full, folder gone) is closed and named."""
        w = getattr(self, attr)
        if w is None:
            return
        try:
            getattr(w, method)(*args)
        except (OSError, ValueError) as e:
            if attr == "writer":
                self.record_error = f"recording stopped: {e}"
            else:
                self.session_error = f"session stopped: {e}"
            setattr(self, attr, None)
            try:
                w.close()
            except OSError:
                pass

    def record_readings(self, readings: Any) -> None:
        """Check readings as they complete (not the telemetry the samples already carry)."""
        keep = {k: v for k, v in readings.to_dict().items() if k not in ("telemetry", "processes", "meminfo")}
        if keep:
            self._write("readings", keep, time.time())

    def keep_event(self, text: str, t: float) -> None:
        """A kernel-log event seen live (G11), kept as an "event" line: the session outlives the run."""
        self._write("event", text, t)

    def keep_verdict(self, v: Any, t: float, change: Any) -> None:
        """Each check's first verdict of this run and every change (core/events.Change, or None
        when the status stayed): what a restored session's events view and `history` show."""
        if change is None and v.id in self._verdicts_kept:
            return
        self._verdicts_kept.add(v.id)
        old = change.old if change is not None else v.status
        self._write("verdict", t, v.id, old.value if old else None, v.status.value, v.summary)

    def stop(self) -> None:
        self._stopping.set()
        if self._session_thread is not None:
            self._session_thread.join(timeout=5)
        self.sampler.stop()
        for w in (self.writer, self.session):
            if w is not None:
                try:
                    w.close()
                except OSError:
                    pass

    def pause(self) -> None:
        self.sampler.pause()
        self._write("event", "sampling paused")

    def resume(self) -> None:
        self.sampler.resume()
        self._write("event", "sampling resumed")

    @property
    def paused(self) -> bool:
        return self.sampler.paused

    def now(self) -> float:
        return time.time()


class ReplaySource(QuietSource):
    """Feeds a recording's samples (paced by ``speed``; None = as fast as possible) into a History.

    What goes wrong is said, never raised into the dashboard: the lines the reader skipped are in
    ``record_error`` (the app shows it when it starts the source), and a sample that fails while it
    is fed is skipped and named in ``errors`` and the label. ``on_finished`` is called once the
    feed ends, however it ends."""

    kind = "replay"

    def __init__(self, path: str, cfg: Config, on_sample: Callback, on_processes: Callback, speed: float | None = 1.0,
                 on_finished: Callable[[], None] | None = None, recording: Any = None) -> None:
        """``recording``: the file already read (the CLI validates it first; not read twice)."""
        from sparktui.core.recording import Replay, read_recording

        self.recording = recording if recording is not None else read_recording(path)
        self.replay = Replay(self.recording, speed)
        self.history = History(max(cfg.telemetry.history, 1))
        self.interval_s = self.recording.interval_s or float(cfg.telemetry.interval_s)
        self.static = self.recording.header.get("static") or {}
        self.on_sample, self.on_processes, self.on_finished = on_sample, on_processes, on_finished
        self.first_t = self.recording.samples[0]["t"] if self.recording.samples else None
        notice = self.recording.skipped_notice()
        self.synthetic = self.recording.synthetic_note() is not None  # the header shows a badge
        self.label = (f"replay of {os.path.basename(path)}" + (" (synthetic, not measured)" if self.synthetic else "")
                      + (f" at {speed:g}x" if speed else "")
                      + (f" ({notice.split(':', 1)[0]})" if notice else ""))
        self._base_label = self.label
        self._thread: threading.Thread | None = None
        self._paused = False
        self._t = self.recording.samples[0]["t"] if self.recording.samples else time.time()
        self.finished = False
        self.errors: list[str] = []  # samples that failed while fed, and why the feed stopped if it did
        self.skipped = 0
        self.record_error: str | None = f"{os.path.basename(path)}: {notice}" if notice else None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="sparktui-replay", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        n = len(self.recording.samples)
        try:
            procs = sorted(self.recording.processes, key=lambda p: p.get("t") or 0)
            pi = 0
            for s in self.replay:
                try:
                    self.history.append(s)
                    self._t = s["t"]
                    self.on_sample(s)
                    while pi < len(procs) and (procs[pi].get("t") or 0) <= s["t"]:
                        pi += 1  # past it even if showing it fails: one bad snapshot is not retried forever
                        self.on_processes(procs[pi - 1])
                except Exception as e:  # one sample the dashboard cannot take costs that sample
                    self.skipped += 1
                    self._error(f"sample {self.replay.position} of {n} skipped: {e!r}")
        except Exception as e:  # the feed itself failed: say where, and still finish
            self._error(f"replay stopped at sample {self.replay.position} of {n}: {e!r}")
        finally:
            self.finished = True
            if self.on_finished is not None:
                self.on_finished()

    def _error(self, what: str) -> None:
        self.errors.append(what)
        if len(self.errors) > 100:
            del self.errors[1:-50]  # the first and the latest are what is worth reading
        extra = f"; {self.skipped} samples skipped" if self.skipped > 1 else ""
        self.label = f"{self._base_label} ({self.errors[-1]}{extra})"

    def stop(self) -> None:
        self.replay.stop()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def pause(self) -> None:
        self._paused = True
        self.replay.pause()

    def resume(self) -> None:
        self._paused = False
        self.replay.resume()

    @property
    def paused(self) -> bool:
        return self._paused

    def now(self) -> float:
        """Replay time: ages and judges see the recording's clock, not the wall clock."""
        return self._t
