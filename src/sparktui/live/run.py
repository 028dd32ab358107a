"""The training run followed live beside the dashboard (G14), never in a replay.

``RunWatch`` is told of each process scan (``saw_processes``: the sampler scans every
``[telemetry] processes_every_s``) and does its work in its own thread, so the dashboard's first
screen never waits on finding the run: the run is the training processes G6 classifies (a launcher
and its ranks are one run), its log their redirected stdout/stderr, else their tmux pane (read with
``capture-pane`` at each scan, never a key sent), else the log ``--run-log`` / ``[run] log`` names.
A log file is followed by ``probes.run_log.LogFollower`` (inotify, no polling; rotation and
truncation survived; giant lines cut), each line parsed as it is seen, so the run's progress points
carry the time they were printed. ``reading()`` is the ``run`` reading G14 is judged on;
``recorded()`` the same with only the progress seen since the last call (a recording's run lines
are deltas, joined again on replay: core/recording.py ``joined_run``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from sparktui.core.config import Config
from sparktui.core.readings import Reading

RECORD_EVERY_S = 30.0  # how often the dashboard writes the run's progress to its recording / kept session
TELL_EVERY_S = 1.0  # on_change at most this often while lines come (the dashboard shows the run once a second)
COALESCE_S = 0.5  # the follower gathers a burst this long after a write: a bar's ten writes a second are two
#                   wake-ups, not ten (a line's time is when it was read: half a second against a stall's minutes)


class RunWatch:
    """Finds and follows the run. ``on_change`` is called (from the watch's thread) when the run
    found, its log or its progress changed; ``reading`` may be called from any thread."""

    reading_name = "run"

    def __init__(self, cfg: Config, on_change: Callable[[], None] | None = None, enabled: bool = True,
                 pid: int | None = None) -> None:
        self.cfg, self.enabled, self.pid = cfg, enabled, pid  # pid: the run holding it, not the latest started
        self.on_change = on_change or (lambda: None)
        self.log: Any = None  # probes.run_progress.RunLog of the run followed (imported in the watch's thread)
        self.run: dict[str, Any] = {"found": False, "why": "looking for a training run", "pids": []}
        self.source: dict[str, Any] | None = None
        self.follower: Any = None
        self.pane: Any = None
        self.error: str | None = None
        self._key: tuple[Any, ...] | None = None  # what is followed: (pids' group, log kind, path or pane)
        self._scan: Mapping[str, Any] | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._recorded_t: float | None = None
        self._recorded_mono = time.monotonic()  # the first run line a RECORD_EVERY_S after the start
        self._record_lock = threading.RLock()
        self.scans = 0  # process scans looked through: before the first, "no run" is not known
        self.changed = False  # lines read since take_changed() last asked
        self._told = float("-inf")

    # -- lifetime ------------------------------------------------------------------------------------
    def start(self) -> None:
        if not self.enabled or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="sparktui-run-watch", daemon=True)
        self._thread.start()
        if self.cfg.run.log:  # a named log is followed at once, before any process scan
            self._wake.set()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(2.0)
        self._detach()

    def saw_processes(self, processes: Mapping[str, Any] | None) -> None:
        """A fresh process scan (the processes reading's data): the run is looked for again in the
        watch's thread (its processes may have gone, a new run started, its pane scrolled)."""
        if not self.enabled:
            return
        self._scan = processes
        self._wake.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait()  # woken by a scan or stop(): no polling
            self._wake.clear()
            if self._stopping.is_set():
                break
            try:
                self._look(self._scan)
                self.scans += 1
            except Exception as e:  # the watch must outlive a bug in finding the run: said, not fatal
                self.error = f"the run watch failed: {type(e).__name__}: {e}"
            self.on_change()

    # -- finding and following -----------------------------------------------------------------------
    def _look(self, scan: Mapping[str, Any] | None) -> None:
        from sparktui.probes import run_log
        from sparktui.probes.run_progress import RunLog

        run = run_log.find_run(scan, self.cfg, pid=self.pid)
        followed = self.run.get("pids") if self._key is not None else None
        if followed and not run.get("pids"):  # the run followed is gone, or the scan could not see it
            # gone: the scan was read and holds no training process, or no process writes the named log
            gone = not run.get("found") or run.get("alive") is False
            with self._lock:
                self.run = {**self.run, "alive": False if gone else None,
                            "why": f"its processes ({', '.join(map(str, followed[:4]))}) are gone" if gone
                            else run.get("why")}
            if self.pane is not None:
                self._capture()  # what the pane shows last: the traceback it ended with
            return
        source = run_log.log_of(run, self.cfg)
        key = (tuple(run.get("pids") or ())[:1], source.get("kind"), source.get("path") or source.get("pane"))
        with self._lock:
            self.run = run
            moved = key != self._key
        if moved:  # another run, or its log moved: start again on it (the old follower stopped unlocked:
            self._detach()  # its thread may be waiting for the lock in _lines)
            with self._lock:
                self.log, self._key = RunLog(), key
            self._attach(source)
        with self._lock:
            self.source = dict(source)
        if self.pane is not None:
            self._capture()

    def _attach(self, source: Mapping[str, Any]) -> None:
        from sparktui.probes import run_log

        if source.get("error"):
            return
        if source.get("kind") == "tmux" and source.get("pane"):
            self.pane = run_log.TmuxPane(str(source["pane"]), socket=source.get("path") or None)
        elif source.get("path"):
            try:
                self.follower = run_log.LogFollower(str(source["path"]), self._lines, self._failed,
                                                    coalesce_s=COALESCE_S).start()
            except OSError as e:
                self.error = f"{source['path']}: {e.strerror or e}"

    def _detach(self) -> None:
        follower, self.follower, self.pane = self.follower, None, None
        if follower is not None:
            follower.stop()

    def _capture(self) -> None:
        pane = self.pane
        first = pane.captures == 0
        try:
            lines = pane.new_lines()
        except OSError as e:
            self.error = f"tmux pane {pane.pane}: {e}"
            return
        self.error = None
        now = None if first else time.time()  # the pane's history: when those lines were printed is not known
        with self._lock:
            for line in lines:
                self.log.line(line, now)

    def _lines(self, lines: list[tuple[str, float | None]]) -> None:
        """Called from the follower's thread with each batch of whole lines and when they were seen
        (None: the file's tail read at the start, printed before it was followed)."""
        with self._lock:
            for text, seen in lines:
                self.log.line(text, seen)
        self._told_later()

    def _told_later(self) -> None:
        """``on_change`` at most once every TELL_EVERY_S (a tqdm bar writes ten times a second: each
        call wakes the dashboard's loop); what came since is marked in ``changed`` for its tick."""
        now = time.monotonic()
        self.changed = True
        if now - self._told >= TELL_EVERY_S:
            self._told = now
            self.on_change()

    def take_changed(self) -> bool:
        """Whether the reading changed since the last call (the dashboard's tick asks once a second)."""
        changed, self.changed = self.changed, False
        return changed

    def _failed(self, why: str) -> None:
        self.error = why
        self.on_change()

    # -- the reading ---------------------------------------------------------------------------------
    def reading(self, since: float | None = None) -> Reading[Any]:
        """The run reading (core/shapes.py RunData); ``since``: only the progress after that time."""
        now = time.time()
        with self._lock:
            data: dict[str, Any] = {**self.run, "log": dict(self.source) if self.source else None,
                                    **(self.log.data() if self.log is not None else {}), "read_at": now}
        if self.error and data.get("log") is not None and not data["log"].get("error"):
            data["log"]["error"] = self.error
        if since is not None:
            data["progress"] = [p for p in data.get("progress") or [] if (p.get("t") or 0.0) > since]
        return Reading(self.reading_name, data, source=_where(data.get("log")), started_at=now)

    def recorded(self) -> Reading[Any]:
        """The reading a recording's next run line holds: the progress since the last such line."""
        with self._record_lock:
            self._recorded_mono = time.monotonic()
            r = self.reading(since=self._recorded_t)
            self._recorded_t = r.started_at
            return r

    def recorded_if_due(self) -> Reading[Any] | None:
        """``recorded()`` once RECORD_EVERY_S has passed since the last run line, else None: the
        dashboard and `sparktui record` write the run's progress at the same pace."""
        with self._record_lock:
            if time.monotonic() - self._recorded_mono < RECORD_EVERY_S:
                return None
            return self.recorded()

    def record_at_end(self) -> Reading[Any] | None:
        """The last run line, once the run was looked for ("no training run" is evidence too)."""
        return self.recorded() if self.scans or self.cfg.run.log else None


def _where(log: Mapping[str, Any] | None) -> str:
    if not log:
        return "run watch"
    if log.get("kind") == "tmux":
        return f"tmux pane {log.get('pane')}"
    return str(log.get("path") or "run watch")
