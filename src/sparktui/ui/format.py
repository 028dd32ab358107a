"""Small formatters shared by the widgets (pure)."""

from __future__ import annotations

from typing import Any

from sparktui.core.units import age_compact, duration_hm, is_number
from sparktui.core.units import gib as units_gib
from sparktui.core.verdict import Status

# Status colours as RGB, not ANSI names: Textual maps "red" and "magenta" through the theme's ANSI
# palette, where they came out nearly the same (a machine without a GPU looked like a wall of
# failures). Chosen so each stays distinct when a terminal downgrades it: 256 colours (71, 179, 203,
# 75, 246) and 16 colours (bright green, yellow, red, blue; white). Under NO_COLOR the glyphs alone
# (core/verdict.py: ✔ ▲ ✘ ? –) tell them apart. Light themes get darker shades of the same hues.
STATUS_RGB = {
    True: {Status.OK: "#3fb950", Status.WARN: "#e3b341", Status.FAIL: "#f85149", Status.UNKNOWN: "#58a6ff",
           Status.SKIP: "#8b949e"},
    False: {Status.OK: "#1f883d", Status.WARN: "#9a6700", Status.FAIL: "#cf222e", Status.UNKNOWN: "#0969da",
            Status.SKIP: "#6e7781"},
}


# Under NO_COLOR (Textual greys every colour by its brightness, and red came out darker than
# yellow: a failure looked quieter than a warning) the worse a status, the louder: inverse, bold.
NO_COLOR_STYLES = {Status.FAIL: "bold reverse", Status.WARN: "bold", Status.UNKNOWN: "", Status.OK: "",
                   Status.SKIP: "dim"}


def status_styles(dark: bool = True, no_color: bool = False) -> dict[Status, str]:
    """Rich style strings per status for a dark (default) or light theme; with ``no_color`` (the
    app's ``no_color``: NO_COLOR was set) by severity without colour."""
    if no_color:
        return dict(NO_COLOR_STYLES)
    return {st: (f"bold {rgb}" if st is not Status.SKIP else rgb) for st, rgb in STATUS_RGB[bool(dark)].items()}


STATUS_STYLE = status_styles(True)
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

# A code line wider than its room wraps (a card's fix, `sparktui explain` on a terminal): ui/widgets/text.py
CONTINUED = "↩"  # ends a code line's part that goes on below
CONTINUATION_INDENT = "    "  # where the rest of a wrapped code line starts


def code_rows(line: str, width: int) -> list[str]:
    """One line of code as rows of at most ``width`` cells, never cut without a mark: each row that
    goes on ends with ``CONTINUED`` and the rest starts on the next row after
    ``CONTINUATION_INDENT``. A row breaks after the last space that fits (a `--flag value` stays
    whole where it can), else mid-word (a URL longer than the row). The marks are for the eye
    only: what is copied is the line as written."""
    width = max(width, len(CONTINUATION_INDENT) + 2)
    rows: list[str] = []
    lead, rest = "", line.rstrip()
    while len(lead) + len(rest) > width:
        room = width - len(lead) - 1  # the mark takes one cell
        space = rest.rfind(" ", 1, room)
        take = space + 1 if space > 0 else room
        rows.append(lead + rest[:take] + CONTINUED)
        lead, rest = CONTINUATION_INDENT, rest[take:]
    return rows + [lead + rest]


def age(seconds: float | None) -> str:
    """At most 5 characters (the checklist's age column): "<1m", "42m", "9h05m", "14h", "2d3h"."""
    return age_compact(seconds)


def bandwidth_line(result: Any, now: float) -> str | None:
    """The telemetry panel's G5 line from a measurement (the kept one, or one just made); None
    when there is no usable figure. Short enough for the narrowest telemetry panel (46 columns)."""
    if not isinstance(result, dict) or result.get("status", "ok") != "ok":
        return None
    copy, read, at = result.get("copy_gbs"), result.get("read_gbs"), result.get("measured_at")
    if not is_number(copy):  # a NaN figure is no figure (it read "bandwidth nan GB/s")
        return None
    text = f"bandwidth {copy:.0f} GB/s copy"
    if is_number(read):
        text += f", {read:.0f} read"
    if is_number(at):
        text += f", {age(now - at)} ago" if now - at >= 60 else ", just now"
    return text


_REASONS = (("LIBRARY_NOT_FOUND", "no NVML library"), ("DRIVER_NOT_LOADED", "driver not loaded"),
            ("NO_PERMISSION", "no permission"), ("NOT_SUPPORTED", "not supported"), ("GPU_IS_LOST", "GPU lost"),
            ("UNINITIALIZED", "NVML not started"), ("TIMEOUT", "timed out"))


def short_reason(error: str | None, width: int = 20) -> str:
    """An NVML error in a few words for a meter or the header (the card has the whole text):
    "nvmlInit failed: LIBRARY_NOT_FOUND (NVML ...)" -> "no NVML library"."""
    text = error or "unavailable"
    for code, words in _REASONS:
        if code in text:
            return words
    text = text.split(" (")[0]
    return text if len(text) <= width else text[:width - 1] + "…"


def duration(seconds: float) -> str:
    """h:mm, so the header changes once a minute."""
    return duration_hm(seconds)


def gib(v: float | int | None) -> str:
    """GiB with one decimal and no unit (a table column says it); "?" for no number."""
    return units_gib(v, unit="")
