"""No process outlives sparktui. Its probes run in sessions of their own (a terminal's Ctrl-C must
not hit one halfway through a stage), so nothing but sparktui stops them: SIGTERM and SIGHUP kill
every group it started (exit 143 / 129), a SIGKILL of sparktui is answered by its watchdog, and a
probe that ends on its own takes the grandchildren it left with it (core/children.py). Each test
runs a real sparktui and asks /proc for every process carrying the run's marker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sparktui.core import children
from tests.hostile.spawned import ENV_KEEP, Run, fake_ssh, marked
from tests.standins.make import make_standin
from tests.test_target_probe import gone, wait_for_pids

# A grandchild started at interpreter start-up (as torch's compile workers or a launcher's helpers
# are), left running when the probe itself ends normally. Not a Python: it would run this again.
# A child tells sparktui's watchdog it exists just after it starts; on a loaded machine the child can
# write its pid file first. A SIGKILL in that moment is the one it cannot cover (core/children.py).
SETTLE_S = 0.3
LEAVES_A_GRANDCHILD = "import subprocess\nsubprocess.Popen(['sleep', '600'])\n"


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
@pytest.mark.parametrize("command", [["check", "G1"], ["bandwidth", "--yes", "--force", "--size", "1"]])
def test_sigterm_and_sighup_kill_the_probe_and_its_grandchild(tmp_path, command, sig, code):
    hang = make_standin(tmp_path, "hang_grandchild")
    with Run(tmp_path, [*command, "--python", hang, "--path", str(tmp_path)]) as run:
        run.probe_pids()
        run.proc.send_signal(sig)  # to sparktui alone, as `kill` or systemd's stop does
        rc, _, err = run.finish()
        assert rc == code, err
        assert f"sparktui: stopped by {sig.name}" in err and "Traceback" not in err
        assert run.left_running() == []


@pytest.mark.parametrize("command", [["check", "G1"], ["preflight", "G1"]])
def test_sigkill_of_sparktui_takes_the_probe_and_its_grandchild_with_it(tmp_path, command):
    """No handler runs on SIGKILL: the watchdog sees sparktui's pipe close and kills the group."""
    hang = make_standin(tmp_path, "hang_grandchild")
    with Run(tmp_path, [*command, "--python", hang, "--path", str(tmp_path)]) as run:
        run.probe_pids()
        time.sleep(SETTLE_S)
        run.proc.kill()
        run.finish()
        assert run.left_running() == []


def test_a_probe_that_ends_normally_leaves_no_grandchild(tmp_path):
    ok = make_standin(tmp_path, "ok_gb10")
    (tmp_path / "site-ok_gb10" / "sitecustomize.py").write_text(LEAVES_A_GRANDCHILD)
    with Run(tmp_path, ["check", "G1", "--python", ok, "--path", str(tmp_path)]) as run:
        rc, _, err = run.finish()
        assert rc == 0, err
        assert run.left_running() == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_peer_s_ssh_and_what_it_started_end_with_sparktui(tmp_path, sig):
    ok = make_standin(tmp_path, "ok_gb10")
    bindir = fake_ssh(tmp_path / "bin")
    run = Run(tmp_path, ["peers", "G3", "--peer", "spark-2", "--python", ok, "--path", str(tmp_path)],
              env={"PATH": f"{bindir}:{ENV_KEEP.get('PATH', '')}"})
    try:
        run.probe_pids()
        time.sleep(SETTLE_S)
        run.proc.send_signal(sig)
        rc, _, _ = run.finish()
        assert rc == (143 if sig == signal.SIGTERM else -9)
        assert run.left_running() == []
    finally:
        run.cleanup()


# -- the tracking itself, in this process ----------------------------------------------------------

