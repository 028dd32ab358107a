"""Where the dashboard's telemetry comes from: this machine (the NVML sampler) or a recording.

Both push plain dicts to callbacks from their own thread; the app turns them into messages.
Neither creates a CUDA context: the live source is NVML + /proc only.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from sparktui.core.config import Config
from sparktui.core.telemetry import History

Callback = Callable[[dict[str, Any]], None]


class LiveSource:
    kind = "live"

    def __init__(self, cfg: Config, on_sample: Callback, on_processes: Callback) -> None:
        from sparktui.probes.sampler import Sampler

        self.sampler = Sampler(cfg, on_sample=on_sample, on_processes=on_processes,
                               processes_every_s=cfg.telemetry.processes_every_s)
        self.history: History = self.sampler.history
        self.interval_s = self.sampler.interval_s
        self.static: dict[str, Any] = {}
        self.label = "this machine"

    def start(self) -> None:
        self.static = self.sampler.static()
        self.sampler.start()

    def stop(self) -> None:
        self.sampler.stop()

    def pause(self) -> None:
        self.sampler.pause()

    def resume(self) -> None:
        self.sampler.resume()

    @property
    def paused(self) -> bool:
        return self.sampler.paused

    def now(self) -> float:
        return time.time()


class ReplaySource:
    """Feeds a recording's samples (paced by ``speed``; None = as fast as possible) into a History."""

    kind = "replay"

    def __init__(self, path: str, cfg: Config, on_sample: Callback, on_processes: Callback, speed: float | None = 1.0) -> None:
        from sparktui.core.recording import Replay, read_recording

        self.recording = read_recording(path)
        self.replay = Replay(self.recording, speed)
        self.history = History(max(cfg.telemetry.history, 1))
        self.interval_s = float(self.recording.header.get("interval_s") or cfg.telemetry.interval_s)
        self.static = self.recording.header.get("static") or {}
        self.on_sample, self.on_processes = on_sample, on_processes
        self.label = f"replay of {path}" + (f" at {speed:g}x" if speed else "")
        self._thread: threading.Thread | None = None
        self._paused = False
        self._t = self.recording.samples[0]["t"] if self.recording.samples else time.time()
        self.finished = False

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="sparktui-replay", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        procs = sorted(self.recording.processes, key=lambda p: p.get("t") or 0)
        pi = 0
        for s in self.replay:
            self.history.append(s)
            self._t = s["t"]
            self.on_sample(s)
            while pi < len(procs) and (procs[pi].get("t") or 0) <= s["t"]:
                self.on_processes(procs[pi])
                pi += 1
        self.finished = True

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
