"""The telemetry panel: temperature, power, clocks, memory as `free -g` sees it, bandwidth, each
with a plot of the chosen span on a physical scale."""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label

from sparktui.core.inert import visible
from sparktui.core.telemetry import GIB, History, Trend, free_gib
from sparktui.core.units import is_number
from sparktui.ui.format import duration, short_reason
from sparktui.ui.panels.run import RateMeter
from sparktui.ui.widgets.meter import Meter
from sparktui.ui.widgets.plot import window_range
from sparktui.ui.widgets.text import set_content

SPANS: dict[str, float | None] = {"5m": 300.0, "1h": 3600.0, "session": None}  # seconds; None: since the start
SPAN_WORDS = {"5m": "last 5 min", "1h": "last 1 h"}
MIN_WINDOW_S = 300.0  # a session plot spans at least this: two samples must not fill the width
TEMP_BAND_C = (20.0, 100.0)  # GB10 idles near 40 °C and throttles near 90 °C; widened if a reading falls outside
HOLD_INTERVALS = 2.5  # a column with no sample holds the last one this many sampling intervals (then: a gap)


class TelemetryPanel(Vertical):
    """Temperature, power, SM clock, memory as `free -g` sees it, and the last measured bandwidth."""

    def __init__(self, *, span: str = "5m", **kw: Any) -> None:
        super().__init__(**kw)
        self.span = span if span in SPANS else "5m"  # Prefs.plot_span; g cycles it

    def compose(self) -> ComposeResult:
        # Held, not queried each tick (cheaper, and safe while the app shuts down).
        self.temp, self.power = Meter("temp", "m-temp"), Meter("power", "m-power")
        self.clock, self.mem, self.avail = Meter("SM clk", "m-clock"), Meter("memory", "m-mem"), Meter("avail", "m-avail")
        self.run: RateMeter | None = None  # the training run's rate on the same window: mounted with the first one
        self.bandwidth = Label("bandwidth: not measured (b)", id="bandwidth")
        self.rdma = Label("", id="rdma")  # RDMA in/out; hidden where there is no RDMA device
        self.rdma.display = False
        self.note = Label("", id="telemetry-note")  # styled (dim): a Label draws that as the theme wants
        yield from (self.temp, self.power, self.clock, self.mem, self.avail, self.bandwidth, self.rdma, self.note)

    def cycle_span(self) -> str:
        """The next span (5 min, 1 h, the whole session); the caller keeps it and redraws."""
        keys = list(SPANS)
        self.span = keys[(keys.index(self.span) + 1) % len(keys)]
        return self.span

    def show(self, history: History, rated_w: float, interval_s: float, max_sm_mhz: float | None = None) -> None:
        s = history.latest
        if not s or not self.is_attached or s.get("t") is None:
            return  # nothing yet, or a sample that arrived while the app shuts down
        g0 = (s.get("gpus") or [{}])[0] if s.get("gpus") else {}
        end = s["t"]
        seconds, words, trend = self._window(history, end)
        view = _View(history, end - seconds, end, trend, interval_s, words)

        def current(field: str, fmt: str, unit: str) -> str:
            v = g0.get(field) if g0 else None
            if v is None:
                why = (g0.get("errors") or {}).get(field) if g0 else None
                return f"n/a ({short_reason(why or (s.get('errors') or {}).get('nvml') or 'unavailable')})"
            return f"{v:{fmt}}{unit}"

        rated = f" / {rated_w:.0f}" if g0 and g0.get("power_w") is not None else ""
        view.draw(self.temp, "g0.temp_c", TEMP_BAND_C, " °C", current("temp_c", ".0f", " °C"))
        view.draw(self.power, "g0.power_w", (0.0, rated_w), " W", current("power_w", ".1f", " W") + rated)
        view.draw(self.clock, "g0.sm_mhz", (0.0, max_sm_mhz or 0.0), " MHz", current("sm_mhz", ".0f", " MHz"))
        mem = s.get("mem") or {}
        total, f = mem.get("MemTotal"), free_gib(mem)
        if total is None or f.get("available") is None:
            for m in (self.mem, self.avail):
                m.plot.plot([], [], view.start, end, (0.0, 1.0))
                m.show(["n/a (/proc/meminfo)", words])
        else:  # used as `free` computes it (MemTotal - MemAvailable); both on 0..MemTotal
            scale = (0.0, total / GIB)
            view.draw(self.mem, "mem.MemAvailable", scale, "G", f"{f['used']:.0f}/{f['total']:.0f}G used",
                      f"{f['buff_cache'] or 0:.0f}G cache", convert=lambda v: (total - v) / GIB, pick=max)
            view.draw(self.avail, "mem.MemAvailable", scale, " GiB", f"{f['available']:.1f} GiB",
                      convert=lambda v: v / GIB, pick=min)
        if self.run is not None:
            self.run.draw_window(view.start, end, words)
        line = rdma_line(s)
        self.rdma.display = line is not None
        if line is not None:
            set_content(self.rdma, line)
        reasons = [r for r in (g0.get("reasons") or []) if r != "gpu_idle"] if g0 else []
        note = f"plots: {words}{', a point a minute' if trend else ''} (g)"
        if reasons:
            note = f"clock events: {', '.join(reasons)}  " + note
        down = outage_note(s)
        if down:
            note = f"{down}  {note}"
        # a recording's reasons and errors are outside text: visible, never markup
        set_content(self.note, Text(visible(note), style="yellow" if reasons or down else "dim"))

    def _window(self, history: History, end: float) -> tuple[float, str, bool]:
        """(seconds shown, the words for them, whether they come from the per-minute trend: the ring
        buffer no longer reaches back to the window's start)."""
        span = SPANS[self.span]
        first = history.trend.first_t if history.trend.first_t is not None else end
        if span is None:
            span, words = max(end - first, MIN_WINDOW_S), f"session {duration(end - first)}"
        else:
            words = SPAN_WORDS[self.span]
        oldest = history.oldest_t()
        oldest = oldest if oldest is not None else end
        return span, words, history.wrapped and end - span < oldest

    def show_run_rate(self, data: Any, now: float) -> None:
        """The run's rate (panels/run.py RateMeter) under the avail plot, on the plots' window;
        nothing is added until a run with progress is shown."""
        if self.run is None:
            if not RateMeter.has_rate(data) or not self.is_attached or not hasattr(self, "avail"):
                return
            self.run = RateMeter()
            self.mount(self.run, after=self.avail)
        self.run.set_run(data, now)

    def show_bandwidth(self, text: str) -> None:
        if self.is_attached:
            set_content(self.bandwidth, text)


