"""Shape checks of data that crosses a process boundary (a probe child's JSON, a kept file): both
the probe that receives it and the judge that reads it use them, so neither imports the other."""

from __future__ import annotations

import math


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _show(v: object) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


# Every figure judge_result formats: (field, what its absence means, or None when it may be absent,
# lower bound, bound is exclusive).
_NUMBERS = (("copy_gbs", "no copy figure", 0.0, True), ("read_gbs", None, 0.0, True),
            ("buffer_bytes", None, 0.0, False), ("iterations", None, 0.0, False), ("repeats", None, 0.0, False),
            ("spread_pct", None, 0.0, False), ("measured_at", None, 0.0, True))


def bandwidth_result_problem(res: object) -> str | None:
    """Why a measured result cannot be judged, naming the field; None when it can.

    A kept file can be edited or torn, and a target interpreter can print anything on its event
    channel: each figure is checked before it is formatted, so bad data reads as unknown, never as
    a crash or a made-up figure.
    """
    if not isinstance(res, dict):
        return f"not a JSON object ({type(res).__name__})"
    for name, missing, low, exclusive in _NUMBERS:
        v = res.get(name)
        if v is None:
            if missing is not None:
                return f"{name} is missing ({missing})"
            continue
        if not _is_number(v):
            return f"{name} is {_show(v)}, not a number"
        if not math.isfinite(v):
            return f"{name} is {_show(v)}, not a finite number"
        if v < low or (exclusive and v == low):
            return f"{name} is {_show(v)}, must be {'over' if exclusive else 'at least'} {low:g}"
    dev = res.get("device")
    if dev is not None and not isinstance(dev, str):
        return f"device is {_show(dev)}, not a device name"
    return None


