"""The memory panel's `free -g` table against the real `free -g` (procps) on this machine."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from sparktui.core.telemetry import render_free_g
from sparktui.probes.host import parse_meminfo


def _ends(line: str) -> list[int]:
    return [m.end() for m in re.finditer(r"\S+", line)]


@pytest.mark.skipif(shutil.which("free") is None, reason="procps' free is not installed")
def test_layout_and_stable_figures_match_procps_free_g():
    real = subprocess.run(["free", "-g"], capture_output=True, text=True, check=True).stdout.splitlines()
    with open("/proc/meminfo", encoding="ascii") as f:
        ours = render_free_g(parse_meminfo(f.read())).splitlines()
    assert len(ours) == len(real) == 3
    for a, b in zip(ours, real):
        assert _ends(a) == _ends(b), (a, b)  # the same columns, character for character
    # figures that do not move between the two reads: total, and the swap row
    assert ours[1].split()[1] == real[1].split()[1]
    assert ours[2].split()[1] == real[2].split()[1]
