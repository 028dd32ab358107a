"""End to end: the real `sparktui` in a real tmux session, driven by send-keys, read by capture-pane."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "src" / "sparktui" / "data" / "gb10-demo.jsonl"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")]


class Tmux:
    def __init__(self, tmp_path: Path) -> None:
        self.name = f"sparktui-e2e-{uuid.uuid4().hex[:8]}"
        self.sock = str(tmp_path / "tmux.sock")

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", "-S", self.sock, *args], capture_output=True, text=True, check=True).stdout

    def start(self, command: str, width: int = 120, height: int = 36) -> None:
        self.run("new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), command)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name)

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        end = time.monotonic() + timeout
        last = ""
        while time.monotonic() < end:
            try:
                last = self.screen()
            except subprocess.CalledProcessError:
                last = "(session gone)"
            if text in last:
                return last
            time.sleep(0.2)
        raise AssertionError(f"{text!r} not on screen after {timeout}s; screen was:\n{last}")

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-S", self.sock, "has-session", "-t", self.name], capture_output=True).returncode == 0

    def quit_with_q(self, tmp_path: Path) -> None:
        """q on the main screen ends the process (and with it the session) with exit 0."""
        self.keys("q")
        end = time.monotonic() + 10
        while self.alive() and time.monotonic() < end:
            time.sleep(0.2)
        assert not self.alive(), self.screen()
        assert (tmp_path / "exit.txt").read_text().strip() == "EXITED 0"

    def kill(self) -> None:
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], capture_output=True)


@pytest.fixture
def tmux(tmp_path):
    t = Tmux(tmp_path)
    yield t
    t.kill()


def sparktui_cmd(tmp_path: Path, *args: str) -> str:
    env = " ".join(f"{k}={v}" for k, v in {
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"], "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"],
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"], "TERM": "xterm-256color", "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }.items())
    # Textual draws on stderr, so it is not redirected; a crash would show on the pane. COLUMNS and
    # LINES (set in the test process by Textual's test tooling) would override the pane's real size.
    return f"env -u COLUMNS -u LINES {env} {sys.executable} -m sparktui {' '.join(args)}; echo EXITED $? > {tmp_path}/exit.txt"


def test_dashboard_in_tmux_keys_drill_in_and_quit(tmux, tmp_path):
    tmux.start(sparktui_cmd(tmp_path, "--replay", str(DEMO), "--speed", "0"))
    screen = tmux.wait_for("G10")
    assert "G1" in screen and "spark-demo" in screen and "NVIDIA GB10" in screen
    tmux.wait_for("°C")
    # drill into G4 (4th row), see its card, come back
    tmux.keys("Down", "Down", "Down", "Enter")
    card = tmux.wait_for("G4: Thermal throttling")
    assert "Status: WARN" in card and "Fix" in card  # a warning card leads with its fix
    tmux.keys("Escape")
    tmux.wait_for("Processes (G6)")
    time.sleep(0.3)  # the terminal's timing, not the app's: a key right after Escape would read as Alt+key
    # help screen
    tmux.keys("?")
    tmux.wait_for("sparktui keys")
    tmux.keys("Escape")
    tmux.wait_for("Processes (G6)")
    time.sleep(0.3)  # a key right after Escape would read as Alt+key
    # quit ends the process (and with it the session)
    tmux.quit_with_q(tmp_path)


def test_dashboard_reads_at_80x24(tmux, tmp_path):
    tmux.start(sparktui_cmd(tmp_path, "--replay", str(DEMO), "--speed", "0"), width=80, height=24)
    screen = tmux.wait_for("G14")  # the last row: every check on screen at once, none scrolled away
    lines = screen.splitlines()
    assert len(lines) <= 24 and all(len(l) <= 80 for l in lines)
    for gid in [f"G{i}" for i in range(1, 15)]:
        assert any(l.lstrip(" ?✔▲✘–·⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏").startswith(gid) or f" {gid} " in l for l in lines), gid
    footer = tmux.wait_for("m peers").splitlines()[-1]  # the main keys fit the footer at 80 columns
    for key in ("⏎ card", "q quit", "? help", "← -1 min", "→ +1 min", "/ filter", "s sort", "p pause",
                "e events", "m peers"):
        assert key in footer, (key, footer)
    for key in ("k ", "r rerun", "R all", "b G5"):  # a replay is look-only
        assert key not in footer, (key, footer)
    assert footer.rstrip().endswith("m peers"), footer  # whole keys: none cut at the terminal's edge
    header = tmux.wait_for("· ended").splitlines()[0].rstrip()  # where the replay is, and every word whole
    assert "REPLAY" in header and "· ended" in header and header.endswith("gb10-demo.jsonl"), header


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
def test_a_session_of_keys_in_real_tmux_goes_back_never_quits_by_accident_and_keeps_prefs(tmux, tmp_path, size):
    """q and escape go back from every view; only the main screen's q quits; ctrl+c asks; the plot
    span and the process tree chosen are there again in the next run."""
    width, height = size
    tmux.start(sparktui_cmd(tmp_path, "--replay", str(DEMO), "--speed", "0", "--no-session"), width=width, height=height)
    tmux.wait_for("G10")
    tmux.wait_for("plots: last 5 min")

    def back_to_main(key: str) -> None:
        tmux.keys(key)
        tmux.wait_for("plots: last")  # the main screen's telemetry note: back, and alive
        time.sleep(0.3)  # a key right after Escape would read as Alt+key

    for opener, seen in (("Enter", "Status:"), ("e", "Verdict changes"), ("m", "eers"), ("?", "sparktui keys")):
        for back in ("q", "Escape"):
            tmux.keys(opener)
            tmux.wait_for(seen)
            back_to_main(back)
            assert tmux.alive()
    tmux.keys("C-c")
    tmux.wait_for("Quit sparktui?")
    back_to_main("n")
    tmux.keys("w")
    tmux.wait_for("plots: last 1 h")
    tmux.keys("t")
    tmux.wait_for("tree view")
    time.sleep(0.3)  # the terminal's timing: let the last key's sequence end before q
    tmux.quit_with_q(tmp_path)

    again = Tmux(tmp_path)
    try:
        again.start(sparktui_cmd(tmp_path, "--replay", str(DEMO), "--speed", "0", "--no-session"), width=width, height=height)
        again.wait_for("plots: last 1 h")  # the span chosen last time
        again.wait_for("tree view")  # the process table as a tree again, once its first scan is in
    finally:
        again.kill()
