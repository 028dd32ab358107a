"""A labelled value with a sparkline of its history."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal

from sparktui.ui.format import bucket_max
from sparktui.ui.widgets.sparkline import SparkLine
from sparktui.ui.widgets.text import TextLine, set_content


class Meter(Horizontal):
    """A label, the current value with units, and a sparkline of the session's history."""

    def __init__(self, label: str, meter_id: str) -> None:
        super().__init__(id=meter_id, classes="meter")
        self._label = label

    def compose(self) -> ComposeResult:
        self._value = TextLine("—", classes="meter-value")
        self._spark = SparkLine(classes="meter-spark")
        yield TextLine(self._label, classes="meter-label")
        yield self._value
        yield self._spark

    def show(self, value: str, series: list | None = None, *, below: float | None = None) -> None:
        """``below``: plot ``below - x`` (memory used from MemAvailable), flipped after bucketing
        so an hour of samples is not copied each second."""
        set_content(self._value, value)
        if series is not None:
            self._series, self._below = series, below
            self._fit()

    def _fit(self) -> None:
        """One bucket per column of the sparkline as it is now laid out."""
        series = getattr(self, "_series", None)
        if series is None:
            return
        spark = self._spark
        width = max(8, spark.size.width or 30)
        if self._below is None:
            data = bucket_max(series, width)
        else:  # the max of (below - x) over a bucket is below - its min
            data = [self._below - v for v in bucket_max(series, width, pick=min)]
        spark.data = data  # a no-op when the picture did not change

    def on_resize(self) -> None:
        self._fit()  # the first samples may arrive before the layout knows the width
