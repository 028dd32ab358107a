"""A cheap one-line sparkline."""

from __future__ import annotations

from typing import Any

from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

from sparktui.ui.format import bucket_max


class SparkLine(Widget):
    """A one-line sparkline drawn as one cached Strip, rebuilt only when its data or size changes.

    Textual's Sparkline re-buckets its data with Fractions and renders through Rich on every
    repaint: ~0.6 ms each, five meters a second, the largest share of the dashboard's idle CPU.
    This one looks the same (bars low to high, colour blended from the min to the max colour,
    the same component classes) and costs a list lookup when nothing changed."""

    BARS = "▁▂▃▄▅▆▇█"
    COMPONENT_CLASSES = {"sparkline--min-color", "sparkline--max-color"}
    DEFAULT_CSS = """
    SparkLine { height: 1; }
    SparkLine > .sparkline--max-color { color: $primary; }
    SparkLine > .sparkline--min-color { color: $primary 30%; }
    """

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._data: list[float] = []
        self._strip: tuple[tuple, Strip] | None = None
        self._styles: tuple[tuple, dict[tuple[int, int, int], Style]] = ((), {})

    @property
    def data(self) -> list[float]:
        return self._data

    @data.setter
    def data(self, values: list[float]) -> None:
        values = list(values)
        if values != self._data:
            self._data, self._strip = values, None
            self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        if y != 0 or width <= 0:
            return Strip.blank(width, base)
        _, bg = self.background_colors
        lo = (bg + self.get_component_styles("sparkline--min-color").color).rich_color
        hi = (bg + self.get_component_styles("sparkline--max-color").color).rich_color
        key = (width, base, lo, hi)  # new data drops the strip (the setter)
        if self._strip is None or self._strip[0] != key:
            self._strip = (key, Strip(self._segments(width, base, lo, hi), width))
        return self._strip[1]

    def _segments(self, width: int, base: Style, lo: Color, hi: Color) -> list[Segment]:
        data = self._data
        if not data:
            return [Segment("▁" * width, base + Style(color=lo))]
        if len(data) == 1:
            return [Segment("█" * width, base + Style(color=hi))]
        low, extent = min(data), (max(data) - min(data)) or 1  # of the series, as Textual scales it
        data = bucket_max(data, width)
        top = len(self.BARS) - 1
        # One point per column; fewer points than columns: each spans several. The index is
        # accumulated, not col * step: Textual's float steps pick the same points that way.
        step, at, ratios = len(data) / width, 0.0, []
        for _ in range(width):
            ratios.append((data[int(at)] - low) / extent)
            at += step
        if lo.triplet is None or hi.triplet is None:  # no RGB to blend (an ANSI theme): Textual uses max
            return [Segment(self.BARS[int(r * top)], base + Style(color=hi)) for r in ratios]
        # Colours blended in straight RGB and truncated, as Textual's sparkline does; one Style per
        # distinct colour, kept while the theme lasts (building Styles was most of a rebuild).
        if self._styles[0] != (base, lo, hi):
            self._styles = ((base, lo, hi), {})
        styles = self._styles[1]
        (r1, g1, b1), (r2, g2, b2) = lo.triplet, hi.triplet
        out = []
        for ratio in ratios:
            rgb = (int(r1 + (r2 - r1) * ratio), int(g1 + (g2 - g1) * ratio), int(b1 + (b2 - b1) * ratio))
            style = styles.get(rgb)
            if style is None:
                style = styles[rgb] = base + Style(color=Color.from_rgb(*rgb))
            out.append(Segment(self.BARS[int(ratio * top)], style))
        return out
