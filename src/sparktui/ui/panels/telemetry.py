"""The telemetry panel: temperature, power (against the rating G4 judges by), SM clock, GPU
utilisation, the unified pool stacked as G3 attributes it (with used and available as `free` says
them), bandwidth; each with a plot of the chosen span on a physical scale, its bounds at its left
and the time under it where there is room. The plots are drawn when a sample arrives, not per frame."""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, Static

from sparktui.core.config import Config
from sparktui.core.inert import visible
from sparktui.core.telemetry import GIB, History, Trend, free_gib
from sparktui.core.units import is_number
from sparktui.gotchas.g03_unified_memory import STACK_LABELS, pool_stack
from sparktui.gotchas.g04_throttling import rated_power
from sparktui.ui.format import duration, short_reason
from sparktui.ui.panels.run import RateMeter
from sparktui.ui.widgets.meter import Meter
from sparktui.ui.widgets.plot import StackPlot, TimeAxis, window_range
from sparktui.ui.widgets.text import TextLine, set_content

SPANS: dict[str, float | None] = {"5m": 300.0, "1h": 3600.0, "session": None}  # seconds; None: since the start
SPAN_WORDS = {"5m": "last 5 min", "1h": "last 1 h"}
MIN_WINDOW_S = 300.0  # a session plot spans at least this: two samples must not fill the width
TEMP_BAND_C = (20.0, 100.0)  # GB10 idles near 40 °C and throttles near 90 °C; widened if a reading falls outside
HOLD_INTERVALS = 2.5  # a column with no sample holds the last one this many sampling intervals (then: a gap)
GUTTER = 10  # columns left of each plot for its scale's bounds ("121.7 GiB"): plots above one another line up
ROWS_PER_METER = 2  # stacked: meters get a label row over their plot once each grid row has this many rows
POOL_KEYS = ("MemTotal", "MemFree", "Buffers", "Cached", "Shmem", "AnonPages", "KReclaimable", "SReclaimable",
             "HugePages_Total", "Hugepagesize")  # what pool_stack reads of /proc/meminfo


def gib(v: float) -> str:
    """The one memory unit of the panel: GiB with one decimal."""
    return f"{v / GIB:.1f} GiB"


def unit_fmt(unit: str, digits: int = 0) -> Callable[[float], str]:
    """A scale bound's label: "700 W", "100 °C", "3000 MHz", "100 %"."""
    return lambda v: f"{v:.{digits}f} {unit}"


class PoolMeter(Meter):
    """The unified pool: used and available as `free` says them on the text line, a legend of G3's
    holders with their GiB now, and the holders stacked over time (StackPlot). Where the holders
    were not read the legend says so and the plot is blank: n/a is never drawn as zeros."""

    LEGEND_ROWS = 2
    plot: StackPlot

    def compose(self) -> ComposeResult:
        self._value = TextLine("—", classes="meter-value")
        self.legend = Static("", classes="meter-legend")
        self.plot = StackPlot(classes="meter-plot")
        self._legend_parts: tuple[list[tuple[str, float]] | None, str] | None = None
        yield TextLine(self._label, classes="meter-label")
        yield from (self._value, self.legend, self.plot)

    def show(self, parts: Sequence[str | tuple[str, ...]]) -> None:
        """As Meter.show; the value may be alternatives, longest first: the first that fits is shown."""
        self._choices = tuple(parts)
        self._fit()

    def _fit(self) -> None:
        choices = getattr(self, "_choices", None)
        if choices is None:
            return super()._fit()
        room = self._value.size.width or 1_000
        first, rest = choices[0], choices[1:]
        options = first if isinstance(first, tuple) else (first,)
        value = next((o for o in options if len(o) <= room), options[-1])
        self._parts = (value, *rest)
        super()._fit()

    def show_legend(self, parts: list[tuple[str, float]] | None, why: str) -> None:
        """"█ driver/GPU 98.2  █ processes 16.3 … free 2.5 GiB" in the plot's colours, bottom part
        first, each entry whole on up to LEGEND_ROWS rows; a part under 0.05 GiB (no hugepages) is
        left out, free never."""
        self._legend_parts = (parts, why)
        room = self.legend.size.width or 1_000
        key = (room, why, None if parts is None else tuple((h, round(b / GIB, 1)) for h, b in parts))
        if key == getattr(self, "_legend_key", None):
            return  # what it says has not changed at a tenth of a GiB: nothing built
        self._legend_key = key
        if parts is None:
            set_content(self.legend, Text(f"holders: n/a ({why})", style="dim"))
            return
        colours = self.plot.colours()
        rows: list[Text] = [Text()]
        last = len(parts) - 1
        for k, (holder, b) in enumerate(parts):
            if k < last and b < 0.05 * GIB:
                continue
            entry = Text()
            entry.append("█ " if k < last else "░ ", style=colours[k] if k < min(last, len(colours)) else "")
            entry.append(f"{STACK_LABELS.get(holder, holder)} {b / GIB:.1f}" + (" GiB" if k == last else ""))
            row = rows[-1]
            if row.cell_len and row.cell_len + 2 + entry.cell_len > room:
                if len(rows) == self.LEGEND_ROWS:
                    break
                rows.append(Text())
                row = rows[-1]
            if row.cell_len:
                row.append("  ")
            row.append_text(entry)
        set_content(self.legend, Text("\n").join(rows))

    def on_resize(self) -> None:
        super().on_resize()
        if self._legend_parts is not None:
            self.show_legend(*self._legend_parts)


