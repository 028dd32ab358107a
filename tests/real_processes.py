"""Real processes for the signal tests: orphans (not the test's children, as a user's jobs are not
sparktui's), one that ignores SIGTERM, and how to tell one has ended."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil

IGNORES_TERM = ("import pathlib, signal, sys, time\n"
                "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                "pathlib.Path(sys.argv[1]).write_text('ready')\n"
                "time.sleep(60)\n")


@contextmanager
def orphan(argv: list[str], ready: Path | None = None, **kw) -> Iterator[int]:
    """Run ``argv`` with a shell as its parent that exits at once; yields its pid (after ``ready``
    appears, when given) and SIGKILLs it afterwards, whatever happened."""
    cmd = " ".join(shlex.quote(a) for a in argv)
    out = subprocess.run(["sh", "-c", f"{cmd} >/dev/null 2>&1 & echo $!"], capture_output=True, text=True,
                         check=True, timeout=10, **kw)
    pid = int(out.stdout.strip())
    try:
        deadline = time.monotonic() + 10
        while ready is not None and not ready.exists():
            assert time.monotonic() < deadline, f"{ready} never appeared: the child did not start"
            time.sleep(0.02)
        yield pid
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def ended(pid: int) -> bool:
    """Gone, or a zombie (this container's init does not reap orphans)."""
    return not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def own_child_with_grandchild() -> tuple[subprocess.Popen, psutil.Process]:
    """A child of this process with a child of its own (sparktui's probes and their helpers)."""
    child = subprocess.Popen(["sh", "-c", "sleep 63; exit 0"])
    deadline = time.monotonic() + 10
    while not psutil.Process(child.pid).children():
        assert time.monotonic() < deadline, "the child never started its sleep"
        time.sleep(0.02)
    return child, psutil.Process(child.pid).children()[0]
