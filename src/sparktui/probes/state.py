"""Results sparktui keeps between runs (the last G5 bandwidth measurement), read without side effects."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import cast

from sparktui.core import shapes
from sparktui.core.config import Config, default_state_dir
from sparktui.core.readings import Reading, read_regular
from sparktui.core.shapes import BandwidthResult
from sparktui.probes.declared import Probe


def bandwidth_path() -> Path:
    return default_state_dir() / "bandwidth-last.json"


MAX_STATE_BYTES = 64 * 1024  # the kept result is a few hundred bytes; a /dev/zero link is not read


class _StateError(ValueError):
    """The kept file cannot be read; the message says why."""


def read_bandwidth_last(cfg: Config) -> Reading[BandwidthResult]:
    """The kept result, or a reading with the reason it is unusable (a FIFO, a device, a folder,
    a huge, binary or deeply nested file): G5 is then unknown, never blocked and never crashed."""
    p = bandwidth_path()
    started = time.time()
    try:
        os.stat(p)
    except FileNotFoundError:
        return Reading("bandwidth_last", None, error="no bandwidth measurement yet", source=str(p), started_at=started)
    except OSError as e:
        return Reading("bandwidth_last", None, error=f"unreadable: {e.strerror or e}", source=str(p), started_at=started)
    try:
        data = json.loads(read_regular(p, MAX_STATE_BYTES, _StateError, "kept bandwidth result").decode("utf-8"))
    except _StateError as e:  # the source names the file: the reason is said without it
        return Reading("bandwidth_last", None, error=f"unreadable: {str(e).removeprefix(f'{p}: ')}", source=str(p),
                       started_at=started)
    except UnicodeDecodeError:
        return Reading("bandwidth_last", None, error="unreadable: not UTF-8 text", source=str(p), started_at=started)
    except RecursionError:
        return Reading("bandwidth_last", None, error="unreadable: JSON nested too deeply", source=str(p), started_at=started)
    except ValueError as e:
        return Reading("bandwidth_last", None, error=f"unreadable: not JSON: {e}", source=str(p), started_at=started)
    if not isinstance(data, dict):
        return Reading("bandwidth_last", None, error="unreadable: not a JSON object", source=str(p), started_at=started)
    # A file on disk can hold anything: G5 checks every figure it uses (g05 result_problem) before
    # believing it, so the declared shape is what it claims to be, not yet what it proved to be.
    return Reading("bandwidth_last", cast(BandwidthResult, data), source=str(p), started_at=started)


PROBES = (Probe(shapes.BANDWIDTH_LAST, read_bandwidth_last),)
