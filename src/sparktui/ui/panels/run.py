"""The run panel: the training run beside sparktui, from the `run` reading (core/shapes.py RunData)
and the verdict of the check that judges it. It only shows: step/total, the rate as printed and
the seconds per step, the ETA (from the total and the recent rate; "—" when either is unknown),
the last finite loss, the age of the last progress (coloured as the verdict is), where the log is
read from, and, without a run or a log, why and how to name it.

``RateMeter`` is the run's rate as a meter of the telemetry panel: the same window and the same
width as the telemetry plots, so a throttle or a memory dip lines up with the step-time change.
``RunStory`` turns the check's verdicts into the run's events (its start, a slowdown, a stall and
its end). Everything the run printed or the machine named (its command, the log's path, an error
line) is outside text: cut, then shown inert (ui/inert.py), never markup.
"""

from __future__ import annotations

import statistics
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical

from sparktui.core.units import age_text, duration_hm, is_number, local_text
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas import REGISTRY
from sparktui.ui.format import status_styles
from sparktui.ui.inert import plain
from sparktui.ui.widgets.meter import Meter
from sparktui.ui.widgets.text import TextLine

CUT = 160  # outside text is cut here before it is made visible (a 10 KB error line, a long argv)
RECENT_S = 300.0  # the ETA's "recent rate": seconds before the last progress point
RECENT_POINTS = 20  # ... or these many points, where the lines carry no time
DEFAULT_WINDOW_S = 300.0  # the rate meter's window before the telemetry plots have drawn one
HOLD_STEPS = 3.0  # a plot column with no point holds the last rate this many step intervals (then: a gap)
NAME_IT = 'name its log: --run-log FILE, or [run] log = "FILE" in the config'
LOOKING = "looking for a training run…"
PER_STEP_UNITS = frozenset({"s/it", "s/step", "ms/step", "ms/it", "s/iter", "ms/iter"})


def run_check_id() -> str | None:
    """The check that judges the run: the one whose first reading is ``run`` (not named here:
    what a check needs is on its declaration)."""
    return next((g.id for g in REGISTRY.values() if g.probes[:1] == ("run",)), None)


def cut(s: object, n: int = CUT) -> str:
    """Outside text, at most ``n`` characters (an ellipsis says it was cut); not yet made visible."""
    text = s if isinstance(s, str) else str(s)
    return text if len(text) <= n else text[: n - 1] + "…"


# --------------------------------------------------------------------------- numbers from the data
def _num(v: float) -> str:
    """A rate or a loss as a person reads it: 3 significant figures, no exponent below a million."""
    a = abs(v)
    if a >= 1e6:
        return f"{v:.3g}"
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 0.01 or a == 0:
        return f"{v:.2f}"
    return f"{v:.2g}"


_POINTS_SEEN: list[Any] = [None, None]  # (the progress list last filtered, its points): one entry


def _points(data: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The reading's progress points. A reading's list is filtered once, however many of the
    panel's lines and the rate meter ask (2,000 points, a dozen times a second, cost 0.4% of a
    core): the one list last filtered is kept, by identity (a new reading brings a new list)."""
    progress = (data or {}).get("progress")
    if not isinstance(progress, list):
        return []
    if _POINTS_SEEN[0] is not progress:
        _POINTS_SEEN[:] = [progress, [p for p in progress if isinstance(p, Mapping)]]
    return _POINTS_SEEN[1]  # shared: read, never changed, by its callers


_SERIES_SEEN: list[Any] = [None, None]  # (the points last timed, their (times, seconds per step))


def _timed(points: Sequence[Mapping[str, Any]]) -> tuple[list[float], list[float | None]]:
    """The timed points' times and seconds per step, in time order: once per reading (the rate
    meter draws on every telemetry sample, the panel once a second; both ask of the same points)."""
    if _SERIES_SEEN[0] is not points:
        timed = [p for p in points if is_number(p.get("t"))]
        per = step_seconds(timed)
        times = [float(p["t"]) for p in timed]
        if any(b < a for a, b in zip(times, times[1:])):  # out of order (a restarted clock): by time
            order = sorted(range(len(times)), key=times.__getitem__)
            times, per = [times[i] for i in order], [per[i] for i in order]
        _SERIES_SEEN[:] = [points, (times, per)]
    return _SERIES_SEEN[1]


def step_seconds(points: Sequence[Mapping[str, Any]]) -> list[float | None]:
    """Seconds per step at each point: as printed (``step_s``), else from this point's and the
    previous one's time and step; None where neither says."""
    out: list[float | None] = []
    prev_t = prev_step = None
    for p in points:
        s, t, step = p.get("step_s"), p.get("t"), p.get("step")
        if not (is_number(s) and s > 0):
            s = None
            if is_number(t) and is_number(step) and is_number(prev_t) and is_number(prev_step) \
                    and t > prev_t and step > prev_step:
                s = (t - prev_t) / (step - prev_step)
        out.append(s)
        if is_number(t) and is_number(step):
            prev_t, prev_step = t, step
    return out


