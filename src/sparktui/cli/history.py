"""`sparktui history`: the sessions the dashboard kept (core/session.py), newest first.

Each is a recording: `sparktui --replay ID` shows one again, `sparktui check --replay ID` judges it.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from sparktui.core.session import SessionInfo, list_sessions, sessions_dir
from sparktui.core.units import local_text


def add_parser(sub) -> None:
    h = sub.add_parser(
        "history", help="list the dashboard sessions kept on this machine (replay one with --replay ID)",
        description="List the sessions the live dashboard kept under $XDG_STATE_HOME/sparktui/sessions/, newest "
                    "first: start, duration, size, host, samples and the worst verdict seen. Give an ID to "
                    "`sparktui --replay ID` to watch one again, or to `sparktui check --replay ID` to judge it. "
                    "The [session] config section bounds how much is kept.")
    h.add_argument("--json", action="store_true", help="print the list as JSON (one object per session)")


def _clock(t: float | None) -> str:
    return local_text(t, "%Y-%m-%d %H:%M") or "?"  # summarize refuses times no clock has; this never crashes either


def _span(seconds: float) -> str:
    m = int(seconds // 60)
    return f"{m // 60}h{m % 60:02d}m" if m >= 60 else f"{m}m{int(seconds % 60):02d}s"


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KB"


def table(sessions: list[SessionInfo]) -> str:
    rows = [("ID", "START", "DURATION", "SIZE", "HOST", "SAMPLES", "WORST")]
    from sparktui.core.inert import visible  # a session file's host and id are outside text: shown inert

    rows += [(visible(s.id), _clock(s.started_at), _span(s.duration_s), _size(s.size), visible(s.host),
              str(s.samples), visible(s.worst or "-")) for s in sessions]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n" for r in rows)


def cmd_history(args: argparse.Namespace) -> int:
    from sparktui.cli.common import EXIT_OK

    sessions = list_sessions()
    for s in sessions:  # what was refused or skipped, per session, before the list
        for problem in s.problems:
            print(f"sparktui: history: {s.id}: {problem}", file=sys.stderr)
    if args.json:
        docs = [{**asdict(s), "duration_s": round(s.duration_s, 3)} for s in sessions]
        json.dump({"folder": str(sessions_dir()), "sessions": docs}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif not sessions:
        print(f"no kept sessions in {sessions_dir()} (the live dashboard keeps one per run; "
              "see [session] in docs/config.md)")
    else:
        sys.stdout.write(table(sessions))
        print(f"\n{len(sessions)} session{'' if len(sessions) == 1 else 's'} in {sessions_dir()}; "
              "replay one: sparktui --replay ID", file=sys.stderr)
    return EXIT_OK
