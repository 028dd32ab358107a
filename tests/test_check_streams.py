"""`sparktui check` on a terminal writes each verdict as soon as it is judged: a training
interpreter that takes its time holds only the checks that need it. Run for real, in a pty."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a pty and /bin/sh")


def read_until(fd: int, out: bytearray, done, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if done(out):
            return True
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the pty
                return done(out)
            if not chunk:
                return done(out)
            out += chunk
    return done(out)


def test_a_quick_check_is_on_the_terminal_while_the_training_interpreter_is_still_starting(tmp_path):
    release = tmp_path / "release"
    slow_python = tmp_path / "python"
    # the training interpreter: starts only once the test says so
    slow_python.write_text(f"#!/bin/sh\nwhile [ ! -e {release} ]; do sleep 0.05; done\nexec {sys.executable} \"$@\"\n")
    slow_python.chmod(0o755)
    master, slave = pty.openpty()
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
    proc = subprocess.Popen([sys.executable, "-m", "sparktui", "check", "G13", "G1", "--python", str(slow_python)],
                            stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.DEVNULL, cwd=tmp_path, env=env)
    os.close(slave)
    out = bytearray()
    try:
        assert read_until(master, out, lambda o: b"G13 " in o, 60), out.decode(errors="replace")
        time.sleep(0.3)  # anything G1 would have written by now is in
        read_until(master, out, lambda o: False, 0.2)
        assert b"G1 " not in out  # still waiting for the interpreter: not held behind it
        release.touch()
        assert read_until(master, out, lambda o: b"G1 " in o and (b" unknown" in o.split(b"G1 ", 1)[1]
                                                                     or b" ok" in o.split(b"G1 ", 1)[1]
                                                                     or b" fail" in o.split(b"G1 ", 1)[1]
                                                                     or b" warn" in o.split(b"G1 ", 1)[1]), 120)
        assert proc.wait(60) in (0, 1, 2, 3)
        read_until(master, out, lambda o: False, 0.5)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    text = out.decode(errors="replace").replace("\r\n", "\n")
    assert text.index("G13 ") < text.index("G1 ")  # in the order judged, not the order asked
    counts = [line for line in text.splitlines() if line.strip()][-1]
    assert sum(int(n) for n in counts.split()[::2]) == 2  # the counts line covers both checks, once each


def test_a_pipe_still_gets_the_whole_table_in_the_order_asked(tmp_path):
    """Scripts read stdout through a pipe: the table in the order asked, as before."""
    proc = subprocess.run([sys.executable, "-m", "sparktui", "check", "G13", "G7"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    lines = [line for line in proc.stdout.splitlines() if line[:1] == "G"]
    assert [line.split()[0] for line in lines] == ["G13", "G7"]