def outage_since(sample: dict[str, Any] | None) -> str | None:
    """"21:03:05", the local time NVML stopped answering mid-run (probes/sampler.py: a driver
    reload, a lost GPU), while it still does not; None while it answers."""
    since = (sample or {}).get("nvml_down_since")
    if not isinstance(since, (int, float)) or isinstance(since, bool):
        return None
    try:
        return time.strftime("%H:%M:%S", time.localtime(since))
    except (OverflowError, OSError, ValueError):  # NaN or out of range (a hostile recording)
        return None


def outage_note(sample: dict[str, Any]) -> str | None:
    """"NVML failing since 21:03:05 (GPU lost); retrying" during an outage; None otherwise."""
    at = outage_since(sample)
    if at is None:
        return None
    return f"NVML failing since {at} ({short_reason((sample.get('errors') or {}).get('nvml'), 32)}); retrying"


def rdma_line(sample: dict[str, Any]) -> str | None:
    """"RDMA in/out X / Y GB/s" from a sample's "rdma" (probes/link.py RdmaReader); n/a with the reason
    when the counters could not be read; None (the line hidden) when there is no RDMA device."""
    r = sample.get("rdma")
    why = (sample.get("errors") or {}).get("rdma")
    if not isinstance(r, dict):
        return f"RDMA in/out: n/a ({short_reason(why, 48)})" if why else None

    def gbs(v: Any) -> str:
        return f"{v / 1e9:.2f}" if is_number(v) else "n/a"

    rx, tx = r.get("rx_Bps"), r.get("tx_Bps")
    if rx is None and tx is None:
        return "RDMA in/out: n/a (rates from the next sample)"
    return f"RDMA in/out {gbs(rx)} / {gbs(tx)} GB/s"


class _View:
    """One drawing of the panel: the window every plot shares and where its points come from."""

    def __init__(self, history: History, start: float, end: float, trend: bool, interval_s: float, words: str) -> None:
        self.history, self.start, self.end, self.trend, self.words = history, start, end, trend, words
        self.interval_s = interval_s
        # The ring's part in the window (and the sample before it, which may hold into it): a
        # 5-minute plot reads 300 samples of the hour kept, not all 3,600, five times a second.
        times = history.values("t")
        self._from = 0 if None in times else max(0, bisect_left(times, start) - 1)
        self._times = times[self._from:]

    def series(self, key: str) -> tuple[list, list, float, list | None]:
        """(times, values, how long a value holds, the other extreme of each point or None) from
        the ring buffer, or a point a minute (whose other extreme keeps the span's min-max exact)."""
        if not self.trend:
            values = self.history.values_from(key, self._from)
            return self._times, values, self.interval_s * HOLD_INTERVALS, None
        bucket_s = self.history.trend.bucket_s
        values, other = self.history.trend_values(key)
        last = int(self.end // bucket_s)
        times = [(last - i) * bucket_s for i in range(len(values) - 1, -1, -1)]  # each minute's start
        return times, values, bucket_s * 1.5, other

    def draw(self, m: Meter, key: str, scale: tuple[float, float], unit: str, value: str, *extra: str,
             convert: Callable[[float], float] | None = None, pick: Callable[..., Any] | None = None) -> None:
        """Plot one series and say its value, its min–max over the window, the window, ``extra``."""
        times, values, hold, other = self.series(key)
        if convert is not None:
            values = [None if v is None else convert(v) for v in values]
            other = None if other is None else [None if v is None else convert(v) for v in other]
        m.plot.plot(times, values, self.start, self.end, scale, pick=pick or Trend.KEEP.get(key, max), hold_s=hold)
        seen = window_range(times, values, self.start)
        if other is not None and seen is not None:
            lo_hi = window_range(times, other, self.start)
            if lo_hi is not None:
                seen = (min(seen[0], lo_hi[0]), max(seen[1], lo_hi[1]))
        m.show([value, f"{seen[0]:.0f}–{seen[1]:.0f}{unit}" if seen else "no readings", self.words, *extra])
