"""A plot of a time series on a fixed scale, one or more rows of eighth blocks, newest on the right;
with room, the scale's bounds on its left and the window's time under it. ``StackPlot``: parts of a
whole (the unified pool as G3 attributes it) stacked, each in its own colour."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

Pick = Callable[..., Any]


def _timed(times: Sequence[float | None], values: Sequence[float | None]) -> tuple[list, list]:
    """The readings that have a time (a sample without one cannot be placed), as lists.

    A series shorter than its times (a field first seen after the first samples, or never: the
    session restored before a GPU appeared) is aligned to the newest end: its missing start is n/a."""
    short = len(times) - len(values)
    if short:
        values = [None] * short + list(values) if short > 0 else list(values)[-short:]
    if None not in times:
        return list(times), list(values)
    kept = [(t, v) for t, v in zip(times, values) if t is not None]
    return [t for t, _ in kept], [v for _, v in kept]


def time_columns(times: Sequence[float | None], values: Sequence[float | None], start: float, end: float,
                 width: int, *, pick: Pick = max, hold_s: float = 0.0) -> list[float | None]:
    """One value per column of a time window (``pick`` over the readings in each slot), oldest first.

    A slot with no reading holds the reading before it while that is under ``hold_s`` old (slots
    narrower than the sampling interval must not draw as dashes); otherwise it is None, as is a
    slot whose readings are all None (n/a): the plot draws both as blank. Time before the first
    reading is blank, so the first sample fills one column, not the width. Times only grow."""
    if width <= 0:
        return []
    times, values = _timed(times, values)
    step = (end - start) / width if end > start else 0.0
    at = bisect_right(times, start)
    last_t, last_v = (times[at - 1], values[at - 1]) if at > 0 else (None, None)
    out: list[float | None] = []
    for col in range(width):
        upto = bisect_right(times, start + (col + 1) * step) if col < width - 1 else bisect_right(times, end)
        if upto > at:
            seen = [v for v in values[at:upto] if v is not None]
            out.append(pick(seen) if seen else None)
            last_t, last_v = times[upto - 1], values[upto - 1]
        elif last_t is not None and start + col * step - last_t < hold_s:
            out.append(last_v)
        else:
            out.append(None)
        at = upto
    return out


def grid_window(start: float, end: float, width: int) -> tuple[float, float]:
    """The window moved forward to whole column widths of clock time (``end`` inside its last
    column): a reading stays in its column from one second to the next, so the plot moves a
    column at a time instead of re-slicing every column with each sample (a shimmer, and a
    repaint each second), and a column's slot is the same in every plot of that span."""
    if width <= 0 or end <= start:
        return start, end
    step = (end - start) / width
    top = math.ceil(end / step) * step  # slots hold (from, to]: a reading at a boundary ends its slot
    return top - (end - start), top


def ago(seconds: float) -> str:
    """A time tick: "-5m", "-2.5m", "-1h", "-45s" (how long before the newest reading)."""
    if seconds >= 3600:
        return f"-{round(seconds / 3600, 1):g}h"
    if seconds >= 60:
        return f"-{round(seconds / 60, 1):g}m"
    return f"-{seconds:.0f}s"


def tick_row(width: int, span_s: float) -> str:
    """The time axis under a plot ``width`` columns wide spanning ``span_s``: "-5m … -2.5m … now",
    the middle tick only where it fits with room to spare."""
    left, right = ago(span_s), "now"
    if width < len(left) + len(right) + 1:
        return " " * width
    row = list(left.ljust(width - len(right)) + right)
    mid = ago(span_s / 2)
    at = width // 2 - len(mid) // 2
    if at > len(left) + 2 and at + len(mid) < width - len(right) - 2:
        row[at:at + len(mid)] = mid
    return "".join(row)


def window_range(times: Sequence[float | None], values: Sequence[float | None], start: float) -> tuple[float, float] | None:
    """(min, max) of the readings after ``start``; None when there are none (all n/a, or no time)."""
    times, values = _timed(times, values)
    seen = [v for v in values[bisect_right(times, start):] if v is not None]
    return (min(seen), max(seen)) if seen else None


