"""The CI guard (tests/ci_guard.py) really turns a skip into a failure under CI, and only there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SKIPPING = """\
import pytest

def test_needs_a_tool():
    pytest.skip("sshd is not installed")

@pytest.mark.skipif(True, reason="tmux not installed")
def test_marked():
    pass

def test_runs():
    pass
"""


def run_pytest(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    (tmp_path / "test_skipping.py").write_text(SKIPPING)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.ci_guard",
                           "--rootdir", str(tmp_path), str(tmp_path / "test_skipping.py")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("ci", ["1", "true"])
def test_under_ci_a_skip_fails_with_its_reason(tmp_path, ci):
    run = run_pytest(tmp_path, ci)
    assert run.returncode == 1, run.stdout
    assert "skipped under CI, which must run every test" in run.stdout
    assert "sshd is not installed" in run.stdout and "tmux not installed" in run.stdout
    assert "1 passed" in run.stdout and "skipped" not in run.stdout.splitlines()[-1]


def test_outside_ci_a_skip_stays_a_skip(tmp_path):
    run = run_pytest(tmp_path, None)
    assert run.returncode == 0, run.stdout
    assert "1 passed, 2 skipped" in run.stdout