def recent_step_s(points: Sequence[Mapping[str, Any]], window_s: float = RECENT_S) -> float | None:
    """The median seconds per step over the last ``window_s`` before the last point (the last
    ``RECENT_POINTS`` points where the lines carry no time); None when no point says."""
    if not points:
        return None
    last_t = points[-1].get("t")
    if not is_number(last_t):
        seen = [s for s in step_seconds(points[-RECENT_POINTS:]) if s is not None]
        return statistics.median(seen) if seen else None
    first = len(points)  # the window's points only (and the one before, for the first's interval)
    while first > 0 and not (is_number(points[first - 1].get("t")) and points[first - 1]["t"] < last_t - window_s):
        first -= 1
    tail = points[max(0, first - 1):]
    seen = [s for p, s in zip(tail, step_seconds(tail)) if s is not None and is_number(p.get("t")) and p["t"] >= last_t - window_s]
    return statistics.median(seen) if seen else None


def last_step_s(points: Sequence[Mapping[str, Any]]) -> float | None:
    """The last point's seconds per step: its printed rate converted, else from the point before
    (what the rate beside it says, not the recent median the ETA uses)."""
    return step_seconds(points[-2:])[-1] if points else None


def last_loss(points: Sequence[Mapping[str, Any]]) -> float | None:
    """The last finite loss printed (a non-finite one is an event, never a number here)."""
    return next((p["loss"] for p in reversed(points) if is_number(p.get("loss"))), None)


def eta_s(data: Mapping[str, Any] | None) -> float | None:
    """Seconds left: the steps to the total times the recent seconds per step; None unless both
    are known and the run still runs (never a made-up number)."""
    points = _points(data)
    if not points or (data or {}).get("finished") or (data or {}).get("alive") is False:
        return None  # ended, or its processes are gone: no time left to say
    step, total = points[-1].get("step"), points[-1].get("total")
    per = recent_step_s(points)
    if not (is_number(step) and is_number(total) and per is not None) or total < step:
        return None
    return (total - step) * per


def eta_text(seconds: float | None) -> str:
    """"42 s", "31 min", "3h05m", "5.0 days": an age's words under an hour and from two days, hours
    and minutes between (an ETA of hours is read to the minute); "—" when there is none."""
    if seconds is None:
        return "—"
    if 3600 <= seconds < 172800:
        return duration_hm(seconds)
    return age_text(int(seconds))


def rate_text(point: Mapping[str, Any], per_step: float | None) -> str | None:
    """"1.10 it/s (0.91 s/step)": the rate as printed with its unit, and the seconds per step
    where that is a different figure; None when neither is known."""
    rate, unit = point.get("rate"), point.get("rate_unit")
    printed = f"{_num(rate)} {cut(unit, 16)}" if is_number(rate) and isinstance(unit, str) else None
    derived = f"{_num(per_step)} s/step" if per_step is not None else None
    if printed and unit in PER_STEP_UNITS:
        derived = None  # the printed figure is already the time per step
    if printed and derived:
        return f"{printed} ({derived})"
    return printed or derived


def progress_age(data: Mapping[str, Any] | None, now: float) -> tuple[float | None, str]:
    """(seconds since the last progress, what it is the age of): the last point's time; in a log
    whose lines carry no time, the last line read (or the file's last write)."""
    d = data or {}
    points = _points(d)
    t = points[-1].get("t") if points else None
    if is_number(t):
        return now - t, "last progress"
    log = d.get("log") if isinstance(d.get("log"), Mapping) else {}
    for t in (d.get("last_line_t"), (log or {}).get("mtime")):
        if is_number(t):
            return now - t, "last line"
    return None, "last progress"


