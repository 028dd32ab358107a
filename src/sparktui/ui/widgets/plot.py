"""A plot of a time series on a fixed scale, one or more rows of eighth blocks, newest on the right."""

from __future__ import annotations

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
    COMPONENT_CLASSES: ClassVar[set[str]] = {"plot--bar"}
    DEFAULT_CSS = """
    Plot { height: 1; }
    Plot > .plot--bar { color: $primary; }
    """

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._series: tuple = ((), (), 0.0, 0.0, max, 0.0)
        self._scale = (0.0, 1.0)
        self._columns: tuple[int, list[float | None]] | None = None
        self._strips: tuple[tuple, list[Strip]] | None = None
        self._styles: tuple[Style, Style] | None = None  # (the widget's, the bars')

    def plot(self, times: Sequence[float | None], values: Sequence[float | None], start: float, end: float,
             scale: tuple[float, float], *, pick: Pick = max, hold_s: float = 0.0) -> None:
        """Show ``values`` (at ``times``) over the window ``start``..``end`` on ``scale`` (lo, hi)."""
        self._series = (times, values, start, end, pick, hold_s)
        self._scale = scale
        self._columns = self._strips = None
        self.refresh()

    def columns(self, width: int) -> list[float | None]:
        """What each column shows, computed once per data and width."""
        if self._columns is None or self._columns[0] != width:
            times, values, start, end, pick, hold_s = self._series
            self._columns = (width, time_columns(times, values, start, end, width, pick=pick, hold_s=hold_s))
        return self._columns[1]

    def eighths(self, width: int, height: int) -> list[int | None]:
        """Each column's height in eighths of a row on the scale widened to its readings; None: blank."""
        cols = self.columns(width)
        seen = [v for v in cols if v is not None]
        lo, hi = self._scale
        if seen:
            lo, hi = min(lo, min(seen)), max(hi, max(seen))
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
            base = self.rich_style
            self._styles = (base, base + Style(color=self.get_component_styles("plot--bar").color.rich_color))
        base, bar = self._styles
        size = self.size
        if y >= size.height or size.width <= 0:
            return Strip.blank(size.width, base)
        key = (size, base, bar)
        if self._strips is None or self._strips[0] != key:
            self._strips = (key, self._render_rows(size.width, size.height, bar))
        return self._strips[1][y]

    def _render_rows(self, width: int, height: int, bar: Style) -> list[Strip]:
        """Each column built top to bottom (blank, its partial block, full blocks), then read across."""
        blank, columns = " " * height, []
        for e in self.eighths(width, height):
            if e is None:
                columns.append(blank)
            else:
                full, part = divmod(e, 8)
                columns.append((" " * (height - full - 1) + self.LEVELS[part] if part else " " * (height - full)) + "█" * full)
        return [Strip([Segment("".join(row), bar)], width) for row in zip(*columns)]
