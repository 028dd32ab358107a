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
from sparktui.core.readings import Reading
from sparktui.core.telemetry import History
from sparktui.live import Callback, QuietSource, new_sampler, recording_head

POOL_EVERY_S = 30.0  # G3's tmpfs/hugepages/swap facts change slowly; /proc/mounts is read no more often


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
        self._side: dict[str, Reading[Any]] = {}  # host and pool for G3 (side_readings)
        self._pool_due = 0.0

        def scanned(p: dict[str, Any]) -> None:  # the sampler's thread, every process scan
            self._read_side()
            on_processes(p)

        self.sampler = new_sampler(cfg, processes_every_s=cfg.telemetry.processes_every_s, on_sample=on_sample,
                                   on_processes=scanned)
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

    def kept(self) -> list[str]:
        """What of this run is kept on disk, in words: the session (`sparktui history` lists it)
        and the --record file."""
        out = []
        if self.session is not None or (self.keep_session and not self.session_error):
            out.append("this session's telemetry and events are kept: `sparktui history` lists it, "
                       "and a restart within the restore window shows it again")
        if self.writer is not None and self.record_path:
            out.append(f"the recording {os.path.basename(self.record_path)} keeps what was recorded")
        return out

    def side_readings(self) -> dict[str, Reading[Any]]:
        """What G3 reads beside the samples: the host (read once: is this unified memory at all)
        and the pool (tmpfs, /dev/shm, hugepages, swap; read with a process scan, at most every
        POOL_EVERY_S, in the sampler's thread: the UI never waits on a mount). Empty until the
        first process scan."""
        return dict(self._side)

    def _read_side(self) -> None:
        now = time.monotonic()
        try:
            if "host" not in self._side:
                from sparktui.probes import host

                self._side = {**self._side, "host": host.read(self.cfg)}
            if now >= self._pool_due:
                from sparktui.probes import pool

                self._pool_due = now + POOL_EVERY_S
                self._side = {**self._side, "pool": pool.read(self.cfg)}
        except Exception as e:  # a probe's bug costs G3 those facts (it says they were not read), not the scan
            self._side = {**self._side, "pool": Reading("pool", None, error=f"pool not read: {e!r}")}

    def refresh_static(self) -> None:
        """Read NVML's static facts again (a rerun: application clocks reset with `nvidia-smi -rac`
        since the start show at once in G4); kept as they were when the read fails."""
        fresh = self.sampler.static()
        if not fresh.get("error") or not self.static:
            self.static = fresh

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
            # the process table's 'a' (every process) is a view: not kept (a hundred rows each scan)
            self._write("processes", {k: v for k, v in p.items() if k != "others"} if "others" in p else p)
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
    feed ends, however it ends (not when ``seek`` stops it to move).

    ``seek`` moves the replay to any sample: the History then holds the recording up to it and
    ``now()`` is its time; the feed holds there (paused) until ``resume`` plays on from it."""

    kind = "replay"
    SEEK_TREND_SPANS = 4  # a seek refills at most this many History lengths (about 19 us a sample)

    def __init__(self, path: str, cfg: Config, on_sample: Callback, on_processes: Callback, speed: float | None = 1.0,
                 on_finished: Callable[[], None] | None = None, recording: Any = None) -> None:
        """``recording``: the file already read (the CLI validates it first; not read twice)."""
        from sparktui.core.recording import Replay, read_recording

        self.recording = recording if recording is not None else read_recording(path)
        self.speed = speed
        self.replay = Replay(self.recording, speed)
        self.history = History(max(cfg.telemetry.history, 1))
        self.interval_s = self.recording.interval_s or float(cfg.telemetry.interval_s)
        self.static = self.recording.header.get("static") or {}
        self.on_sample, self.on_processes, self.on_finished = on_sample, on_processes, on_finished
        samples = self.recording.samples
        self.first_t = samples[0]["t"] if samples else None
        self.last_t = samples[-1]["t"] if samples else None
        notice = self.recording.skipped_notice()
        self.synthetic = self.recording.synthetic_note() is not None  # the header shows a badge
        self.name = os.path.basename(path)
        self._base_label = (f"replay of {self.name}" + (" (synthetic, not measured)" if self.synthetic else "")
                            + (f" ({notice.split(':', 1)[0]})" if notice else ""))
        self._error_label = ""
        self._thread: threading.Thread | None = None
        self._paused = False
        self._t = samples[0]["t"] if samples else time.time()
        self._offset = 0  # the index the running feed started at (a seek restarts it there)
        self._held = False  # stopped by a seek: resume starts a new feed at the position
        self._superseded = False  # the running feed is being stopped by a seek: it neither finishes nor says so
        self.position = 0  # samples shown so far (1..n)
        self.finished = False
        self.errors: list[str] = []  # samples that failed while fed, and why the feed stopped if it did
        self.skipped = 0
        self.record_error: str | None = f"{self.name}: {notice}" if notice else None

    @property
    def label(self) -> str:
        """What the header says of the replay: the file, and the pace while it still plays."""
        pace = f" at {self.speed:g}x" if self.speed and not self.finished else ""
        return self._base_label + pace + self._error_label

    @label.setter
    def label(self, text: str) -> None:
        """A source's label is writeable (QuietSource, LiveSource): here it names the file part;
        the pace and a feed's error still follow it."""
        self._base_label = text

    @property
    def short_label(self) -> str:
        """The file name alone, for a narrow header (its REPLAY badge says the rest)."""
        return self.name + self._error_label

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, args=(self.replay,), name="sparktui-replay", daemon=True)
        self._thread.start()

    def _start_feed(self, offset: int) -> None:
        """A new feed from sample ``offset`` on (after a seek)."""
        from dataclasses import replace

        from sparktui.core.recording import Replay

        rec = self.recording  # the rest of the recording, its continued segments where they were
        rec = replace(rec, samples=rec.samples[offset:], segment_starts=[i - offset for i in rec.segment_starts if i > offset])
        self._offset, self._superseded, self._held = offset, False, False
        self.replay = Replay(rec, self.speed)
        self._thread = threading.Thread(target=self._run, args=(self.replay,), name="sparktui-replay", daemon=True)
        self._thread.start()

    def _run(self, replay: Any) -> None:
        n = len(self.recording.samples)
        try:
            procs = sorted(self.recording.processes, key=lambda p: p.get("t") or 0)
            pi = 0
            first = replay.recording.samples[0]["t"] if self._offset and getattr(replay, "recording", None) else None
            while first is not None and pi < len(procs) and (procs[pi].get("t") or 0) < first:
                pi += 1  # shown already, by the seek this feed continues from
            for s in replay:
                try:
                    self.history.append(s)
                    self._t = s["t"]
                    self.position = self._offset + replay.position
                    self.on_sample(s)
                    while pi < len(procs) and (procs[pi].get("t") or 0) <= s["t"]:
                        pi += 1  # past it even if showing it fails: one bad snapshot is not retried forever
                        self.on_processes(procs[pi - 1])
                except Exception as e:  # one sample the dashboard cannot take costs that sample
                    self.skipped += 1
                    self._error(f"sample {self._offset + replay.position} of {n} skipped: {e!r}")
        except Exception as e:  # the feed itself failed: say where, and still finish
            self._error(f"replay stopped at sample {self._offset + replay.position} of {n}: {e!r}")
        finally:
            if not self._superseded:
                self.finished = True
                if self.on_finished is not None:
                    self.on_finished()

    def _error(self, what: str) -> None:
        self.errors.append(what)
        if len(self.errors) > 100:
            del self.errors[1:-50]  # the first and the latest are what is worth reading
        extra = f"; {self.skipped} samples skipped" if self.skipped > 1 else ""
        self._error_label = f" ({self.errors[-1]}{extra})"

    def _halt_feed(self) -> None:
        """Stop the running feed where it is, without it saying it finished."""
        if self._thread is not None and self._thread.is_alive():
            self._superseded = True
            self.replay.stop()
            self._thread.join(timeout=2)
        self._held = True

    def seek(self, index: int) -> dict[str, Any] | None:
        """Show the recording up to sample ``index`` (1-based, clamped to the recording): the History
        holds the samples up to it (as many as it keeps), ``now()`` is its time, and the replay is
        held there (paused) unless that is the end. Returns the processes snapshot of that moment
        (None when the recording has none by then). Called from the dashboard's thread."""
        samples = self.recording.samples
        if not samples:
            return None
        i = max(1, min(int(index), len(samples)))
        self._halt_feed()
        history = History(self.history.maxlen)  # filled aside, then swapped in: never seen half-built
        # the ring keeps the last maxlen; the samples before them feed the per-minute trend (the
        # plots' whole-session span), up to SEEK_TREND_SPANS rings back, so a key stays quick
        for s in samples[max(0, i - self.SEEK_TREND_SPANS * self.history.maxlen):i]:
            history.append(s)
        self.history = history
        self.position, self._t = i, samples[i - 1]["t"]
        self.finished = i == len(samples)
        self._paused = not self.finished  # held where it was put; p plays on from there
        return self.replay.processes_at(self._t)

    def index_at(self, t: float) -> int:
        """The position (1-based) of the last sample at or before ``t`` (1 before the first)."""
        import bisect

        return max(1, bisect.bisect_right([s["t"] for s in self.recording.samples], t))

    def stop(self) -> None:
        self.replay.stop()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def pause(self) -> None:
        self._paused = True
        self.replay.pause()

    def resume(self) -> None:
        self._paused = False
        if self._held and not self.finished:
            self._start_feed(self.position)  # plays on from where a seek left it
        else:
            self.replay.resume()

    @property
    def paused(self) -> bool:
        return self._paused

    def now(self) -> float:
        """Replay time: ages and judges see the recording's clock, not the wall clock."""
        return self._t