def source_text(data: Mapping[str, Any]) -> str:
    """Where the log is read from, and the run's command (outside text: cut, not yet visible)."""
    log = data.get("log") if isinstance(data.get("log"), Mapping) else None
    parts = []
    if log is None:
        parts.append("log: none found")
    elif log.get("kind") == "tmux":
        parts.append(f"log: tmux pane {cut(log.get('pane') or '?', 24)}")
    else:
        what = {"fd": "the run's output", "named": "named"}.get(str(log.get("kind")), str(log.get("kind") or "?"))
        parts.append(f"log: {cut(log.get('path') or '?', 80)} ({cut(what, 24)})")
    pids = [p for p in data.get("pids") or () if isinstance(p, int) and not isinstance(p, bool)]
    if pids:
        parts.append(f"pid {pids[0]}" + (f" +{len(pids) - 1}" if len(pids) > 1 else ""))
    if data.get("command"):
        parts.append(cut(data["command"], 80))
    return " · ".join(parts)


# --------------------------------------------------------------------------- the panel's lines
def _age_style(verdict: Verdict | None, dark: bool) -> str:
    if verdict is not None and verdict.status in (Status.WARN, Status.FAIL):
        return status_styles(dark)[verdict.status]
    return ""


def progress_line(data: Mapping[str, Any]) -> Text:
    """"step 1200/5000 (24%) · epoch 1.5 · 1.10 it/s (0.91 s/step) · ETA 58 min"."""
    points = _points(data)
    if not points:
        n = data.get("lines_read")
        return Text(f"no progress line recognised yet ({n if is_number(n) else 0} lines read)")
    p = points[-1]
    step, total = p.get("step"), p.get("total")
    parts = []
    if is_number(step):
        pct = f" ({100 * step / total:.0f}%)" if is_number(total) and total > 0 else ""
        parts.append(f"step {step:.0f}/{total:.0f}{pct}" if is_number(total) else f"step {step:.0f}")
    if is_number(p.get("epoch")):
        parts.append(f"epoch {p['epoch']:.3g}")
    parts.append(rate_text(p, last_step_s(points)) or "rate —")
    parts.append("finished" if data.get("finished") else f"ETA {eta_text(eta_s(data))}")
    return plain(" · ".join(parts))  # the unit is the log's text


def age_line(data: Mapping[str, Any], verdict: Verdict | None, now: float, dark: bool = True) -> Text:
    """"last progress 12 s ago · loss 1.234", the age coloured as the verdict (warn, fail), then the
    error the log ended with (outside text: inert, cut)."""
    seconds, what = progress_age(data, now)
    out = Text()
    out.append(f"{what} {age_text(seconds)} ago" if seconds is not None else f"{what}: —", style=_age_style(verdict, dark))
    loss = last_loss(_points(data))
    out.append(f" · loss {_num(loss)}" if loss is not None else " · loss —")
    err = data.get("error")
    if isinstance(err, Mapping) and err.get("text"):
        out.append(" · ")
        out.append_text(Text("error: ", style="bold") + plain(cut(err["text"])))
    return out


def _progress_shown(data: Mapping[str, Any] | None) -> bool:
    """The panel shows the run's progress (its middle line, the age, moves with the clock)."""
    log = data.get("log") if isinstance(data, Mapping) and data.get("found") else None
    return isinstance(log, Mapping) and not log.get("error")


def panel_lines(reading: Any, verdict: Verdict | None, now: float, dark: bool = True) -> tuple[Text, Text, Text]:
    """The panel's three lines for a ``Reading`` of ``run`` (None: not read yet)."""
    if reading is None:
        return Text(LOOKING, style="dim"), Text(""), Text("")
    data = reading.data
    if not isinstance(data, Mapping):
        return plain(f"not read: {cut(reading.error or 'no data')}"), Text(""), Text("")
    if not data.get("found"):
        why = data.get("why") or "no training process and no log named"
        return plain(f"no training run found: {cut(why)}", style="dim"), Text(NAME_IT, style="dim"), Text("")
    if not _progress_shown(data):
        log = data.get("log") if isinstance(data.get("log"), Mapping) else None
        why = (log or {}).get("error") or data.get("why") or "its log was not found"
        return (plain(f"run found; its log is not read: {cut(why)}"), Text(NAME_IT, style="yellow"),
                plain(source_text(data)))
    return progress_line(data), age_line(data, verdict, now, dark), plain(source_text(data))


