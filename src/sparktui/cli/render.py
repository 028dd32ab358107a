"""Plain-text and JSON output of verdicts for the headless CLI."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from typing import Any

from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas import REGISTRY

JSON_SCHEMA = 1

# bright blue for unknown, as in the dashboard: red and magenta look alike in many terminal palettes
_COLOUR = {Status.OK: "32", Status.WARN: "33", Status.FAIL: "31", Status.UNKNOWN: "94", Status.SKIP: "90"}


def use_colour(stream) -> bool:
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def status_label(s: Status, colour: bool) -> str:
    text = f"{s.glyph} {s.value:<7}"
    return f"\x1b[{_COLOUR[s]}m{text}\x1b[0m" if colour else text


def _short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table(verdicts: list[Verdict], verbose: bool = False, stream=None) -> str:
    """The verdicts as text; coloured when ``stream`` (default: ``sys.stdout`` at call time) is a terminal."""
    colour = use_colour(sys.stdout if stream is None else stream)
    width = shutil.get_terminal_size((100, 24)).columns
    lines = []
    for v in verdicts:
        g = REGISTRY[v.id]
        head = f"{v.id:<4} {status_label(v.status, colour)} {g.title}"
        lines.append(head)
        lines.append(f"     {v.summary}"[: max(width, 60)] if not verbose else f"     {v.summary}")
        if verbose or v.status in (Status.WARN, Status.FAIL):
            for e in v.evidence:
                lines.append(f"       · {e.what}: {_short(e.value)}  [{e.source}]")
            for d in v.details[: (None if verbose else 10)]:
                lines.append(f"       {d}")
            if not verbose and len(v.details) > 10:
                lines.append(f"       … {len(v.details) - 10} more (use --verbose)")
        if v.status in (Status.WARN, Status.FAIL) and v.fix:
            lines.append(f"     fix: see `sparktui explain {v.id}`" if not verbose else "     fix:")
            if verbose:
                lines.extend("       " + l for l in v.fix.strip().splitlines())
    counts = {s: sum(1 for v in verdicts if v.status is s) for s in Status}
    lines.append("")
    lines.append("  ".join(f"{n} {s.value}" for s, n in counts.items() if n))
    return "\n".join(lines) + "\n"


def document(verdicts: list[Verdict], host: dict[str, Any], source: str) -> dict[str, Any]:
    """The ``check --json`` document (see docs/cli.md)."""
    return {
        "schema": JSON_SCHEMA,
        "kind": "sparktui-check",
        "generated_at": time.time(),
        "source": source,
        "host": host,
        "checks": [{**v.to_dict(), "title": REGISTRY[v.id].title, "intrusive": REGISTRY[v.id].intrusive} for v in verdicts],
    }
