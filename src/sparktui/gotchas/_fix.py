"""Fix blocks filled from a verdict's evidence: commands that run as pasted.

A gotcha's generic fix (``Gotcha.fix``, ``sparktui explain``) names things in words: the training
interpreter, a server, a config file. A verdict's fix names what the judge saw: the interpreter's
path, the pid, the file and line. Where a value was not seen, the block finds it (a ``#`` comment
and a command that prints it), never a placeholder such as ``PID`` or ``/path/to``.
"""

from __future__ import annotations

import shlex
from typing import Any, Iterable, Mapping

# Run as-is when the target interpreter was not read: the block says so and shows how to find it.
FALLBACK_PYTHON = "python3"
PYTHON_FINDER = (
    "# the training interpreter was not read: run these inside the training environment, where",
    "command -v python3    # prints the python they use",
)


def sh(*words: object) -> str:
    """Words joined into one shell command line, each quoted only where the shell needs it."""
    return " ".join(shlex.quote(str(w)) for w in words)


def comment(text: str) -> str:
    """A ``#`` line saying something seen: whitespace (a newline in an evidence value) collapsed, so
    nothing of the value can start a command line of its own."""
    return "# " + " ".join(str(text).split())


def block(lines: Iterable[str], lang: str = "bash") -> str:
    """A fenced code block: the unit the card copies (``c``, ``2``-``9``)."""
    return f"```{lang}\n" + "\n".join(lines) + "\n```\n"


def python_of(target: Mapping[str, Any] | None) -> tuple[str, tuple[str, ...]]:
    """The target interpreter, quoted for a shell, and the lines to put first in a block that uses
    it: none when its path was read, else the finder."""
    interp = (target or {}).get("interpreter")
    if isinstance(interp, str) and interp.strip():
        return shlex.quote(interp), ()
    return FALLBACK_PYTHON, PYTHON_FINDER


def stop_lines(what: str, pid: object) -> list[str]:
    """Stop one process through whatever keeps it running: its system service (a plain kill would
    be restarted by systemd), its Docker container, else TERM to the pid. ``ps -o unit=`` names the
    systemd unit; a login session's unit (user@, session-) must never be stopped, so it gets TERM."""
    p = shlex.quote(str(pid))
    return [
        comment(f"stop {what} through its service or container when it runs in one, else TERM"),
        f"unit=$(ps -o unit= -p {p} 2>/dev/null)",
        'case "$unit" in',
        f'  user@*|session-*|"") kill {p} ;;',
        '  docker-*.scope) id=${unit#docker-}; docker stop "${id%.scope}" ;;',
        '  *.service) sudo systemctl stop "$unit" ;;',
        f"  *) kill {p} ;;",
        "esac",
    ]