def _pids_from(path, timeout: float = 10.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().endswith("\n"):
            return [int(x) for x in path.read_text().split()]
        time.sleep(0.02)
    raise AssertionError(f"{path} never written")


def test_reap_kills_the_grandchildren_of_a_child_that_exited(tmp_path):
    out = tmp_path / "pid"
    proc = children.spawn(["sh", "-c", f"sleep 600 & echo $! > {out}.t; mv {out}.t {out}; echo >> {out}"])
    (grandchild,) = _pids_from(out)
    proc.wait()
    assert not gone(grandchild, 0) and proc.pid in children.running()
    assert children.reap(proc) == 0
    assert gone(grandchild) and proc.pid not in children.running()


def test_kill_all_kills_every_tracked_group(tmp_path):
    procs = [children.spawn(["sleep", "600"]) for _ in range(2)]
    children.kill_all()
    assert [children.reap(p) for p in procs] == [-9, -9]


def test_journalctl_s_group_is_killed_when_its_read_ends(tmp_path):
    from sparktui.probes.kernel_log import read_journal

    out = tmp_path / "pid"
    fake = tmp_path / "journalctl"
    fake.write_text(f"#!/bin/sh\nsleep 600 >/dev/null 2>&1 &\necho $! > {out}\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(RuntimeError, match="journalctl exited 1"):
        read_journal((str(fake),), timeout_s=5)
    assert gone(int(out.read_text()))


def test_a_grandchild_holding_journalctl_s_pipe_cannot_outlast_the_timeout(tmp_path):
    """journalctl's timeout used to kill journalctl alone: a grandchild holding its stdout kept the
    read waiting for ever."""
    from sparktui.probes.kernel_log import read_journal

    fake = tmp_path / "journalctl"
    fake.write_text("#!/bin/sh\nsleep 600 &\nsleep 600\n")
    fake.chmod(0o755)
    box: dict = {}

    def read() -> None:
        try:
            read_journal((str(fake),), timeout_s=0.5)
        except RuntimeError as e:
            box["error"] = str(e)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)  # a thread, so that a read that never ends fails here instead of hanging the suite
    assert not reader.is_alive(), "read_journal still waiting 4.5 s past its timeout"
    assert box["error"] == "journalctl ran past 0.5 s and was stopped"


def test_all_reduce_perf_s_ranks_die_with_it(tmp_path):
    from sparktui.flows import nccl_test

    out = tmp_path / "pid"
    fake = tmp_path / "all_reduce_perf"
    fake.write_text(f"#!/bin/sh\nsleep 600 >/dev/null 2>&1 &\necho $! > {out}\n")
    fake.chmod(0o755)
    res = nccl_test.run([str(fake)], binary=str(fake), timeout_s=10)
    assert res["returncode"] == 0
    assert gone(int(out.read_text()))


@pytest.mark.parametrize("told", [True, False], ids=["registered", "killed-before-registration"])
def test_the_watchdog_kills_what_a_dead_parent_left_and_ends(tmp_path, told):
    """A parent that dies without running anything (SIGKILL) leaves no child group and no watchdog.
    Also when the kill lands before the parent told the watchdog the child's group (seen in the
    soak on a loaded machine): the child's environment carries the run's token."""
    out = tmp_path / "pids"
    deaf = "" if told else "children._tell = lambda line: None  # the watchdog never hears of the child\n"
    code = ("import sys, time\nfrom sparktui.core import children\nchildren._start_watchdog()\n" + deaf
            + f"p = children.spawn(['sh', '-c', 'sleep 600 & echo $$ $! > {out}; wait'])\ntime.sleep(600)\n")
    marker = f"watchdog-{os.getpid()}-{time.monotonic_ns()}"
    parent = subprocess.Popen([sys.executable, "-c", code], env={**ENV_KEEP, "SPARKTUI_TEST_RUN": marker})
    try:
        deadline = time.monotonic() + 10
        while not (out.exists() and len(out.read_text().split()) == 2) and time.monotonic() < deadline:
            time.sleep(0.02)
        child, grandchild = (int(x) for x in out.read_text().split())
        parent.kill()
        parent.wait()
        t0 = time.monotonic()
        assert gone(child, 5.0) and gone(grandchild, 5.0)  # ~20 ms measured; the margin is for a loaded machine
        while marked(marker) and time.monotonic() - t0 < 5.0:  # the watchdog exits just after its kill
            time.sleep(0.02)
        assert marked(marker) == []
    finally:
        if parent.poll() is None:
            parent.kill()


def test_sigterm_to_the_dashboard_stops_its_probes_and_keeps_the_session_whole(tmp_path):
    """The live dashboard in a real terminal (tmux): SIGTERM ends it as q does, exit 143, with
    nothing left running and every line of the kept session whole."""
    import json
    import uuid

    from sparktui.core.session import sessions_dir
    from tests.ui.test_tmux_e2e import Tmux, sparktui_cmd

    hang = make_standin(tmp_path, "hang_grandchild")
    marker, pidfile = uuid.uuid4().hex, tmp_path / "pids"
    tmux = Tmux(tmp_path)
    try:
        tmux.start(f"env SPARKTUI_TEST_RUN={marker} STANDIN_PIDFILE={pidfile} "
                   + sparktui_cmd(tmp_path, "--python", hang, "--path", str(tmp_path)))
        probe, _ = wait_for_pids(pidfile, timeout=30)
        dashboard = int(Path(f"/proc/{probe}/stat").read_text().rsplit(")", 1)[1].split()[1])  # the probe's parent
        os.kill(dashboard, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while not (tmp_path / "exit.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (tmp_path / "exit.txt").read_text().strip() == "EXITED 143", tmux.screen()
        deadline = time.monotonic() + 3
        while marked(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marked(marker) == []
        (session,) = sessions_dir().glob("*.jsonl")
        lines = session.read_text().splitlines()
        assert lines and all(isinstance(json.loads(line), dict) for line in lines)
    finally:
        tmux.kill()
        for pid in (int(x) for x in (pidfile.read_text().split() if pidfile.exists() else [])):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_the_watchdog_is_a_small_process_that_stays_for_the_session():
    """It lives as long as sparktui (hours beside a run), so its memory counts: a shell, not a
    second Python (a Python watchdog held 10.2 MB resident on the lent H100, as much as a
    sixth of the dashboard; dash holds ~1.6 MB). It still ends, killing nothing, at end of file."""
    import psutil

    code = ("import sys, time\nfrom sparktui.core import children\nchildren._start_watchdog()\n"
            "print(children._watchdog['proc'].pid, flush=True)\nsys.stdin.read()\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=ENV_KEEP)
    try:
        dog = psutil.Process(int(parent.stdout.readline()))
        time.sleep(0.2)
        assert dog.exe() != os.path.realpath(sys.executable)
        assert dog.memory_info().rss < 6 * 2**20, dog.memory_info()
        parent.stdin.close()  # the parent ends normally: the pipe closes, the watchdog ends
        parent.wait(10)
        assert gone(dog.pid, 5.0)
    finally:
        if parent.poll() is None:
            parent.kill()
