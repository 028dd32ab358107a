"""The memory guard (flows/guard.py, issue 26 item 4): the decision on stand-in meminfo/PSI series, and
the actions on REAL processes (orphans, as a user's jobs are not sparktui's children). The only fake is
`docker` (none here): a script on PATH that records its argv.

Each acting test restricts the real process scan to its own stand-in processes: another test (or
another user's job) that looks like a server on this machine is never signalled from here."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import psutil

from sparktui.core.config import Config, GuardConfig
from sparktui.flows import guard
from sparktui.flows.guard import GIB, AuditLog, Guard, Sample, decide
from sparktui.probes import processes
from tests.real_processes import ended, orphan
from tests.ui.waiting import polled as _wait

# /proc/pressure/memory as the kernel prints it (Documentation/accounting/psi.rst,
# https://docs.kernel.org/accounting/psi.html): a "some" and a "full" line
PSI_TEXT = "some avg10={some:.2f} avg60=0.00 avg300=0.00 total=0\nfull avg10={full:.2f} avg60=0.00 avg300=0.00 total=0\n"


def _cfg(**kw) -> GuardConfig:
    return GuardConfig(**{"enabled": True, "floor_gib": 4.0, "hold_s": 20.0, "psi_full_avg10_min": 10.0, **kw})


def _series(values_gib, psi=None, step=1.0, t0=100.0):
    return [Sample(t0 + i * step, None if v is None else int(v * GIB), psi) for i, v in enumerate(values_gib)]


# -- the decision -----------------------------------------------------------------------------------

def test_over_the_floor_is_armed():
    d = decide(_series([50, 40, 30]), _cfg())
    assert (d.state, d.phase) == ("armed", "above") and "30.0 GiB" in d.reason


def test_under_the_floor_for_less_than_hold_waits_and_at_hold_triggers_confirmed_by_psi():
    s = _series([5] + [3.9] * 20, psi=25.0)  # under from t=101 to t=120: 19 s
    d = decide(s, _cfg())
    assert (d.state, d.phase) == ("armed", "holding") and d.held_s == 19
    s = _series([5] + [3.9] * 21, psi=25.0)  # 20 s: the hold is met
    d = decide(s, _cfg())
    assert d.state == "triggered" and d.basis == "floor and PSI" and "PSI memory full avg10 25%" in d.reason


def test_psi_under_its_minimum_does_not_confirm():
    d = decide(_series([3] * 30, psi=2.0), _cfg())
    assert (d.state, d.phase) == ("armed", "unconfirmed") and "not acting" in d.reason


def test_where_psi_is_unreadable_the_floor_alone_decides_and_says_so():
    s = [Sample(100.0 + i, 3 * GIB, None, psi_why="/proc/pressure/memory absent") for i in range(25)]
    d = decide(s, _cfg())
    assert d.state == "triggered" and d.basis.startswith("floor alone") and "absent" in d.basis


def test_one_reading_over_the_floor_restarts_the_hold():
    s = _series([3] * 15 + [4.1] + [3] * 10, psi=50.0)
    d = decide(s, _cfg())
    assert (d.state, d.phase) == ("armed", "holding") and d.held_s == 9


def test_a_gap_in_the_readings_starts_the_hold_again():
    """Two readings a minute apart (a stalled loop, a suspended machine) say nothing of the minute between."""
    s = _series([3] * 5, psi=50.0) + [Sample(200.0 + i, 3 * GIB, 50.0) for i in range(5)]
    d = decide(s, _cfg())
    assert (d.state, d.phase) == ("armed", "holding") and d.held_s == 4


def test_an_unreadable_memavailable_breaks_the_hold_and_is_blind_not_ok():
    s = _series([3] * 25 + [None], psi=50.0)
    d = decide(s, _cfg())
    assert d.state == "blind" and "nothing decided" in d.reason
    d = decide(_series([3] * 10 + [None] + [3] * 10, psi=50.0), _cfg())
    assert d.phase == "holding"


def test_cooldown_after_an_action():
    s = _series([3] * 30, psi=50.0)
    assert decide(s, _cfg(cooldown_s=120), last_action_t=s[-1].t - 10).state == "cooling down"
    assert decide(s, _cfg(cooldown_s=120), last_action_t=s[-1].t - 121).state == "triggered"


def _files(tmp_path: Path, avail_gib: float, full: float | None = 30.0) -> tuple[str, str]:
    mem = tmp_path / "meminfo"
    mem.write_text(f"MemTotal:       127535904 kB\nMemFree:         1000000 kB\nMemAvailable:   {int(avail_gib * 2**20)} kB\n")
    psi = tmp_path / "pressure"
    if full is None:
        psi.unlink(missing_ok=True)
    else:
        psi.write_text(PSI_TEXT.format(some=full * 2, full=full))
    return str(mem), str(psi)


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _guard(tmp_path, cfg: Config, clock: Clock, scan=None) -> Guard:
    mem, psi = str(tmp_path / "meminfo"), str(tmp_path / "pressure")
    return Guard(cfg, meminfo=mem, pressure=psi, audit=AuditLog(tmp_path / "guard.jsonl"), clock=clock,
                 scan=scan or (lambda c: {"rows": []}))


def _audit(tmp_path) -> list[dict]:
    text = (tmp_path / "guard.jsonl").read_text()
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]  # every line whole JSON


def test_the_guard_on_stand_in_meminfo_and_pressure_files(tmp_path):
    """Readings from files in /proc's formats: held under the floor for hold_s with PSI over its
    minimum it triggers (a dry run: nothing done), then cools down; each change is one audit line."""
    cfg = Config(guard=_cfg(hold_s=5, cooldown_s=30))
    clock = Clock()
    g = _guard(tmp_path, cfg, clock)
    _files(tmp_path, 20)
    assert g.step().decision.phase == "above"
    _files(tmp_path, 3.5, full=40.0)
    phases = []
    for _ in range(7):
        clock.t += 1
        phases.append(g.step().decision.phase)
    assert phases == ["holding"] * 5 + ["triggered", "cooling"]
    lines = _audit(tmp_path)
    assert [r["state"] for r in lines] == ["armed", "armed", "triggered", "cooling down"]
    act = lines[2]
    assert act["event"] == "action" and act["dry_run"] is True and act["basis"] == "floor and PSI"
    assert act["mem_available_bytes"] == int(3.5 * 2**20) * 1024 and act["psi_full_avg10"] == 40.0


def test_without_psi_the_guard_acts_on_the_floor_alone(tmp_path):
    cfg = Config(guard=_cfg(hold_s=2))
    clock = Clock()
    g = _guard(tmp_path, cfg, clock)
    _files(tmp_path, 1.0, full=None)
    steps = []
    for _ in range(3):
        steps.append(g.step())
        clock.t += 1
    assert steps[-1].decision.state == "triggered"
    assert "floor alone" in steps[-1].decision.basis and "absent" in steps[-1].decision.basis


def test_readings_kept_are_bounded(tmp_path):
    cfg = Config(guard=_cfg(hold_s=5))
    clock = Clock()
    g = _guard(tmp_path, cfg, clock)
    _files(tmp_path, 50)
    for _ in range(200):
        clock.t += 1
        g.step()
    assert len(g.readings) <= 5 + 10 + 1
    assert len(_audit(tmp_path)) <= 5  # a change or a heartbeat a minute, not a line a second


# -- acting on real processes -----------------------------------------------------------------------

def _server_standin(tmp_path: Path) -> tuple[list[str], Path]:
    """`python -m vllm.entrypoints.openai.api_server ...`: a module that waits, found in its cwd."""
    pkg = tmp_path / "standin" / "vllm" / "entrypoints" / "openai"
    pkg.mkdir(parents=True)
    for d in (pkg, pkg.parent, pkg.parent.parent):
        (d / "__init__.py").write_text("")
    (pkg / "api_server.py").write_text("import pathlib, sys, time\npathlib.Path(sys.argv[-1]).write_text('ready')\n"
                                       "time.sleep(60)\n")
    ready = tmp_path / "server.ready"
    argv = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--gpu-memory-utilization", "0.5", str(ready)]
    assert processes.classify("python", argv)[:2] == ("server", "vllm")
    return argv, ready


def _training_standin(tmp_path: Path) -> tuple[list[str], Path]:
    script = tmp_path / "train_sft.py"
    script.write_text("import pathlib, sys, time\npathlib.Path(sys.argv[1]).write_text('ready')\n"
                      "for _ in range(600):\n    time.sleep(0.1)\n")
    ready = tmp_path / "train.ready"
    argv = [sys.executable, str(script), str(ready)]
    assert processes.classify("python", argv)[0] == "training"
    return argv, ready


def _only(pids: set[int]):
    """The real scan (G6's classification of real processes), restricted to this test's own."""
    def scan(cfg):
        data = processes.scan(None, cfg)
        return {**data, "rows": [r for r in data.get("rows", []) if r["pid"] in pids]}
    return scan




def test_term_kind_ends_a_real_server_process(tmp_path):
    argv, ready = _server_standin(tmp_path)
    with orphan(argv, ready, cwd=tmp_path / "standin") as pid:
        cfg = Config(guard=_cfg(action="term-kind", act=True))
        out = guard.act(cfg, dry_run=False, scan=_only({pid}))
        assert not out.errors, out.errors
        assert [t["pid"] for t in out.targets] == [pid] and out.targets[0]["result"] == "sent SIGTERM"
        assert _wait(lambda: ended(pid)), "the stand-in server did not end on SIGTERM"


def test_the_largest_instance_is_stopped_first():
    rows = [{"pid": 10, "kind": "server", "server": "vllm", "group": 10, "rss_bytes": 1 * GIB, "gpu_mem_bytes": 2 * GIB},
            {"pid": 11, "kind": "server", "server": "vllm", "group": 10, "rss_bytes": 1 * GIB},
            {"pid": 20, "kind": "server", "server": "ollama", "group": 20, "rss_bytes": 3 * GIB},
            {"pid": 30, "kind": "training", "group": 30, "rss_bytes": 50 * GIB}]
    found = guard.instances(rows, "server")
    assert [[r["pid"] for r in g] for g in found] == [[10, 11], [20]]
    assert [[r["pid"] for r in g] for g in guard.instances(rows, "ollama")] == [[20]]


def test_pause_run_stops_a_real_training_process_and_says_how_to_resume(tmp_path):
    argv, ready = _training_standin(tmp_path)
    with orphan(argv, ready) as pid:
        cfg = Config(guard=_cfg(action="pause-run", act=True))
        out = guard.act(cfg, dry_run=False, scan=_only({pid}))
        assert not out.errors, out.errors
        p = psutil.Process(pid)
        assert _wait(lambda: p.status() == psutil.STATUS_STOPPED)
        with open(f"/proc/{pid}/stat") as f:
            assert f.read().rsplit(")", 1)[1].split()[0] == "T"  # the kernel's own word: stopped
        assert out.resume == f"kill -CONT {pid}"
        os.kill(pid, signal.SIGCONT)
        assert _wait(lambda: p.status() != psutil.STATUS_STOPPED)


def test_pause_run_stops_the_runs_workers_too(tmp_path):
    """A launcher's worker that nothing classifies (a rank NVML does not list here) is paused with it."""
    script = tmp_path / "train_lora.py"
    script.write_text("import pathlib, subprocess, sys, time\n"
                      "w = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
                      "pathlib.Path(sys.argv[1]).write_text(str(w.pid))\n"
                      "time.sleep(60)\n")
    ready = tmp_path / "run.ready"
    with orphan([sys.executable, str(script), str(ready)], ready) as pid:
        _wait(lambda: ready.read_text().strip().isdigit())
        worker = int(ready.read_text())
        try:
            out = guard.act(Config(guard=_cfg(action="pause-run", act=True)), dry_run=False, scan=_only({pid}))
            assert not out.errors, out.errors
            assert [t["pid"] for t in out.targets] == [pid, worker] and out.targets[1]["kind"] == "descendant"
            for p in (pid, worker):
                assert _wait(lambda p=p: psutil.Process(p).status() == psutil.STATUS_STOPPED)
            assert out.resume == f"kill -CONT {pid} {worker}"
        finally:
            os.kill(worker, signal.SIGKILL)


def test_a_reused_pid_is_never_signalled(tmp_path):
    """The row's start time differs from the process now at that pid: refused, the process lives."""
    argv, ready = _server_standin(tmp_path)
    with orphan(argv, ready, cwd=tmp_path / "standin") as pid:
        real = _only({pid})

        def reused(cfg):
            data = real(cfg)
            return {**data, "rows": [dict(r, started=r["started"] - 3600) for r in data["rows"]]}

        out = guard.act(Config(guard=_cfg(action="term-kind")), dry_run=False, scan=reused)
        assert out.targets and out.targets[0]["result"].startswith("refused") and "now another process" in out.errors[0]
        time.sleep(0.2)
        assert not ended(pid) and psutil.Process(pid).status() != psutil.STATUS_STOPPED


def test_a_row_without_a_start_time_is_never_signalled(tmp_path):
    argv, ready = _training_standin(tmp_path)
    with orphan(argv, ready) as pid:
        out = guard.act(Config(guard=_cfg(action="pause-run")), dry_run=False,
                        scan=lambda c: {"rows": [{"pid": pid, "kind": "training", "started": None}]})
        assert "start time unknown" in out.errors[0]
        assert psutil.Process(pid).status() != psutil.STATUS_STOPPED


def test_never_sparktui_itself_or_pid_1():
    rows = [{"pid": os.getpid(), "kind": "server", "started": psutil.Process().create_time(), "group": 1},
            {"pid": 1, "kind": "server", "started": 0.0, "group": 1}]  # one instance: both are tried
    out = guard.act(Config(guard=_cfg(action="term-kind")), dry_run=False, scan=lambda c: {"rows": rows})
    assert all(t["result"].startswith("refused") for t in out.targets) and len(out.errors) == 2


def test_dry_run_signals_nothing_but_writes_the_audit_line(tmp_path):
    argv, ready = _server_standin(tmp_path)
    with orphan(argv, ready, cwd=tmp_path / "standin") as pid:
        cfg = Config(guard=_cfg(action="term-kind", hold_s=1))  # act = false: the default
        clock = Clock()
        g = _guard(tmp_path, cfg, clock, scan=_only({pid}))
        assert g.dry_run
        _files(tmp_path, 2.0, full=50.0)
        g.step()
        clock.t += 1
        st = g.step()
        assert st.decision.state == "triggered" and st.outcome is not None
        time.sleep(0.3)
        assert not ended(pid)
        rec = _audit(tmp_path)[-1]
        assert rec["event"] == "action" and rec["dry_run"] is True
        assert rec["targets"][0]["pid"] == pid and rec["targets"][0]["result"] == "dry run: would send SIGTERM"
        assert "would send SIGTERM to pid" in " ".join(rec["did"]) and "vllm.entrypoints" in rec["targets"][0]["command"]


def _fake_docker(tmp_path: Path, rc: int = 0) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "docker.argv"
    exe = bin_dir / "docker"
    exe.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {log}\necho stopped-or-not\nexit {rc}\n")
    exe.chmod(0o755)
    return log


def test_stop_container_runs_docker_stop_with_the_name(tmp_path, monkeypatch):
    log = _fake_docker(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    out = guard.act(Config(guard=_cfg(action="stop-container", target="vllm-qwen", act=True)), dry_run=False)
    assert not out.errors and out.did == ["ran docker stop vllm-qwen"]
    assert log.read_text().splitlines() == ["stop", "vllm-qwen"]


def test_stop_container_dry_run_does_not_run_docker(tmp_path, monkeypatch):
    log = _fake_docker(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    out = guard.act(Config(guard=_cfg(action="stop-container", target="vllm-qwen")), dry_run=True)
    assert out.did == ["dry run: would run docker stop vllm-qwen"] and not out.errors and not log.exists()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    out = guard.act(Config(guard=_cfg(action="stop-container", target="vllm-qwen")), dry_run=True)
    assert out.errors == ["docker not found on PATH: acting, it could not stop container vllm-qwen"]


def test_docker_failing_or_missing_is_a_clear_error_in_the_audit_log(tmp_path, monkeypatch):
    _fake_docker(tmp_path, rc=1)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    out = guard.act(Config(guard=_cfg(action="stop-container", target="c1")), dry_run=False)
    assert out.errors == ["docker stop c1 exited 1: stopped-or-not"]
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    cfg = Config(guard=_cfg(action="stop-container", target="c1", act=True, hold_s=1))
    clock = Clock()
    g = _guard(tmp_path, cfg, clock)
    _files(tmp_path, 1.0)
    g.step()
    clock.t += 1
    g.step()
    rec = _audit(tmp_path)[-1]
    assert rec["event"] == "action" and rec["errors"] == ["docker not found on PATH: container c1 not stopped"]


def test_a_target_that_cannot_be_used_is_said_not_run():
    for bad in (None, "", "--all", "a b"):
        out = guard.act(Config(guard=_cfg(action="stop-unit", target=bad)), dry_run=False)
        assert out.errors and "target" in out.errors[0] and not out.did
    assert guard.target_problem(_cfg(action="term-kind", target="nonsense"))
    assert guard.target_problem(_cfg(action="term-kind", target="vllm")) is None


# -- the audit log ----------------------------------------------------------------------------------

def test_audit_lines_stay_whole_with_writers_in_threads_and_the_log_rotates(tmp_path):
    log = AuditLog(tmp_path / "g.jsonl", max_bytes=20_000)
    other = AuditLog(tmp_path / "g.jsonl", max_bytes=20_000)  # a second writer (the dashboard and the CLI)

    errors = []

    def write(a, n):
        for i in range(n):
            errors.append(a.write({"i": i, "reason": "x" * 200, "outside": "\x1b[31m\u202e"}))

    ts = [threading.Thread(target=write, args=(a, 150)) for a in (log, other)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == [None] * 300
    main, old = tmp_path / "g.jsonl", tmp_path / "g.jsonl.1"
    assert old.exists() and main.stat().st_size <= 20_000 and old.stat().st_size <= 20_000
    for p in (main, old):
        for line in p.read_text().splitlines():
            assert json.loads(line)["outside"] == "\x1b[31m\u202e"  # whole, and escaped in the file
        assert "\x1b" not in p.read_text()


def test_an_audit_log_that_cannot_be_written_is_said(tmp_path):
    (tmp_path / "f").write_text("")
    err = AuditLog(tmp_path / "f" / "guard.jsonl").write({"a": 1})
    assert err and "not written" in err


def test_the_default_audit_log_is_in_the_state_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert guard.audit_path(_cfg()) == tmp_path / "sparktui" / "guard.jsonl"


def test_the_guard_thread_stops_at_once(tmp_path):
    cfg = Config(guard=_cfg())
    _files(tmp_path, 50)
    steps = []
    th = guard.GuardThread(_guard(tmp_path, cfg, time.monotonic), steps.append, interval_s=30)
    th.start()
    assert _wait(lambda: steps)
    t0 = time.monotonic()
    th.stop()
    assert time.monotonic() - t0 < 1 and not th._thread.is_alive()


# -- `sparktui guard` -------------------------------------------------------------------------------

def _config(tmp_path: Path, text: str) -> str:
    p = tmp_path / "config.toml"
    p.write_text(text)
    return str(p)


def test_guard_once_prints_the_decision_and_exits_by_it(tmp_path, capsys, monkeypatch):
    from sparktui.cli.main import main

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    mem, psi = _files(tmp_path, 40)
    cfg = _config(tmp_path, "[guard]\nfloor_gib = 8\n")
    assert main(["guard", "--once", "--meminfo", mem, "--pressure", psi, "--config", cfg]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "guard armed: MemAvailable 40.0 GiB at or over the floor 8 GiB" in out
    assert json.loads((tmp_path / "state" / "sparktui" / "guard.jsonl").read_text())["state"] == "armed"
    (tmp_path / "meminfo").write_text("MemTotal: 100 kB\n")
    assert main(["guard", "--once", "--meminfo", mem, "--pressure", psi, "--config", cfg]) == 3
    assert "guard blind" in capsys.readouterr().out


def test_guard_once_under_the_floor_watches_through_the_hold_then_exits_2(tmp_path, capsys, monkeypatch):
    from sparktui.cli.main import main

    mem, psi = _files(tmp_path, 1.0, full=60.0)
    cfg = _config(tmp_path, f'[guard]\nhold_s = 0.3\naction = "stop-container"\ntarget = "llm"\n'
                  f'audit_log = "{tmp_path / "a.jsonl"}"\n')
    t0 = time.monotonic()
    assert main(["guard", "--once", "--interval", "0.1", "--meminfo", mem, "--pressure", psi, "--config", cfg]) == 2
    assert time.monotonic() - t0 < 5
    out = capsys.readouterr().out.splitlines()
    assert "guard armed: MemAvailable 1.0 GiB under the floor 4 GiB for 0 s" in out[0]
    assert "guard triggered:" in out[-1] and "dry run: would run docker stop llm" in out[-1]
    _files(tmp_path, 1.0, full=1.0)  # PSI says nothing stalls: not confirmed
    assert main(["guard", "--once", "--interval", "0.1", "--meminfo", mem, "--pressure", psi, "--config", cfg]) == 0
    assert "not acting" in capsys.readouterr().out.splitlines()[-1]


def test_guard_refuses_a_config_it_cannot_act_on(tmp_path, capsys):
    from sparktui.cli.main import main

    cfg = _config(tmp_path, '[guard]\naction = "stop-container"\n')
    assert main(["guard", "--once", "--config", cfg]) == 78
    assert "needs [guard] target" in capsys.readouterr().err


def test_guard_in_the_foreground_stops_cleanly_on_sigterm(tmp_path):
    """A real `sparktui guard` (a dry run): it triggers on the stand-in files, prints each decision as
    a line, and SIGTERM ends it with exit 0 and a last audit line."""
    import subprocess

    mem, psi = _files(tmp_path, 1.0, full=60.0)
    cfg = _config(tmp_path, '[guard]\nhold_s = 0.3\naction = "stop-unit"\ntarget = "vllm.service"\n'
                  f'audit_log = "{tmp_path / "audit.jsonl"}"\n')
    proc = subprocess.Popen([sys.executable, "-m", "sparktui", "guard", "--interval", "0.1", "--meminfo", mem,
                             "--pressure", psi, "--config", cfg], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert _wait(lambda: (tmp_path / "audit.jsonl").exists()
                     and '"triggered"' in (tmp_path / "audit.jsonl").read_text(), timeout=20)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "(dry run: nothing is done)" in out.splitlines()[0]
    assert "guard triggered:" in out and "would run systemctl stop vllm.service" in out and out.endswith("guard: stopped\n")
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert lines[-1]["event"] == "stopped" and any(r["event"] == "action" and r["dry_run"] for r in lines)


def test_a_printed_line_is_inert(tmp_path):
    """Outside text in a decision (a stand-in file's name; a process's command line) reaches the
    terminal as visible escapes, never as a control sequence."""
    _files(tmp_path, 50)
    g = Guard(Config(guard=_cfg()), meminfo=str(tmp_path / "meminfo"), pressure=str(tmp_path / "p\x1b]0;owned\x07"),
              audit=AuditLog(tmp_path / "guard.jsonl"))
    line = g.step().line()
    assert "\x1b" not in line and "\x07" not in line and "p\\e]0;owned\\x07" in line
    out = guard.act(Config(guard=_cfg(action="term-kind")), dry_run=True, scan=lambda c: {"rows": [
        {"pid": 999_999_999, "kind": "server", "started": 1.0, "command": "vllm serve \x1b[2J\u202e"}]})
    assert out.targets[0]["command"] == "vllm serve \\e[2J\\u202e"
