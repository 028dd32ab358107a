"""Small formatters shared by the widgets (pure)."""

from __future__ import annotations

from sparktui.core.verdict import Status

STATUS_STYLE = {
    Status.OK: "bold green",
    Status.WARN: "bold yellow",
    Status.FAIL: "bold red",
    Status.UNKNOWN: "bold magenta",
    Status.SKIP: "dim",
}
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def age(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    s = max(0, int(seconds))
    if s < 60:
        return "<1m"  # minute granularity: the checklist repaints once a minute, not every second
    if s < 3600:
        return f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d{(s % 86400) // 3600}h"


def duration(seconds: float) -> str:
    """h:mm, so the header changes once a minute."""
    s = max(0, int(seconds))
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def gib(v: float | int | None) -> str:
    return "?" if v is None else f"{v / 2**30:.1f}"


def bucket_max(values: list, width: int) -> list[float]:
    """Downsample a series to at most ``width`` points (max per bucket), skipping None."""
    vals = [float(v) for v in values if v is not None]
    if width <= 0 or len(vals) <= width:
        return vals
    out = []
    step = len(vals) / width
    for i in range(width):
        chunk = vals[int(i * step): max(int((i + 1) * step), int(i * step) + 1)]
        out.append(max(chunk))
    return out
