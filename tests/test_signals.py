"""flows/signals.py against real processes: who may be signalled, TERM, KILL after TERM is
ignored, sparktui's own processes and other users' refused."""

from __future__ import annotations

import os
import signal
import sys
import time

import psutil
import pytest

from sparktui.flows import signals
from tests.real_processes import IGNORES_TERM, ended, orphan, own_child_with_grandchild


def test_term_ends_a_process_and_the_target_says_who_it_is():
    with orphan(["sleep", "61"]) as pid:
        t = signals.target(pid)
        assert t.pid == pid and t.user == psutil.Process(pid).username() and t.command == "sleep 61"
        text = t.summary(gpu_mem_bytes=3 * 2**30)
        assert f"pid {pid}" in text and "GPU memory 3.0 GiB" in text and "sleep 61" in text
        assert "not listed by NVML" in t.summary()
        started = time.monotonic()
        assert signals.terminate(t, grace_s=5.0) is True
        assert time.monotonic() - started < 2.0
        assert signals.gone(t) and ended(pid)


def test_a_process_ignoring_term_survives_it_and_kill_ends_it(tmp_path):
    ready = tmp_path / "ready"
    with orphan([sys.executable, "-c", IGNORES_TERM, str(ready)], ready=ready) as pid:
        t = signals.target(pid)
        assert signals.terminate(t, grace_s=0.5) is False
        assert not ended(pid)
        assert signals.kill(t) is True
        assert ended(pid)


def test_an_exited_process_is_not_signalled():
    with orphan(["sleep", "62"]) as pid:
        t = signals.target(pid)
        os.kill(pid, signal.SIGKILL)
        assert signals.wait_gone(t, 5.0)
        with pytest.raises(signals.Refused, match="already exited"):
            signals.send(t, signal.SIGTERM)


def test_sparktui_itself_its_children_and_init_are_refused():
    child, grandchild = own_child_with_grandchild()
    try:
        with pytest.raises(signals.Refused, match="sparktui itself"):
            signals.target(os.getpid())
        for pid in (child.pid, grandchild.pid):
            with pytest.raises(signals.Refused, match="sparktui's own processes"):
                signals.target(pid)
        with pytest.raises(signals.Refused, match="init"):
            signals.target(1)
        assert child.poll() is None  # nothing was sent
    finally:
        grandchild.kill()
        child.kill()
        child.wait(5)


def test_another_users_process_is_refused_when_not_root(monkeypatch):
    with orphan(["sleep", "64"]) as pid:
        owner = psutil.Process(pid).uids().real
        monkeypatch.setattr(signals, "effective_uid", lambda: owner + 4242)
        with pytest.raises(signals.Refused, match="not root: only root may signal another user's process") as err:
            signals.target(pid)
        assert f"runs as uid {owner + 4242}" in str(err.value)
        assert not ended(pid)


def test_root_may_signal_another_users_process():
    assert os.geteuid() == 0, "this test needs root (it starts a process as user nobody)"
    with orphan(["sleep", "65"], user=65534) as pid:
        t = signals.target(pid)
        assert psutil.Process(pid).uids().real == 65534 and t.user == "nobody"
        assert signals.terminate(t, grace_s=5.0) is True


def test_unknown_pid_is_refused():
    with pytest.raises(signals.Refused, match="already exited"):
        signals.target(2**22 + 12345)


def test_a_pid_read_with_another_start_time_is_refused_and_the_scans_time_is_accepted():
    """A row read at one time and acted on later (a replay of a kept session, a guard's target)
    carries the start time it was read with: the same pid started at any other time is another
    process, never signalled. The process scan's own start time (from /proc/PID/stat) is accepted."""
    from sparktui.probes.processes import ProcLister

    with orphan(["sleep", "62"]) as pid:
        row = next(r for r in ProcLister().list()[0] if r["pid"] == pid)
        assert abs(row["started"] - psutil.Process(pid).create_time()) < 1.0
        assert signals.target(pid, started=row["started"]).pid == pid
        with pytest.raises(signals.Refused, match="now another process"):
            signals.target(pid, started=row["started"] - 3600)
        real = psutil.Process(pid).create_time()
        tol = signals.STARTED_TOLERANCE_S  # /proc's clock ticks against psutil's rounding: 1 s
        assert signals.target(pid, started=real + 0.9 * tol).pid == pid  # just inside: the same process
        with pytest.raises(signals.Refused, match="now another process"):
            signals.target(pid, started=real - 1.1 * tol)  # just outside: another process on that pid
        assert not ended(pid)
