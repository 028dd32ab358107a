"""When something happened in a recording, said the same way by every judge in review mode.

Review mode (``check --replay``) reports the worst window or moment of a whole recording; a user
needs both the clock time (to match logs) and the offset from the recording's start (to find it
in the replay). Pure formatting, no I/O.
"""

from __future__ import annotations

import math
import time


def offset_text(seconds: float) -> str:
    """``+HH:MM:SS`` for a non-negative offset in seconds (negative offsets are shown as ``-``)."""
    sign = "+" if seconds >= 0 else "-"
    s = int(round(abs(seconds)))
    return f"{sign}{s // 3600:02d}:{(s % 3600) // 60:02d}:{s % 60:02d}"


def when_text(t: float, t0: float | None) -> str:
    """``"14:03:10 UTC (+00:23:10)"``: clock time of ``t`` and its offset from ``t0``.

    ``t`` and ``t0`` are Unix times in seconds. Without ``t0`` only the clock time is given;
    a time that is not a finite number is said as such rather than formatted.
    """
    try:
        tf = float(t)
    except (TypeError, ValueError):
        return "at an unknown time"
    if not math.isfinite(tf):
        return "at an unknown time"
    try:
        clock = time.strftime("%H:%M:%S UTC", time.gmtime(tf))
    except (OverflowError, OSError, ValueError):  # a year no clock has (t = 1e308 in an edited file)
        return f"at an impossible time (t = {tf:g})"
    if t0 is None:
        return clock
    try:
        t0f = float(t0)
    except (TypeError, ValueError):
        return clock
    if not math.isfinite(t0f):
        return clock
    return f"{clock} ({offset_text(tf - t0f)})"