class Plot(Widget):
    """A time window drawn in columns of eighth blocks, as many rows high as the widget.

    The scale is given (a physical range: 0 to the rated power, a band of °C), widened only to
    take in a reading outside it, so a steady value draws a flat line and one degree more is an
    eighth of a row, not a cliff from the bottom to the top. A reading is at least one eighth high
    (a zero is not a gap); a slot without one is blank. Rows are cached per data and size: a
    repaint with nothing new costs a lookup."""

    LEVELS = " ▁▂▃▄▅▆▇█"
    AXIS_MIN_WIDTH = 24  # narrower: the bars only (a one-row meter's plot beside its text)
    TICKS_MIN_HEIGHT = 4  # a row of time ticks only under three rows of bars or more
    COMPONENT_CLASSES: ClassVar[set[str]] = {"plot--bar", "plot--axis"}
    DEFAULT_CSS = """
    Plot { height: 1; }
    Plot > .plot--bar { color: $primary; }
    Plot > .plot--axis { color: $text-muted; }
    """

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._parts: Sequence[Sequence[float] | None] = []  # StackPlot's readings (its series holds their indices)
        self._shown: tuple[int, list] | None = None
        self._series: tuple = ((), (), 0.0, 0.0, max, 0.0)
        self._scale = (0.0, 1.0)
        self._fmt: Callable[[float], str] | None = None
        self._gutter = 0
        self.ticks = True  # a row of time ticks under the bars where there is room (off: a shared TimeAxis)
        self._columns: tuple[int, list[float | None]] | None = None
        self._strips: tuple[tuple, list[Strip]] | None = None
        self._drawn: tuple[int, list] | None = None  # _shows() of the bars last drawn
        self._styles: tuple[Style, ...] | None = None  # (the widget's, the bars', the axis', ...)

    def plot(self, times: Sequence[float | None], values: Sequence[float | None], start: float, end: float,
             scale: tuple[float, float], *, pick: Pick = max, hold_s: float = 0.0,
             fmt: Callable[[float], str] | None = None, gutter: int | None = None) -> None:
        """Show ``values`` (at ``times``) over the window ``start``..``end`` on ``scale`` (lo, hi).

        ``fmt`` writes a bound of the scale ("700 W"): given (once: it is kept), a plot with room
        shows the bounds at its left (at least ``gutter`` columns: plots above one another line up)
        and, taller, the window's time ticks under it."""
        self._series = (times, values, start, end, pick, hold_s)
        old_scale, self._scale = self._scale, scale
        self.set_axes(fmt, gutter)
        self._columns = None
        drawn = self._drawn
        if drawn is not None and self._strips is not None and scale == old_scale and self._shows(drawn[0]) == drawn:
            return  # every column shows what it showed: no repaint (most seconds of a 5-minute plot)
        self._strips = None
        self.refresh()

    def _shows(self, width: int) -> tuple[int, list]:
        """(width, what each column shows): two equal ones draw the same bars and bounds."""
        return width, list(self.columns(width))

    def set_axes(self, fmt: Callable[[float], str] | None, gutter: int | None = None) -> None:
        """How a bound of the scale is written, and the least width of the gutter it is written in
        (None: as it was)."""
        if fmt is not None:
            self._fmt = fmt
        if gutter is not None:
            self._gutter = gutter

    def bounds(self, width: int, height: int) -> tuple[float, float]:
        """The scale drawn: the given one widened to take in the readings."""
        lo, hi = self._scale
        seen = [v for v in self.columns(width) if v is not None]
        if seen:
            lo, hi = min(lo, min(seen)), max(hi, max(seen))
        return lo, hi

    def layout_of(self, width: int, height: int) -> tuple[int, int, bool]:
        """(the left gutter's width, the rows of bars, whether a tick row is under them) for a
        widget of ``width`` x ``height``: the axes only where they leave the bars room."""
        if self._fmt is None or height < 2 or width < self.AXIS_MIN_WIDTH:
            return 0, height, False
        fmt, ticks = self._fmt, self.ticks and height >= self.TICKS_MIN_HEIGHT
        gutter = max(self._gutter, *(len(fmt(v)) + 1 for v in self._scale))
        lo, hi = self.bounds(width - gutter, height - ticks)  # a reading outside the scale widens it
        return max(gutter, len(fmt(lo)) + 1, len(fmt(hi)) + 1), height - ticks, ticks

    def area(self) -> tuple[int, int]:
        """(columns, rows) of bars at the widget's size: what ``eighths`` is asked for."""
        gutter, rows, _ = self.layout_of(self.size.width, self.size.height)
        return self.size.width - gutter, rows

    def columns(self, width: int) -> list[float | None]:
        """What each column shows, computed once per data and width."""
        if self._columns is None or self._columns[0] != width:
            times, values, start, end, pick, hold_s = self._series
            start, end = grid_window(start, end, width)
            self._columns = (width, time_columns(times, values, start, end, width, pick=pick, hold_s=hold_s))
            self._shown = None
        return self._columns[1]

    def eighths(self, width: int, height: int) -> list[int | None]:
        """Each column's height in eighths of a row on the scale widened to its readings; None: blank.
        ``width`` x ``height``: the bars' area (``area()``), not counting the axes."""
        cols = self.columns(width)
        lo, hi = self.bounds(width, height)
        extent, top = (hi - lo) or 1.0, height * 8
        return [None if v is None else max(1, min(top, round((v - lo) / extent * top))) for v in cols]

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = None  # a theme or class change: read the colours again

    def render_line(self, y: int) -> Strip:
        """Called once per row per repaint: the colours are read once per style change (reading
        rich_style walks the ancestors' backgrounds, most of a repaint's cost), the rows once per
        data or size change."""
        if self._styles is None:
            self._styles = self._read_styles()
        base = self._styles[0]
        size = self.size
        if y >= size.height or size.width <= 0:
            return Strip.blank(size.width, base)
        key = (size, self._styles, self.ticks)
        if self._strips is None or self._strips[0] != key:
            gutter, rows, ticks = self.layout_of(size.width, size.height)
            bars = self._render_rows(size.width - gutter, rows, self._styles)
            self._drawn = self._shows(size.width - gutter)
            self._strips = (key, self._with_axes(bars, size.width, gutter, ticks, self._styles[0], self._styles[2]))
        return self._strips[1][y]

    def _read_styles(self) -> tuple[Style, ...]:
        base = self.rich_style
        return (base, base + Style(color=self.get_component_styles("plot--bar").color.rich_color),
                base + Style(color=self.get_component_styles("plot--axis").color.rich_color))

    def _with_axes(self, bars: list[Strip], width: int, gutter: int, ticks: bool, base: Style, axis: Style) -> list[Strip]:
        """The bars with the scale's bounds at their left (top and bottom row) and the time under them."""
        if not gutter:
            return bars
        bw, rows = width - gutter, len(bars)
        lo, hi = self.bounds(bw, rows)
        fmt = self._fmt or str
        marks = {0: fmt(hi), rows - 1: fmt(lo)}
        out = []
        for y, strip in enumerate(bars):
            label = marks.get(y, "")
            left = label.rjust(gutter - 1) + ("┤" if label else "│")
            out.append(Strip([Segment(left, axis), *strip], width))
        if ticks:
            _, _, start, end, _, _ = self._series
            out.append(Strip([Segment(" " * (gutter - 1) + "└" + tick_row(bw, max(end - start, 0.0)), axis)], width))
        return out

    def _render_rows(self, width: int, height: int, styles: tuple[Style, ...]) -> list[Strip]:
        """Each column built top to bottom (blank, its partial block, full blocks), then read across."""
        if width <= 0 or height <= 0:
            return [Strip.blank(max(width, 0), styles[0])] * max(height, 0)
        blank, columns = " " * height, []
        for e in self.eighths(width, height):
            if e is None:
                columns.append(blank)
            else:
                full, part = divmod(e, 8)
                columns.append((" " * (height - full - 1) + self.LEVELS[part] if part else " " * (height - full)) + "█" * full)
        return [Strip([Segment("".join(row), styles[1])], width) for row in zip(*columns)]



