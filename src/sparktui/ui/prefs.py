"""What the dashboard remembers between runs: theme, process-table sort and filter, plot span,
layout. Kept as JSON under the XDG state folder (``$XDG_STATE_HOME/sparktui/prefs.json``), not in
the hand-edited config.toml: the app writes this file, a person writes that one.

A missing, unreadable or hand-mangled file gives the defaults (one bad field falls back alone);
writes are atomic (a temp file renamed over the old one), and a write that fails (read-only
home, full disk) is reported by the caller and never stops the dashboard.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from sparktui.core.atomic import write_text_atomic
from sparktui.core.config import default_state_dir

MAX_BYTES = 64 * 1024  # a prefs file is a few hundred bytes; anything larger is not ours


@dataclass(frozen=True)
class Prefs:
    theme: str | None = None  # a Textual theme name; None: the app's default
    sort_column: str = "GPU mem"  # a process-table column label
    sort_reverse: bool = True  # largest first
    process_filter: str = ""
    tree: bool = False  # the process table as a tree (torchrun -> workers)
    plot_span: str = "5m"  # "5m" | "1h" | "session"
    layout: str = "auto"  # "auto" | "wide" | "narrow"

    def with_(self, **changes: Any) -> Prefs:
        return replace(self, **changes)


def prefs_path() -> Path:
    return default_state_dir() / "prefs.json"


def load_prefs(path: Path | None = None) -> Prefs:
    """The kept preferences; defaults for anything missing or of the wrong type. Never raises."""
    p = path or prefs_path()
    try:
        st = os.stat(p)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return Prefs()  # a FIFO would hang, /dev/zero never ends: only a small regular file
        raw = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Prefs()
    if not isinstance(raw, dict):
        return Prefs()
    base = Prefs()
    kept: dict[str, Any] = {}
    for f in fields(Prefs):
        v = raw.get(f.name)
        default = getattr(base, f.name)
        if f.name == "theme":
            ok = v is None or (isinstance(v, str) and 0 < len(v) <= 64)
        elif isinstance(default, bool):
            ok = isinstance(v, bool)
        else:
            ok = isinstance(v, str) and len(v) <= 256
        if v is not None and ok:
            kept[f.name] = v
    if kept.get("plot_span") not in (None, "5m", "1h", "session"):
        kept.pop("plot_span")
    if kept.get("layout") not in (None, "auto", "wide", "narrow"):
        kept.pop("layout")
    return replace(base, **kept)


def save_prefs(prefs: Prefs, path: Path | None = None) -> Path:
    """Write atomically; raises OSError (the caller says so and carries on)."""
    p = path or prefs_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(p, json.dumps(asdict(prefs), indent=1, sort_keys=True))
    return p
