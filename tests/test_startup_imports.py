"""What the dashboard imports before its first screen: time to first output is mostly imports
(benchmarks/side_by_side.py; target 0.6 s). Markdown (cards, messages), the GitHub client (G8),
the exporter, NVML and psutil load later, after the first paint or when first used; torch and
numpy never."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
# src first, then wherever this run finds textual (a `pip install --target` folder on the GPU machine)
PYTHONPATH = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)
NOT_BEFORE_FIRST_SCREEN = ("markdown_it", "pygments", "httpx", "prometheus_client", "torch", "numpy", "pynvml",
                           "psutil", "sparktui.playbooks.github", "sparktui.fleet.exporter", "sparktui.fleet.report")


def test_the_dashboard_path_imports_nothing_the_first_screen_does_not_need():
    code = ("import json, sys; import sparktui.cli.main, sparktui.ui.app; "
            f"print(json.dumps([m for m in {NOT_BEFORE_FIRST_SCREEN!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={"PYTHONPATH": PYTHONPATH, "PATH": "/usr/bin:/bin"}, check=True)
    assert json.loads(out.stdout) == []


def test_g8_with_nothing_to_watch_loads_no_http_client(tmp_path):
    """No playbook configured: no request, so none of httpx's ~6 MB in the dashboard's process."""
    code = ("import sys; from sparktui.core.config import Config; from sparktui.probes import playbooks; "
            "r = playbooks.read(Config()); print(r.data['configured'], 'httpx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={"PYTHONPATH": PYTHONPATH, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_a_card_still_finds_its_markdown_widget():
    from textual.widgets import Markdown

    from sparktui.ui.screens import markdown_widget

    w = markdown_widget("# G1", id="card-md")
    assert isinstance(w, Markdown) and w.id == "card-md"
