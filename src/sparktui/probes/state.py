"""Results sparktui keeps between runs (the last G5 bandwidth measurement), read without side effects."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import cast

from sparktui.core.config import Config, default_state_dir
from sparktui.core.readings import Reading
from sparktui.core.shapes import BandwidthResult


def bandwidth_path() -> Path:
    return default_state_dir() / "bandwidth-last.json"


def read_bandwidth_last(cfg: Config) -> Reading[BandwidthResult]:
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
    # A file on disk can hold anything: G5 checks every figure it uses (g05 result_problem) before
    # believing it, so the declared shape is what it claims to be, not yet what it proved to be.
    return Reading("bandwidth_last", cast(BandwidthResult, data), source=str(p), started_at=started)