def _last(seen: list) -> Any:
    return seen[-1]


def _runs(cells: list[tuple[str, Style]]) -> list[Segment]:
    """A row of (character, style) cells as one segment per run of a style."""
    out: list[Segment] = []
    text, style = "", None
    for ch, st in cells:
        if st is style:
            text += ch
            continue
        if text:
            out.append(Segment(text, style))
        text, style = ch, st
    if text:
        out.append(Segment(text, style))
    return out


class StackPlot(Plot):
    """Parts of a whole over time, stacked bottom up in their own colours (the unified pool as G3
    attributes it: driver/GPU, processes, shmem, hugepages, cache), the last part (free) left
    blank: the top of the colours is what is in use. Each column shows the last reading of its
    slot; a slot without one (or whose parts were not read) is blank, never a stack of zeros. A
    boundary inside a row is drawn to an eighth: the lower part's colour, the upper's behind it."""

    LAYERS = 5
    COMPONENT_CLASSES: ClassVar[set[str]] = {"plot--bar", "plot--axis", *(f"stack--{i}" for i in range(LAYERS))}
    DEFAULT_CSS = """
    StackPlot { height: 1; }
    StackPlot > .plot--axis { color: $text-muted; }
    StackPlot > .stack--0 { color: $error; }
    StackPlot > .stack--1 { color: $warning; }
    StackPlot > .stack--2 { color: $primary; }
    StackPlot > .stack--3 { color: $secondary; }
    StackPlot > .stack--4 { color: $success; }
    """

    def stack(self, times: Sequence[float | None], parts: Sequence[Sequence[float] | None], start: float, end: float,
              total: float, *, hold_s: float = 0.0, fmt: Callable[[float], str] | None = None, gutter: int = 0) -> None:
        """``parts``: per reading, the bytes (or any unit) of each part bottom up, the blank top
        part last (or None: not read); drawn on 0..``total`` (widened to the largest sum)."""
        self._parts = parts  # asked only for the readings a column shows (a lazy Sequence is welcome)
        self._shown = None
        self.plot(times, range(len(parts)), start, end, (0.0, total), pick=_last, hold_s=hold_s, fmt=fmt, gutter=gutter)

    def _shows(self, width: int) -> tuple[int, list]:
        """As Plot's, by the parts each column shows (its readings' places in the ring move)."""
        return width, [None if p is None else list(p) for p in self.shown(width)]

    def shown(self, width: int) -> list[Sequence[float] | None]:
        """Each column's parts (None: blank), once per data and width."""
        if self._shown is None or self._shown[0] != width:
            self._shown = (width, [None if i is None else self._parts[int(i)] for i in self.columns(width)])
        return self._shown[1]

    def colours(self) -> list[Style]:
        """The parts' colours bottom up (the legend's swatches)."""
        if self._styles is None:
            self._styles = self._read_styles()
        return list(self._styles[3:])

    def bounds(self, width: int, height: int) -> tuple[float, float]:
        lo, hi = self._scale
        return lo, max([hi, *(sum(p) for p in self.shown(width) if p is not None)])

    def _read_styles(self) -> tuple[Style, ...]:
        base, _, axis = super()._read_styles()
        return (base, base, axis, *(base + Style(color=self.get_component_styles(f"stack--{i}").color.rich_color)
                                    for i in range(self.LAYERS)))

    def _render_rows(self, width: int, height: int, styles: tuple[Style, ...]) -> list[Strip]:
        """Each cell: the part at its bottom eighth, and where the next part begins inside it, that
        one's colour behind a block as high as the lower part reaches."""
        base, layers = styles[0], styles[3:]
        if width <= 0 or height <= 0:
            return [Strip.blank(max(width, 0), base)] * max(height, 0)
        _, hi = self.bounds(width, height)
        top = height * 8
        mixed: dict[tuple[int, int], Style] = {}  # (part, the part above) -> its style, built once

        def style_of(k: int, above: int | None) -> Style:
            if above is None:
                return layers[k]
            st = mixed.get((k, above))
            if st is None:
                st = mixed[(k, above)] = layers[k] + Style(bgcolor=layers[above].color)
            return st

        cells: list[list[tuple[str, Style]]] = [[(" ", base)] * width for _ in range(height)]
        for x, shown in enumerate(self.shown(width)):
            if shown is None:
                continue
            drawn = list(shown)[:-1][:len(layers)]  # the last part (free) stays blank
            edges, acc = [], 0.0
            for v in drawn:
                acc += max(v, 0.0)
                edges.append(max(round(acc / (hi or 1.0) * top), 1 if acc > 0 else 0))  # held: an eighth at least
            n, k = len(edges), 0
            for row in range(height):  # row 0 at the bottom
                low = row * 8
                while k < n and edges[k] <= low:
                    k += 1  # the part at this row's bottom eighth
                if k == n:
                    break  # free from here up: blank
                cut = edges[k] - low
                if cut >= 8:
                    cells[height - 1 - row][x] = ("█", layers[k])
                    continue
                j = k + 1
                while j < n and edges[j] <= low + cut:
                    j += 1  # the part that begins where this one ends (an empty one skipped)
                cells[height - 1 - row][x] = (self.LEVELS[cut], style_of(k, j if j < n else None))
        return [Strip(_runs(row), width) for row in cells]


class TimeAxis(Widget):
    """One row of time ticks ("-5m … -2.5m … now") for the plots above it, which share its width,
    their ``gutter`` and their window (side by side: one row for every plot, not one each)."""

    DEFAULT_CSS = "TimeAxis { height: 1; color: $text-muted; }"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._key: tuple = (0, 0.0)
        self._strip: tuple[tuple, Strip] | None = None

    def set_window(self, gutter: int, span_s: float) -> None:
        if (gutter, span_s) != self._key:
            self._key, self._strip = (gutter, span_s), None
            self.refresh()

    def render_line(self, y: int) -> Strip:
        width, base = self.size.width, self.rich_style
        if y != 0 or width <= 0:
            return Strip.blank(width, base)
        key = (width, base, self._key)
        if self._strip is None or self._strip[0] != key:
            gutter, span = self._key
            text = " " * max(gutter - 1, 0) + ("└" if gutter else "") + tick_row(width - gutter, span)
            self._strip = (key, Strip([Segment(text[:width], base)], width))
        return self._strip[1]