class TelemetryPanel(Vertical):
    """Temperature, power, SM clock, GPU utilisation, the pool, and the last measured bandwidth."""

    def __init__(self, *, span: str = "5m", **kw: Any) -> None:
        super().__init__(**kw)
        self.span = span if span in SPANS else "5m"  # Prefs.plot_span; g cycles it
        self._pool_memo: dict[Any, list[float] | None] = {}  # sample time -> its pool parts (PoolParts)

    def compose(self) -> ComposeResult:
        # Held, not queried each tick (cheaper, and safe while the app shuts down).
        self.temp, self.power = Meter("temp", "m-temp"), Meter("power", "m-power")
        self.clock, self.util = Meter("SM clk", "m-clock"), Meter("util", "m-util")
        self.mem = PoolMeter("pool", "m-mem")
        self.axis = TimeAxis(id="time-axis")  # side by side: one row of time ticks under every plot
        self.run: RateMeter | None = None  # the training run's rate on the same window: mounted with the first one
        self.bandwidth = Label("bandwidth: not measured (b)", id="bandwidth")
        self.rdma = Label("", id="rdma")  # RDMA in/out; hidden where there is no RDMA device
        self.rdma.display = False
        self.note = Label("", id="telemetry-note")  # styled (dim): a Label draws that as the theme wants
        yield from (self.temp, self.power, self.clock, self.util, self.mem, self.axis, self.bandwidth, self.rdma, self.note)

    def on_resize(self) -> None:
        """Stacked, the meters are one row each (label, value, a short plot) until the panel has
        ROWS_PER_METER rows a grid row; then each is a label row over a plot, as side by side."""
        rows = -(-len([m for m in self.query(Meter) if m.display]) // 2)
        tall = self.size.height >= rows * ROWS_PER_METER + 1
        if self.has_class("tall") != tall:
            self.set_class(tall, "tall")

    def cycle_span(self) -> str:
        """The next span (5 min, 1 h, the whole session); the caller keeps it and redraws."""
        keys = list(SPANS)
        self.span = keys[(keys.index(self.span) + 1) % len(keys)]
        return self.span

    def show(self, history: History, cfg: Config, interval_s: float, max_sm_mhz: float | None = None) -> None:
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

        # the rating G4 judges by: the window's newest NVML enforced limit, else hardware.rated_power_w
        rated_w, _ = rated_power(history.values_from("g0.power_limit_w", view.first), cfg)
        rated = f" / {rated_w:.0f} W" if g0 and g0.get("power_w") is not None else ""
        view.draw(self.temp, "g0.temp_c", TEMP_BAND_C, " °C", current("temp_c", ".0f", " °C"))
        view.draw(self.power, "g0.power_w", (0.0, rated_w), " W", current("power_w", ".1f", " W") + rated)
        view.draw(self.clock, "g0.sm_mhz", (0.0, max_sm_mhz or 0.0), " MHz", current("sm_mhz", ".0f", " MHz"))
        view.draw(self.util, "g0.util_gpu", (0.0, 100.0), " %", current("util_gpu", ".0f", " %"))
        self._show_pool(s, view)
        # side by side the plots share one row of time ticks (TimeAxis); stacked, each has its own
        own_ticks = self.app.has_class("narrow")
        for m in (self.temp, self.power, self.clock, self.util, self.mem):
            if hasattr(m, "plot") and m.plot.ticks != own_ticks:
                m.plot.ticks = own_ticks
                m.plot.refresh()
        self.axis.set_window(GUTTER, end - view.start)
        if self.run is not None:
            self._run_axes()
            self.run.draw_window(view.start, end, words)
        line = rdma_line(s)
        self.rdma.display = line is not None
        if line is not None:
            set_content(self.rdma, line)
        reasons = [r for r in (g0.get("reasons") or []) if r != "gpu_idle"] if g0 else []
        note = f"plots: {words}{', a point a minute' if trend else ''} (w)"
        if reasons:
            note = f"clock events: {', '.join(reasons)}  " + note
        down = outage_note(s)
        if down:
            note = f"{down}  {note}"
        # a recording's reasons and errors are outside text: visible, never markup
        set_content(self.note, Text(visible(note), style="yellow" if reasons or down else "dim"))

    def _show_pool(self, s: dict[str, Any], view: _View) -> None:
        """Used and available as `free` computes them (used = MemTotal - MemAvailable), one unit
        (GiB, one decimal); the holders stacked (G3's pool_stack) from the ring's samples."""
        mem = s.get("mem") or {}
        total, f = mem.get("MemTotal"), free_gib(mem)
        times, parts = view.pool_series(self._pool_memo)
        scale = float(total) if is_number(total) else 1.0  # widened to the largest stack shown
        self.mem.plot.stack(times, parts, view.start, view.end, scale, hold_s=view.interval_s * HOLD_INTERVALS,
                            fmt=gib, gutter=GUTTER)
        now = pool_stack(mem) if is_number(total) else None
        missing = "/".join(k for k in POOL_KEYS[:6] if mem.get(k) is None) or "meminfo"
        self.mem.show_legend(now, f"no {missing} in /proc/meminfo")
        if total is None or f.get("available") is None or f.get("used") is None:
            self.mem.show(["n/a (/proc/meminfo)", view.words])
            return
        seen = window_range(*view.series("mem.MemAvailable")[:2], view.start)
        low = f"avail min {seen[0] / GIB:.1f} GiB" if seen else "no readings"
        used, avail = f["used"], f["available"]
        self.mem.show([(f"used {used:.1f} GiB  avail {avail:.1f} GiB", f"used {used:.1f} avail {avail:.1f} GiB"),
                       f"of {f['total']:.1f} GiB (as free)", low, view.words])

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
            if not RateMeter.has_rate(data) or not self.is_attached or not hasattr(self, "mem"):
                return
            self.run = RateMeter()
            self.mount(self.run, before=self.axis)
            self.call_after_refresh(self._run_axes)
        self.run.set_run(data, now)

    def _run_axes(self) -> None:
        """The run's rate plot lined up with the plots above it, its bounds in steps/s."""
        if self.run is not None and hasattr(self.run, "plot"):
            self.run.plot.set_axes(lambda v: f"{v:.2f}/s", GUTTER)
            self.run.plot.ticks = self.app.has_class("narrow")
            self.run.plot.refresh()

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

    @property
    def first(self) -> int:
        """The ring position of the window's first sample (and the one before it)."""
        return self._from

    def pool_series(self, memo: dict[Any, list[float] | None]) -> tuple[list, PoolParts]:
        """(times, the pool's parts per sample, worked out only for the samples a column shows and
        kept in ``memo`` by sample time). Only the ring's samples: the trend keeps no holders."""
        return self._times, PoolParts(self, memo)


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
        m.plot.plot(times, values, self.start, self.end, scale, pick=pick or Trend.KEEP.get(key, max), hold_s=hold,
                    fmt=unit_fmt(unit.strip()), gutter=GUTTER)
        seen = window_range(times, values, self.start)
        if other is not None and seen is not None:
            lo_hi = window_range(times, other, self.start)
            if lo_hi is not None:
                seen = (min(seen[0], lo_hi[0]), max(seen[1], lo_hi[1]))
        m.show([value, f"{seen[0]:.0f}–{seen[1]:.0f}{unit}" if seen else "no readings", self.words, *extra])


class PoolParts(Sequence):
    """The pool's parts (G3's pool_stack, bytes bottom up, free last; None where the holders were
    not read) of each sample of a view's window, worked out when a plot column asks: a column
    shows one sample, so a draw costs a pool_stack per new column, not one per sample (a 5-minute
    window at 1 Hz is 300 samples for some 60 columns, and each draw adds one)."""

    def __init__(self, view: _View, memo: dict[Any, list[float] | None]) -> None:
        self.view, self.memo = view, memo
        self._cols: list[list] | None = None
        latest = view.history.latest or {}
        self._latest = (latest.get("t"), latest.get("mem"))
        if len(memo) > 2 * len(view._times) + 16:  # bounded: what left the window is dropped
            window = set(view._times)
            for t in [t for t in memo if t not in window]:
                del memo[t]

    def __len__(self) -> int:
        return len(self.view._times)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        t = self.view._times[i]
        if t in self.memo:
            return self.memo[t]
        if t is not None and t == self._latest[0] and isinstance(self._latest[1], dict):
            mem = self._latest[1]  # the newest sample: its own dict, no column read
        else:
            if self._cols is None:  # a first draw, a resize, another span: the window's columns, once
                n = len(self)
                cols = [self.view.history.values_from(f"mem.{k}", self.view.first) for k in POOL_KEYS]
                self._cols = [[None] * (n - len(c)) + c if len(c) < n else c[len(c) - n:] for c in cols]
            mem = {k: c[i] for k, c in zip(POOL_KEYS, self._cols) if c[i] is not None}
        stack = pool_stack(mem)
        parts = None if stack is None else [b for _, b in stack]
        if t is not None:
            self.memo[t] = parts
        return parts
