"""A real ``sparktui`` started as the terminal would start it, and the processes it left.

Every process of one run carries a marker in its environment (children inherit it), so a test
can ask /proc which of them are still running, the watchdog and grandchildren included, without
counting processes of tests running beside it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

ENV_KEEP = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "COLUMNS", "LINES")}  # a terminal size is the test's to set
MARKER = "SPARKTUI_TEST_RUN"


class Run:
    """``sparktui ARGS`` in a session of its own (so SIGINT to its group is a terminal's Ctrl-C)."""

    def __init__(self, tmp_path: Path, args: list[str], env: dict[str, str] | None = None) -> None:
        self.marker = uuid.uuid4().hex
        self.pidfile = tmp_path / "pids"
        full_env = {**ENV_KEEP, "NO_COLOR": "1", MARKER: self.marker, "STANDIN_PIDFILE": str(self.pidfile),
                    **(env or {})}
        self.proc = subprocess.Popen([sys.executable, "-m", "sparktui", *args], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                                     env=full_env, start_new_session=True)

    def probe_pids(self, timeout: float = 60.0) -> tuple[int, int]:
        """(stand-in, its grandchild) once the stand-in has written them (it then hangs)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.pidfile.exists():
                a, b = (int(x) for x in self.pidfile.read_text().split())
                return a, b
            if self.proc.poll() is not None:
                raise AssertionError(f"sparktui ended (rc {self.proc.returncode}) before its probe started: "
                                     f"{self.proc.stderr.read()[-2000:]}")
            time.sleep(0.02)
        raise AssertionError("the stand-in never wrote its pids")

    def finish(self, timeout: float = 60.0) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err

    def left_running(self, within: float = 5.0) -> list[str]:
        """The processes of this run still alive after ``within`` seconds (their command lines).
        They go in tens of milliseconds; the margin is for a machine under heavy load."""
        deadline = time.monotonic() + within
        while True:
            alive = marked(self.marker)
            if not alive or time.monotonic() >= deadline:
                return alive
            time.sleep(0.05)

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    def cleanup(self) -> None:
        """Never leave a 600 s sleeper behind when a test fails."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pid in marked_pids(self.marker):
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def marked_pids(marker: str) -> list[int]:
    needle = f"{MARKER}={marker}".encode()
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    out.append(int(entry))
        except OSError:  # gone, or not ours
            continue
    return out


def marked(marker: str) -> list[str]:
    """Command lines of live (not zombie) processes carrying the marker."""
    out = []
    for pid in marked_pids(marker):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state != "Z":
            out.append(f"{pid}: {cmd[:200]}")
    return out


def fake_ssh(bindir: Path) -> Path:
    """An ``ssh`` that answers nothing: it starts a grandchild, writes both pids to
    $STANDIN_PIDFILE and waits, as a peer stuck in its snapshot does. Put ``bindir`` first on PATH."""
    bindir.mkdir(parents=True, exist_ok=True)
    ssh = bindir / "ssh"
    ssh.write_text('#!/bin/sh\nsleep 600 &\necho "$$ $!" > "$STANDIN_PIDFILE.tmp"\n'
                   'mv "$STANDIN_PIDFILE.tmp" "$STANDIN_PIDFILE"\nwait\n')
    ssh.chmod(0o755)
    return bindir
