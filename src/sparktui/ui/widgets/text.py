"""One-line text widgets updated without a layout pass (a 1 Hz dashboard must not re-layout every second)."""

from __future__ import annotations

import weakref
from typing import Any

from rich.segment import Segment
from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from sparktui.ui.inert import plain, plain_lines


# What each widget last showed (set_content): kept beside the widget, not as an attribute set on
# Textual's own Static; gone with the widget.
_shown: weakref.WeakKeyDictionary[Widget, str] = weakref.WeakKeyDictionary()


def set_content(widget: Static | TextLine, content: Any) -> None:
    """Update a fixed-size text widget only when its content changed, without a layout pass
    (a 1 Hz dashboard must not re-layout the screen every second). A str is plain text, never
    markup, its controls made visible (ui/inert.py); a Text is drawn as it was built."""
    key = content.plain + str(content.spans) if isinstance(content, Text) else str(content)
    if _shown.get(widget) == key:
        return  # unchanged: nothing built (a str is made visible only when it changed)
    _shown[widget] = key
    widget.update(content if isinstance(content, Text) else plain_lines(content), layout=False)



class TextLine(Widget):
    """One line of text drawn as one cached Strip (the meters' values change every second).

    A Label re-wraps and re-formats its content on every repaint; this builds the line once
    per change. ``update`` takes a str (plain, no markup) or a rich Text. Meant for unstyled
    text: Textual draws a "dim" style through its own content path, which this skips."""

    DEFAULT_CSS = "TextLine { height: 1; }"

    def __init__(self, content: str | Text = "", **kw: Any) -> None:
        super().__init__(**kw)
        self._text = content if isinstance(content, Text) else plain(content)
        self._strip: tuple[tuple, Strip] | None = None

    def update(self, content: str | Text = "", *, layout: bool = False) -> None:
        self._text = content if isinstance(content, Text) else plain(content)
        self._strip = None
        self.refresh(layout=layout)

    def render(self) -> Text:
        return self._text

    def render_line(self, y: int) -> Strip:
        width, base = self.size.width, self.rich_style
        if y != 0 or width <= 0:
            return Strip.blank(width, base)
        key = (width, base)
        if self._strip is None or self._strip[0] != key:
            text = self._text.copy()
            text.truncate(width, overflow="ellipsis")
            segments = Segment.apply_style(text.render(self.app.console, end=""), base)
            self._strip = (key, Strip(segments).adjust_cell_length(width, base))
        return self._strip[1]
