"""flows/signals.py against real processes: who may be signalled, TERM, KILL after TERM is
ignored, sparktui's own processes and other users' refused."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from sparktui.flows import signals

IGNORES_TERM = ("import pathlib, signal, sys, time\n"
                "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                "pathlib.Path(sys.argv[1]).write_text('ready')\n"
                "time.sleep(60)\n")


def detached(argv: list[str], **kw) -> int:
    """Start ``argv`` as an orphan (its parent, a shell, exits at once): not sparktui's child,
    as the user's jobs are not. Returns its pid."""
    cmd = " ".join(shlex.quote(a) for a in argv)
    out = subprocess.run(["sh", "-c", f"{cmd} >/dev/null 2>&1 & echo $!"], capture_output=True, text=True,
                         check=True, timeout=10, **kw)
    return int(out.stdout.strip())


@pytest.fixture
def reaper():
    """Pids to SIGKILL after the test, whatever happened."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def wait_for(path: Path, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared: the child did not start"
        time.sleep(0.02)


def test_term_ends_a_process_and_the_target_says_who_it_is(reaper):
    pid = detached(["sleep", "61"])
    reaper.append(pid)
    t = signals.target(pid)
    assert t.pid == pid and t.user == psutil.Process(pid).username() and t.command == "sleep 61"
    text = t.summary(gpu_mem_bytes=3 * 2**30)
    assert f"pid {pid}" in text and "GPU memory 3.0 GiB" in text and "sleep 61" in text
    assert "not listed by NVML" in t.summary()
    started = time.monotonic()
    assert signals.terminate(t, grace_s=5.0) is True
    assert time.monotonic() - started < 2.0
    assert signals.gone(t)


def test_a_process_ignoring_term_survives_it_and_kill_ends_it(tmp_path, reaper):
    ready = tmp_path / "ready"
    pid = detached([sys.executable, "-c", IGNORES_TERM, str(ready)])
    reaper.append(pid)
    wait_for(ready)
    t = signals.target(pid)
    assert signals.terminate(t, grace_s=0.5) is False
    assert psutil.Process(pid).is_running() and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    assert signals.kill(t) is True


def test_a_reused_or_exited_pid_is_not_signalled(reaper):
    pid = detached(["sleep", "62"])
    reaper.append(pid)
    t = signals.target(pid)
    os.kill(pid, signal.SIGKILL)
    assert signals.wait_gone(t, 5.0)
    with pytest.raises(signals.Refused, match="already exited"):
        signals.send(t, signal.SIGTERM)


def test_sparktui_itself_its_children_and_init_are_refused():
    child = subprocess.Popen([sys.executable, "-c",
                              "import subprocess, sys; subprocess.run(['sleep', '63']); sys.exit(0)"])
    try:
        for _ in range(200):
            kids = psutil.Process(child.pid).children()
            if kids:
                break
            time.sleep(0.02)
        assert kids, "the child never started its sleep"
        with pytest.raises(signals.Refused, match="sparktui itself"):
            signals.target(os.getpid())
        for pid in (child.pid, kids[0].pid):  # a child and a grandchild
            with pytest.raises(signals.Refused, match="sparktui's own processes"):
                signals.target(pid)
        with pytest.raises(signals.Refused, match="init"):
            signals.target(1)
        assert child.poll() is None  # nothing was sent
    finally:
        child.kill()
        child.wait(5)
        for k in kids:
            k.kill()


def test_another_users_process_is_refused_when_not_root(reaper, monkeypatch):
    pid = detached(["sleep", "64"])
    reaper.append(pid)
    owner = psutil.Process(pid).uids().real
    monkeypatch.setattr(signals, "effective_uid", lambda: owner + 4242)
    with pytest.raises(signals.Refused, match="not root: only root may signal another user's process") as err:
        signals.target(pid)
    assert f"runs as uid {owner + 4242}" in str(err.value)
    assert psutil.Process(pid).is_running()


def test_root_may_signal_another_users_process(reaper):
    assert os.geteuid() == 0, "this test needs root (it starts a process as user nobody)"
    pid = detached(["sleep", "65"], user=65534)
    reaper.append(pid)
    t = signals.target(pid)
    assert psutil.Process(pid).uids().real == 65534 and t.user != "root"
    assert signals.terminate(t, grace_s=5.0) is True


def test_unknown_pid_is_refused():
    with pytest.raises(signals.Refused, match="already exited"):
        signals.target(2**22 + 12345)
