"""Reusable widgets: nothing here knows about gotchas, processes or playbooks (those are ui/panels)."""

from sparktui.ui.widgets.meter import Meter
from sparktui.ui.widgets.plot import Plot
from sparktui.ui.widgets.tables import BoundedTable
from sparktui.ui.widgets.text import TextLine, set_content

__all__ = ["BoundedTable", "Meter", "Plot", "TextLine", "set_content"]
