"""One meaning of a number, a size, an age and a time, for every layer (pure, no I/O).

A *number* is an ``int`` or a ``float``, never a ``bool``, and finite: NaN and the infinities are
not numbers (a reading of NaN is a measurement error, never a figure a verdict can rest on), nor is
an ``int`` past what a float can hold (a judge's float arithmetic on it would overflow). Every
judge, probe boundary and widget asks :func:`is_number`; none keeps its own copy.

Sizes are said in GiB (1024 ** 3 bytes, as ``/proc/meminfo`` and NVML count). Ages are said in a
few styles, each kept where a screen or a verdict's text already uses it; clock times are UTC for
verdicts and reports (they are compared with other machines' logs) and local for the dashboard.
Nothing here raises on odd input: a value that is not a number gives words ("?", "at an unknown
time"), never an exception.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, TypeGuard

GIB = 1024 ** 3
MIB = 1024 ** 2
KIB = 1024
_FLOAT_MAX = sys.float_info.max


# --- numbers --------------------------------------------------------------------------------------
def is_number(v: Any) -> TypeGuard[int | float]:
    """A real number: an int or float (not a bool), finite; an int no larger than a float holds."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    if isinstance(v, int):
        return -_FLOAT_MAX <= v <= _FLOAT_MAX
    return math.isfinite(v)


def number_or_none(v: Any) -> int | float | None:
    """``v`` when it is a number (:func:`is_number`), else None (an edited snapshot's "N/A", NaN)."""
    return v if is_number(v) else None


def as_number(v: Any) -> float | None:
    """``float(v)`` for anything ``float()`` reads (numbers, numeric strings), None unless finite."""
    if isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        return None
    return f if math.isfinite(f) else None


# --- sizes ----------------------------------------------------------------------------------------
def gib(n_bytes: Any, digits: int = 1, unit: str = " GiB", missing: str = "?") -> str:
    """``"12.3 GiB"`` for a byte count; ``missing`` when it is not a number."""
    return f"{n_bytes / GIB:.{digits}f}{unit}" if is_number(n_bytes) else missing


def size_text(n_bytes: Any, missing: str = "?") -> str:
    """A size as a person reads it: GiB from 1 GiB, MiB from 1 MiB, else whole KiB (never "0.0 GiB")."""
    if not is_number(n_bytes) or n_bytes < 0:
        return missing
    if n_bytes >= GIB:
        return f"{n_bytes / GIB:.1f} GiB"
    if n_bytes >= MIB:
        return f"{n_bytes / MIB:.1f} MiB"
    return f"{int(n_bytes // KIB)} KiB"


# --- ages and durations ---------------------------------------------------------------------------
def age_compact(seconds: Any) -> str:
    """At most 5 characters (a table column): "<1m", "42m", "9h05m", "14h", "2d3h"; "—" without one.

    Minute granularity: a column repainted once a minute never shows seconds. A negative age (a clock
    stepped back) reads as "<1m"."""
    if not is_number(seconds):
        return "—"
    s = max(0, int(seconds))
    if s < 60:
        return "<1m"
    if s < 3600:
        return f"{s // 60}m"
    if s < 36000:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    if s < 86400:
        return f"{s // 3600}h"
    return f"{s // 86400}d{(s % 86400) // 3600}h"


def age_text(seconds: Any, missing: str = "?") -> str:
    """An age in words, as a measurement's evidence says it: "42 s", "3 min", "1.5 h", "2.0 days".

    A negative age is said as 0 s (a clock stepped back is not a future)."""
    if not is_number(seconds):
        return missing
    s = max(0.0, float(seconds))
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    if s < 172800:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} days"


def age_rounded(seconds: Any, missing: str = "?") -> str:
    """An age rounded to its largest unit, for a listing: "42 s", "3 min", "5 h", "2 d".

    Numeric strings are read as numbers (a kept file's "3600"); a negative age is said as 0 s."""
    f = as_number(seconds) if isinstance(seconds, (int, float, str)) else None
    if f is None:
        return missing
    s = max(0.0, f)
    if s < 90:
        return f"{s:.0f} s"
    if s < 90 * 60:
        return f"{s / 60:.0f} min"
    if s < 48 * 3600:
        return f"{s / 3600:.0f} h"
    return f"{int(s // 86400)} d"


def duration_hm(seconds: Any) -> str:
    """``"1h02m"``: hours and minutes, so a header changes once a minute; negative or no number is 0."""
    s = max(0, int(seconds)) if is_number(seconds) else 0
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def offset_text(seconds: float) -> str:
    """``+HH:MM:SS`` for a non-negative offset in seconds (negative offsets are shown as ``-``)."""
    sign = "+" if seconds >= 0 else "-"
    s = int(round(abs(seconds)))
    return f"{sign}{s // 3600:02d}:{(s % 3600) // 60:02d}:{s % 60:02d}"


# --- clock times ----------------------------------------------------------------------------------
def utc_text(t: Any, fmt: str = "%Y-%m-%d %H:%M:%S UTC") -> str | None:
    """``t`` (Unix seconds) as a UTC clock time; None when it is no time a clock has (NaN, 1e308)."""
    f = as_number(t)
    if f is None:
        return None
    try:
        return time.strftime(fmt, time.gmtime(f))
    except (OverflowError, OSError, ValueError):
        return None


def local_text(t: Any, fmt: str = "%Y-%m-%d %H:%M:%S") -> str | None:
    """``t`` (Unix seconds) as a local clock time; None when it is no time a clock has."""
    f = as_number(t)
    if f is None:
        return None
    try:
        return time.strftime(fmt, time.localtime(f))
    except (OverflowError, OSError, ValueError):
        return None


def when_text(t: Any, t0: Any) -> str:
    """``"14:03:10 UTC (+00:23:10)"``: clock time of ``t`` and its offset from ``t0``.

    How review mode says when something happened in a recording: the clock time (to match logs)
    and the offset from the recording's start (to find it in the replay). Without a usable ``t0``
    only the clock time is given; a time that is not a finite number is said as such.
    """
    tf = as_number(t)
    if tf is None:
        return "at an unknown time"
    clock = utc_text(tf, "%H:%M:%S UTC")
    if clock is None:  # a year no clock has (t = 1e308 in an edited file)
        return f"at an impossible time (t = {tf:g})"
    t0f = as_number(t0) if t0 is not None else None
    return clock if t0f is None else f"{clock} ({offset_text(tf - t0f)})"
