"""Results sparktui keeps between runs (the last G5 bandwidth measurement), read without side effects."""

from __future__ import annotations

import json
import time

from sparktui.core.config import Config, default_state_dir
from sparktui.core.readings import Reading


def bandwidth_path():
    return default_state_dir() / "bandwidth-last.json"


def read_bandwidth_last(cfg: Config) -> Reading:
    p = bandwidth_path()
    started = time.time()
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Reading("bandwidth_last", None, error="no bandwidth measurement yet", source=str(p), started_at=started)
    except (OSError, ValueError) as e:
        return Reading("bandwidth_last", None, error=f"unreadable: {e}", source=str(p), started_at=started)
    if not isinstance(data, dict):
        return Reading("bandwidth_last", None, error="unreadable: not a JSON object", source=str(p), started_at=started)
    return Reading("bandwidth_last", data, source=str(p), started_at=started)
