"""The shipped demo recording is synthetic, and wherever it is shown it says so; a real recording
(the H200's) does not carry the mark."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.ui.app import SparkApp
from tests.ui.test_dashboard import DEMO
from tests.ui.waiting import loaded

H200 = Path(__file__).resolve().parents[2] / "tests" / "data" / "h200" / "load-matmul-counters.jsonl"


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_the_dashboard_header_marks_the_demo_synthetic(size):
    app = SparkApp(Config(), replay=str(DEMO), speed=None)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        assert "synthetic, not measured" in app.source.label
        header = app.header_bar.render().plain
        assert "SYNTHETIC" in header and header.index("SYNTHETIC") > header.index("REPLAY")  # beside where the replay is
        assert header.index("SYNTHETIC") + len("SYNTHETIC") <= size[0]  # on screen, not cut off


async def test_a_real_recording_is_not_marked():
    app = SparkApp(Config(), replay=str(H200), speed=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot)
        assert "synthetic" not in app.source.label


@pytest.mark.parametrize("path, marked", [(DEMO, True), (H200, False)])
def test_check_replay_says_synthetic_only_for_the_demo(path, marked):
    # into a pipe without COLUMNS the `recording FILE (...)` line is whole. The environment is passed
    # explicitly: once anything in the test process imported readline, the C environment a child
    # inherits has COLUMNS=80 and LINES=24 (readline sets them) though os.environ does not show them
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    out = subprocess.run([sys.executable, "-m", "sparktui", "check", "G2", "--replay", str(path)],
                         capture_output=True, text=True, timeout=60, env=env).stdout
    first = out.splitlines()[0]
    assert first.startswith("recording ") and ("not a measurement" in first) is marked
