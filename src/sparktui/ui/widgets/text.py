"""One-line text widgets updated without a layout pass (a 1 Hz dashboard must not re-layout every second)."""

from __future__ import annotations

import weakref
from typing import Any

from rich.segment import Segment
from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from sparktui.ui.format import CONTINUATION_INDENT, CONTINUED, code_rows  # noqa: F401 (shared with the CLI)
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


# -- code that wraps instead of being cut ---------------------------------------------------------

class WrappedCode:
    """A Rich renderable: a code block wrapped to the width it is given (code_rows), the marks
    dimmed; a wide code line no longer hides its end past the edge of a card."""

    def __init__(self, code: str, style: str = "") -> None:
        self.code, self.style = code, style

    def __rich_console__(self, console: Any, options: Any):
        width = options.max_width
        for line in self.code.split("\n"):
            for row in code_rows(line, width):
                text = plain(row, style=self.style)
                if row.endswith(CONTINUED):
                    text.stylize("dim", len(row) - 1)
                yield text

    def __rich_measure__(self, console: Any, options: Any):
        from rich.measure import Measurement

        longest = max((len(line) for line in self.code.split("\n")), default=0)
        return Measurement(min(len(CONTINUATION_INDENT) + 2, options.max_width), min(longest + 1, options.max_width))


_wrapping_markdown: type | None = None


def wrapping_markdown(text: str, **kwargs: Any) -> Widget:
    """Textual's Markdown widget whose code blocks wrap (WrappedCode) instead of scrolling sideways
    behind a hidden scrollbar: one scrollbar (the view's), and nothing past the edge. Textual's
    Markdown is imported on first use (markdown-it and pygments: the first screen does not need them)."""
    global _wrapping_markdown
    if _wrapping_markdown is None:
        from contextlib import suppress

        from textual.css.query import NoMatches
        from textual.widgets import Markdown
        from textual.widgets.markdown import MarkdownFence

        class WrappedFence(MarkdownFence):
            DEFAULT_CSS = """
            WrappedFence { overflow: hidden hidden; }
            WrappedFence > #code-content { width: 1fr; height: auto; padding: 1 2; }
            WrappedFence:ansi > #code-content { padding: 1 0; }
            """

            @property
            def allow_horizontal_scroll(self) -> bool:
                return False

            def set_content(self, content: Any) -> None:
                self._content = content
                with suppress(NoMatches):
                    self.query_one("#code-content", Static).update(WrappedCode(self.code))

            def compose(self):
                yield Static(WrappedCode(self.code), id="code-content")

        class WrappingMarkdown(Markdown):
            BLOCKS = {**Markdown.BLOCKS, "fence": WrappedFence, "code_block": WrappedFence}

        _wrapping_markdown = WrappingMarkdown
    return _wrapping_markdown(text, **kwargs)
