"""A labelled value with a plot of its history."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Container

from sparktui.ui.widgets.plot import Plot
from sparktui.ui.widgets.text import TextLine, set_content


class Meter(Container):
    """A label, a line of text (the value first, then what fits of the rest) and a Plot.

    Laid out by CSS: in a row (label, text, a one-row plot) where room is short, or with the
    label and text above a plot as tall as the meter where there is room."""

    def __init__(self, label: str, meter_id: str) -> None:
        super().__init__(id=meter_id, classes="meter")
        self._label = label
        self._parts: tuple[str, ...] = ("—",)

    def compose(self) -> ComposeResult:
        self._value = TextLine("—", classes="meter-value")
        self.plot = Plot(classes="meter-plot")
        yield TextLine(self._label, classes="meter-label")
        yield self._value
        yield self.plot

    def show(self, parts: Sequence[str]) -> None:
        """``parts``: the value, then details in the order they are worth the room (a part that
        does not fit is left out whole, with the ones after it, never cut in the middle)."""
        self._parts = tuple(parts)
        self._fit()

    @property
    def text(self) -> str:
        return self._value.render().plain

    def _fit(self) -> None:
        room = self._value.size.width or 1_000
        line = self._parts[0] if self._parts else ""
        for part in self._parts[1:]:
            if len(line) + 2 + len(part) > room:
                break
            line += "  " + part
        set_content(self._value, line)

    def on_resize(self) -> None:
        self._fit()  # the first values may arrive before the layout knows the width
