"""Outside text for Textual widgets: ``rich.text.Text`` built from core/inert.py's visible text.

A widget given a ``str`` parses it as Textual markup: a process named ``[/]`` or an argv holding
``[X="]`` raised MarkupError and ended the dashboard (exit 1), and ``[b]`` would style it. A
``Text`` is never parsed; its characters are drawn as they are, so control, bidi and invisible
characters are made visible first (``\\e``, ``\\x9b``, ``\\u202e``): an ESC must not reach the
terminal (a title change, a cleared screen, OSC 52 writing the clipboard).

- ``plain(s, style)``: one line (a table cell, a title, a finding).
- ``plain_lines(s, style)``: text whose own line breaks are kept (a notification, a dialog's body).
- ``assemble(*parts)``: a ``Text`` of pieces, each a str (outside: made visible) or (str, style),
  or a ``Text`` already built (kept as it is).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from sparktui.core.inert import visible, visible_lines

__all__ = ["assemble", "plain", "plain_lines", "visible", "visible_lines"]


def plain(s: object, style: str = "", **kw: Any) -> Text:
    """``s`` on one line as a ``Text``: never markup, controls and line breaks shown visibly."""
    return Text(visible(s), style=style, **kw)


def plain_lines(s: object, style: str = "", **kw: Any) -> Text:
    """As ``plain``, but ``s``'s own line breaks stay line breaks."""
    return Text(visible_lines(s), style=style, **kw)


def assemble(*parts: Any, **kw: Any) -> Text:
    """A ``Text`` of ``parts``: a ``Text`` as it is, a str or ``(str, style)`` made visible
    (line breaks kept: a part that is one line is the caller's to make one)."""
    out = Text(**kw)
    for part in parts:
        if isinstance(part, Text):
            out.append_text(part)
        elif isinstance(part, tuple):
            out.append(visible_lines(part[0]), style=part[1])
        else:
            out.append(visible_lines(part))
    return out
