"""`record` on a disk that fills: it stops at the first refused write with a clear message and exit 74
(it used to carry on and exit 0, saying only "check readings not written" at the end), and what it
wrote before is a recording whose lines are whole."""

from __future__ import annotations

import resource
import subprocess
import sys

from sparktui.core.recording import read_recording
from sparktui.testing import fake_nvml


def limited_to(nbytes: int):
    """A real EFBIG from the kernel past ``nbytes`` (RLIMIT_FSIZE), as a full disk gives, without root."""
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))


def test_a_write_the_disk_refuses_ends_the_recording_with_74_and_whole_lines(tmp_path):
    out = tmp_path / "run.jsonl"
    env = fake_nvml.subprocess_env(tmp_path, "gb10_loaded()")
    r = subprocess.run([sys.executable, "-m", "sparktui", "record", "-o", str(out), "--interval", "0.02",
                        "--duration", "60", "--processes-every", "0"],
                       capture_output=True, text=True, timeout=90, env=env, cwd=tmp_path, preexec_fn=limited_to(20_000))
    assert r.returncode == 74, r.stderr
    assert f"sparktui: cannot write {out}: File too large; the recording stopped there" in r.stderr
    assert "Traceback" not in r.stderr
    rec = read_recording(out)
    assert rec.samples and not rec.problems  # whole up to its last line (a torn tail is said, not an error)
    assert out.stat().st_size <= 20_000
