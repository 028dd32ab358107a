"""What the dashboard remembers between runs: theme, process-table sort and tree view, plot span,
layout. Not the process filter: a filter kept from an earlier run hid a running training job from
a user who did not see it was on (a ``process_filter`` left in an older file is ignored). Kept as JSON under the XDG state folder (``$XDG_STATE_HOME/sparktui/prefs.json``), not in
the hand-edited config.toml: the app writes this file, a person writes that one.

A missing, unreadable or hand-mangled file gives the defaults (one bad field falls back alone)
and never stops the dashboard: the file is read only when it is a small regular file under its
own name (no symbolic link followed, at most MAX_BYTES), and JSON that does not parse, nests too
deeply (60,000 ``[``) or has a field of the wrong type gives the defaults, said in one line
(``problems``, which the dashboard shows). Writes are atomic (a temp file renamed over the old
one, never through a link planted at the name), and a write that fails (read-only home, full
disk) is reported by the caller and never stops the dashboard.
"""

from __future__ import annotations

import errno
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
    tree: bool = False  # the process table as a tree (torchrun -> workers)
    plot_span: str = "5m"  # "5m" | "1h" | "session"
    layout: str = "auto"  # "auto" | "wide" | "narrow"

    def with_(self, **changes: Any) -> Prefs:
        return replace(self, **changes)


def prefs_path() -> Path:
    return default_state_dir() / "prefs.json"


CHOICES = {"plot_span": ("5m", "1h", "session"), "layout": ("auto", "wide", "narrow")}


def _read_small(p: Path) -> bytes | None:
    """The file's bytes when it is a regular file of at most MAX_BYTES under its own name; None when
    it does not exist. ValueError says why anything else is not read (a FIFO would hang, /dev/zero
    never ends, a link planted at the name may point anywhere)."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ValueError("a symbolic link; not followed") from None
        raise ValueError(f"cannot be read ({e.strerror or e})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"larger than {MAX_BYTES // 1024} KB")
    return data


def load_prefs(path: Path | None = None, problems: list[str] | None = None) -> Prefs:
    """The kept preferences; defaults for anything missing or of the wrong type. Never raises.
    Why the file or a field was not used is appended to ``problems`` as one line (nothing when the
    file is missing or fine), for the dashboard to show."""
    p = path or prefs_path()
    said: list[str] = []
    try:
        data = _read_small(p)
        if data is None:
            return Prefs()
        raw = json.loads(data.decode("utf-8"))
    except RecursionError:
        said.append("JSON nested too deeply")
        raw = None
    except ValueError as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        said.append(str(e) if not isinstance(e, (json.JSONDecodeError, UnicodeDecodeError))
                    else f"not JSON ({e.msg if isinstance(e, json.JSONDecodeError) else 'not UTF-8'})")
        raw = None
    except Exception as e:  # whatever a mangled file does, the dashboard starts
        said.append(f"not read ({type(e).__name__})")
        raw = None
    if raw is not None and not isinstance(raw, dict):
        said.append("not a JSON object")
    kept: dict[str, Any] = {}
    if isinstance(raw, dict):
        kept = _fields(raw, said)
    if said and problems is not None:
        problems.append(f"{p}: {'; '.join(said)}; defaults used")
    return replace(Prefs(), **kept)


def _fields(raw: dict[str, Any], said: list[str]) -> dict[str, Any]:
    """The fields of the right type; each one that is not is named in ``said`` and left default."""
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
            ok = isinstance(v, str) and len(v) <= 256 and (f.name not in CHOICES or v in CHOICES[f.name])
        if v is not None and ok:
            kept[f.name] = v
        elif f.name in raw and not ok:
            said.append(f"\"{f.name}\" is not {_wanted(f.name, default)}")
    return kept


def _wanted(name: str, default: Any) -> str:
    if name == "theme":
        return "a theme name"
    if isinstance(default, bool):
        return "true or false"
    return "one of " + ", ".join(CHOICES[name]) if name in CHOICES else "a text of at most 256 characters"


def save_prefs(prefs: Prefs, path: Path | None = None) -> Path:
    """Write atomically; raises OSError (the caller says so and carries on)."""
    p = path or prefs_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(p, json.dumps(asdict(prefs), indent=1, sort_keys=True), follow_links=False)
    return p
