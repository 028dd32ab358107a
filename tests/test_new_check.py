"""A new check is one module and one registry line: a throw-away G99 added to a copy of the
package that way, and nothing else, is judged by `check`, explained, shown on the dashboard,
exported to Prometheus, reported, and judged again from a recording.

Everything runs for real, in subprocesses over the copy (PYTHONPATH puts it before the installed
package): the same commands a user runs."""

from __future__ import annotations

import json
import os
import shutil
import site
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "sparktui"

MODULE = '''"""G99: a test's throw-away check. It warns with the host name it read."""

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Evidence, Status, Verdict
from sparktui.gotchas.base import Gotcha, unknown_from


def judge(r: Readings, cfg: Config) -> Verdict:
    host = r.get_reading("host")
    if host.data is None:
        return unknown_from("G99", host, "host facts")
    name = host.data.get("hostname") or "?"
    return Verdict("G99", Status.WARN, f"throw-away check saw {name}", evidence=(Evidence("hostname", "host", name),),
                   fix="Nothing to fix: this check exists for a test.")


GOTCHA = Gotcha(
    id="G99",
    slug="throwaway",
    title="A throw-away check",
    symptom="None: a test added it.",
    cause="A test adding a check by one module and one registry line.",
    check="Reads the host facts and warns with the host name.",
    fix="Nothing to fix: this check exists for a test.",
    intrusive=False,
    cadence_s=60.0,
    probes=("host",),
    judge=judge,
)
'''


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A copy of the package with G99 added: its module, and one line in the registry."""
    root = tmp_path_factory.mktemp("new-check")
    pkg = root / "src" / "sparktui"
    shutil.copytree(SRC, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "gotchas" / "g99_throwaway.py").write_text(MODULE)
    registry = pkg / "gotchas" / "__init__.py"
    text = registry.read_text()
    last = "    g13_driver_flavour,\n"
    assert text.count(last) == 1
    registry.write_text(text.replace(last, last + "    g99_throwaway,\n"))  # the one line
    return root


def tree_env(tree: Path, **extra: str) -> dict[str, str]:
    """This process's environment with the copy first on the import path and the rest of PYTHONPATH
    kept after it: where the dependencies come from PYTHONPATH (the lent GPU machine installs the
    carried wheels with pip --target into a folder on it), the subprocess finds them as this one does.
    HOME is the copy's folder (the state the commands write stays there); the user's site-packages
    stay those of this process's HOME."""
    path = os.pathsep.join(p for p in (str(tree / "src"), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "PYTHONUSERBASE": site.getuserbase(), "HOME": str(tree), **extra}


def run(tree: Path, *args: str, timeout: float = 180, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=tree,
                          env=tree_env(tree, NO_COLOR="1"), timeout=timeout, **kw)


def test_the_copy_is_what_runs(tree):
    out = run(tree, "-c", "import sparktui.gotchas as g; print(g.__file__, g.IDS[-1])").stdout.split()
    assert out == [str(tree / "src" / "sparktui" / "gotchas" / "__init__.py"), "G99"]


def test_the_copy_imports_the_dependencies_this_process_does(tree):
    """The copy runs on this interpreter's dependencies, wherever they were installed."""
    import prometheus_client
    import textual

    proc = run(tree, "-c", "import prometheus_client, textual; print(textual.__file__); print(prometheus_client.__file__)")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split("\n")[:2] == [textual.__file__, prometheus_client.__file__]


def test_check_judges_it_and_explain_shows_its_card(tree):
    proc = run(tree, "-m", "sparktui", "check", "G99", "--json")
    doc = json.loads(proc.stdout)
    (v,) = doc["checks"]
    assert v["id"] == "G99" and v["status"] == "warn" and v["summary"].startswith("throw-away check saw ")
    assert proc.returncode == 1  # a warning, as for any check
    card = run(tree, "-m", "sparktui", "explain", "g99").stdout
    assert card.startswith("# G99: A throw-away check") and "Nothing to fix" in card
    assert "G99" in run(tree, "-m", "sparktui", "list").stdout


def test_the_dashboard_runs_it_and_shows_its_row(tree):
    script = '''
import asyncio
from sparktui.core.config import Config
from sparktui.live import QuietSource
from sparktui.ui.app import SparkApp

async def main():
    app = SparkApp(Config(), source=QuietSource())
    async with app.run_test(size=(140, 50)) as pilot:
        for _ in range(400):
            await pilot.pause(0.05)
            if app.board["G99"].verdict is not None:
                break
        await pilot.pause()  # the verdict handled: its row holds it (no fixed delay needed)
        v = app.board["G99"].verdict
        print(v.status.value if v else None)
        print(" ".join(str(c) for c in app.query_one("#checklist").get_row("G99")))
asyncio.run(main())
'''
    proc = run(tree, "-c", script)
    assert proc.returncode == 0, proc.stderr[-3000:]
    status, row = proc.stdout.strip().splitlines()[-2:]
    assert status == "warn" and "G99" in row and "A throw-away check" in row


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_export_serves_its_status(tree):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "sparktui", "export", "G99", "--listen", f"127.0.0.1:{port}"],
                            cwd=tree, env=tree_env(tree), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        line = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and line is None:
            time.sleep(0.2)
            try:
                text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2).text
            except httpx.HTTPError:
                continue
            line = next((x for x in text.splitlines() if x.startswith("sparktui_check_status{") and 'id="G99"' in x), None)
        assert line is not None and line.endswith(" 1.0")  # 1: warn
    finally:
        proc.terminate()
        proc.wait(10)


def test_report_includes_it(tree):
    proc = run(tree, "-m", "sparktui", "report", "G99")
    assert "G99" in proc.stdout and "throw-away check saw" in proc.stdout


def test_a_recording_carries_its_reading_and_a_replay_judges_it(tree):
    rec = tree / "run.jsonl"
    proc = run(tree, "-m", "sparktui", "record", "-o", str(rec), "--duration", "1", "--interval", "0.5")
    assert proc.returncode == 0, proc.stderr
    replay = run(tree, "-m", "sparktui", "check", "--replay", str(rec), "G99", "--json")
    (v,) = json.loads(replay.stdout)["checks"]
    assert v["id"] == "G99" and v["status"] == "warn"
    ids = [x["id"] for x in json.loads(run(tree, "-m", "sparktui", "check", "--replay", str(rec), "--json").stdout)["checks"]]
    assert "G99" in ids  # a replay without ids judges every check the recording answers