class RunPanel(Vertical):
    """Three lines about the run; side by side (wide) under the checklist, hidden when stacked
    (the telemetry panel's run meter says step and rate there)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.reading: Any = None
        self.verdict: Verdict | None = None
        self.check_id = run_check_id()
        self._now = 0.0

    def compose(self) -> ComposeResult:
        self.status = TextLine(Text(LOOKING, style="dim"), id="run-status")  # step/total, rate, ETA
        self.age = TextLine("", id="run-age")  # age of the last progress, loss, the error it ended with
        self.source = TextLine("", id="run-source")  # where the log is read from, the command
        self.border_title = f"run ({self.check_id})" if self.check_id else "run"
        yield from (self.status, self.age, self.source)

    def on_mount(self) -> None:
        self._draw(self._now)  # a reading shown before the panel was composed

    @property
    def data(self) -> Mapping[str, Any] | None:
        d = getattr(self.reading, "data", None)
        return d if isinstance(d, Mapping) else None

    def show(self, reading: Any, now: float) -> None:
        self.reading = reading
        self._draw(now)

    def show_verdict(self, v: Verdict, now: float) -> None:
        self.verdict = v
        self._draw(now)

    def tick(self, now: float) -> None:
        """The age of the last progress grows between readings."""
        if self.reading is not None:
            self._draw(now)

    def _draw(self, now: float) -> None:
        self._now = now
        if not self.is_attached or not hasattr(self, "status"):
            return
        dark = self.app.current_theme.dark
        key = (id(self.reading), id(self.verdict), dark)
        if key != getattr(self, "_key", None):  # a new reading or verdict: every line again
            self._key, self._lines = key, panel_lines(self.reading, self.verdict, now, dark)
        elif _progress_shown(self.data):  # the clock moved, nothing else: only the age of the last progress
            self._lines = (self._lines[0], age_line(self.data or {}, self.verdict, now, dark), self._lines[2])
        for widget, text in zip((self.status, self.age, self.source), self._lines):
            shown = widget.render()
            if (shown.plain, shown.spans, shown.style) != (text.plain, text.spans, text.style):  # Text's == skips styles
                widget.update(text)


# --------------------------------------------------------------------------- the rate on the telemetry's time axis
def rate_series(points: Sequence[Mapping[str, Any]], start: float, end: float) -> tuple[list[float], list[float | None], float]:
    """(times, steps per second, how long a point holds) for the points in ``start``..``end``
    (and the one before, which holds into it): at most what the window shows."""
    times, per = _timed(points)
    lo, hi = max(0, bisect_left(times, start) - 1), bisect_right(times, end)
    times, per = times[lo:hi], per[lo:hi]
    gaps = [b - a for a, b in zip(times, times[1:]) if b > a]
    hold = HOLD_STEPS * statistics.median(gaps) if gaps else 0.0
    return times, [None if s is None else 1.0 / s for s in per], hold


def range_text(values: Sequence[float | None]) -> str | None:
    """"0.60–1.2 steps/s" (or in s/step for runs slower than a step a second)."""
    seen = [v for v in values if v is not None and v > 0]
    if not seen:
        return None
    lo, hi = min(seen), max(seen)
    if statistics.median(seen) >= 1:
        return f"{_num(lo)}–{_num(hi)} steps/s"
    return f"{_num(1 / hi)}–{_num(1 / lo)} s/step"


class RateMeter(Meter):
    """The run's rate (steps per second: a slowdown dips as a throttled clock does) on the same
    window as the telemetry plots. Mounted by the telemetry panel with the first run that has
    progress (a screen without a run is as it was); hidden while none is shown."""

    def __init__(self) -> None:
        super().__init__("run", "m-run")
        self.data: Mapping[str, Any] | None = None
        self.window: tuple[float, float, str] | None = None
        self._pending: tuple[float, float, str] | None = None

    @staticmethod
    def has_rate(data: Any) -> bool:
        return isinstance(data, Mapping) and bool(data.get("found")) and bool(_points(data))

    def on_mount(self) -> None:
        self.call_after_refresh(self._draw_pending)

    def _draw_pending(self) -> None:
        if self._pending is not None:
            self.draw_window(*self._pending, keep=self.window is not None)

    def set_run(self, data: Mapping[str, Any] | None, now: float) -> None:
        """A fresh reading: drawn on the telemetry's last window (or the last 5 min to ``now``)."""
        self.data = data
        start, end, words = self.window or (now - DEFAULT_WINDOW_S, now, "last 5 min")
        self.draw_window(start, end, words, keep=self.window is not None)

    def draw_window(self, start: float, end: float, words: str, keep: bool = True) -> None:
        """The telemetry panel drew ``start``..``end``: the rate over the same window."""
        if keep:
            self.window = (start, end, words)
        # stacked (80x24): no cell to spare; the run's state is G14's row, and the plots' note keeps the span
        shown = self.has_rate(self.data) and not (self.is_attached and self.app.has_class("narrow"))
        if self.display != shown:
            self.display = shown
        if not shown:
            return
        if not hasattr(self, "plot"):  # not composed yet: drawn once it is
            self._pending = (start, end, words)
            return
        self._pending = None
        points = _points(self.data)
        times, values, hold = rate_series(points, start, end)
        self.plot.plot(times, values, start, end, (0.0, 0.0), pick=min, hold_s=hold)
        p = points[-1]
        step, total = p.get("step"), p.get("total")
        where = (f"{step:.0f}/{total:.0f}" if is_number(total) else f"{step:.0f}") if is_number(step) else "step ?"
        rate = rate_text(p, last_step_s(points)) or "rate —"
        seen = range_text([v for t, v in zip(times, values) if t >= start])
        self.show([f"{where} {rate.split(' (')[0]}", seen or "no rate in the window", words])


# --------------------------------------------------------------------------- the run's events
def phase_of(v: Verdict, data: Mapping[str, Any] | None) -> str:
    """What the verdict says the run is doing, with the reading's facts: "running", "finished",
    "slow" (a slowdown or late), "stopped", "stalled", "nonfinite", "died"; "unknown"/"skip"."""
    d = data or {}
    if v.status in (Status.UNKNOWN, Status.SKIP):
        return v.status.value
    gone = d.get("alive") is False
    if v.status is Status.FAIL:
        if gone:
            return "died"
        events = d.get("events")
        events = events if isinstance(events, list) else []
        return "nonfinite" if any(isinstance(e, Mapping) and e.get("kind") == "nonfinite" for e in events) else "stalled"
    if v.status is Status.WARN:
        return "stopped" if gone else "slow"
    return "finished" if d.get("finished") else "running"


def start_text(data: Mapping[str, Any]) -> str:
    """"run: started 03:10: torchrun ... (pid 4242)" or "run: following the log /runs/x.log"."""
    log = data.get("log") if isinstance(data.get("log"), Mapping) else {}
    at = local_text(data.get("started_at"), "%H:%M")
    head = f"run: started {at}" if at else "run: found"
    what = cut(data["command"], 120) if data.get("command") else f"the log {cut((log or {}).get('path') or '?', 120)}"
    pids = [p for p in data.get("pids") or () if isinstance(p, int) and not isinstance(p, bool)]
    return f"{head}: {what}" + (f" (pid {', '.join(map(str, pids[:4]))}{' …' if len(pids) > 4 else ''})" if pids else "")


class RunStory:
    """The run's events from its readings and its check's verdicts: its start (once per run), and
    each change of what it is doing (running, slow, stalled, non-finite, died, finished, stopped),
    in the check's own words. Pure; the app logs what it returns."""

    def __init__(self) -> None:
        self.run_key: tuple | None = None
        self.phase: str | None = None

    def reading(self, data: Mapping[str, Any] | None) -> str | None:
        """A fresh reading: the start row, the first time this run (its start, command, log) is seen."""
        if not isinstance(data, Mapping) or not data.get("found"):
            return None
        log = data.get("log") if isinstance(data.get("log"), Mapping) else {}
        key: tuple = (data.get("started_at"), data.get("command"))  # its log found later: the same run
        if key == (None, None):  # a named log no process was seen writing
            key = ((log or {}).get("path"), (log or {}).get("pane"))
        if key == self.run_key:
            return None
        self.run_key, self.phase = key, None
        return start_text(data)

    def verdict(self, v: Verdict, data: Mapping[str, Any] | None) -> str | None:
        """The row for ``v`` when what the run is doing changed; None otherwise (and for the first
        "running": the start row said it)."""
        phase = phase_of(v, data)
        old, self.phase = self.phase, phase
        if phase == old or phase in ("unknown", "skip") or (phase == "running" and old in (None, "unknown", "skip")):
            return None
        return event_text(v)


def event_text(v: Verdict) -> str:
    """A verdict of the run's check as a run event: "run: no progress for 12 min (from 03:10)"."""
    return f"run: {cut(v.summary, 2 * CUT)}"
