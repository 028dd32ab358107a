"""G5: the gates, the verdict, and the intrusive probe's subprocess handling with stand-ins."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g05_bandwidth as g5
from sparktui.gotchas.g05_bandwidth import GIB, gate, judge_result
from sparktui.probes import bandwidth
from tests.conftest import readings_of
from tests.standins.make import make_script, make_standin
from sparktui.flows.bandwidth import blockers, competitors, decide
from sparktui.core.readings import Reading, Readings

# --- gates ----------------------------------------------------------------------------------------


def test_gate_allows_an_idle_machine_with_room():
    d = gate(4 * GIB, 100 * GIB, [], None, force=False)
    assert d.allowed and d.buffer_bytes == 4 * GIB and not d.forced


def test_gate_scales_the_buffer_down_when_memory_is_short():
    d = gate(4 * GIB, 6 * GIB, [], None, force=False)
    assert d.allowed and d.buffer_bytes == 2 * GIB
    assert "scaled down to 2.00 GiB" in d.reasons[0]


def test_gate_refuses_when_even_the_minimum_does_not_fit_and_force_does_not_help():
    for force in (False, True):
        d = gate(4 * GIB, 1 * GIB, [], None, force=force)
        assert not d.allowed and "not overridable" in d.reasons[0]


def test_gate_refuses_unreadable_meminfo():
    d = gate(4 * GIB, None, [], None, force=True)
    assert not d.allowed and "MemAvailable unreadable" in d.reasons[0]


@pytest.mark.parametrize("row,needle", [
    ({"pid": 7, "name": "python", "kind": "training", "gpu_memory_bytes": None}, "training running: pid 7"),
    ({"pid": 8, "name": "vllm", "kind": "server", "gpu_memory_bytes": 80 * GIB}, "server running: pid 8 vllm (80.0 GiB"),
    ({"pid": 9, "name": "blender", "kind": "gpu-process", "gpu_memory_bytes": 2 * GIB}, "holds GPU memory: pid 9"),
])
def test_gate_refuses_other_gpu_users_unless_forced(row, needle):
    d = gate(4 * GIB, 100 * GIB, [row], None, force=False)
    assert not d.allowed and any(needle in r for r in d.reasons) and "--force" in d.reasons[-1]
    f = gate(4 * GIB, 100 * GIB, [row], None, force=True)
    assert f.allowed and f.forced and any("overridden by --force" in r for r in f.reasons)


def test_gate_refuses_a_blind_process_view():
    d = gate(4 * GIB, 100 * GIB, [], "GPU process list not visible here (container?)", force=False)
    assert not d.allowed and "cannot confirm the machine is idle" in d.reasons[0]


# --- verdict --------------------------------------------------------------------------------------

GB10_RESULT = {"status": "ok", "device": "NVIDIA GB10", "copy_gbs": 201.3, "read_gbs": 240.2, "buffer_bytes": 4 * GIB,
               "iterations": 12, "repeats": 5, "spread_pct": 1.2, "measured_at": 1000.0}


def test_fresh_gb10_figure_in_range_is_ok_and_says_to_budget_from_it():
    v = judge_result(GB10_RESULT, 1000.0, fresh=True)
    assert v.status is Status.OK
    assert "201 GB/s copy" in v.summary and "budget from this, not the spec" in v.summary and "180-220" in v.summary


def test_fresh_figure_far_below_range_warns():
    v = judge_result({**GB10_RESULT, "copy_gbs": 95.0}, 1000.0, fresh=True)
    assert v.status is Status.WARN and "far below" in v.summary and v.fix


def test_device_not_in_table_is_said():
    v = judge_result({**GB10_RESULT, "device": "Tesla T4"}, 1000.0, fresh=True)
    assert v.status is Status.OK and "not in sparktui's table" in v.summary


def test_kept_result_is_skip_with_figure_and_age():
    r = readings_of(bandwidth_last=GB10_RESULT)
    from dataclasses import replace
    r.add(replace(r.get_reading("bandwidth_last"), started_at=1000.0 + 3 * 3600))
    v = g5.judge(r, Config())
    assert v.status is Status.SKIP and "last measured 201 GB/s copy" in v.summary and "(3.0 h ago)" in v.summary


def test_no_measurement_yet_is_skip_with_the_command():
    v = g5.judge(readings_of(bandwidth_last=None), Config())
    assert v.status is Status.SKIP and "sparktui bandwidth" in v.summary


# --- the subprocess, with stand-in interpreters ---------------------------------------------------

FAKE_CUDA_TORCH = '''
import types
__version__ = "2.9.0+cu130"
version = types.SimpleNamespace(cuda="13.0", hip=None, git_version="fake")
backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=lambda: 91000))
float32 = "float32"
class _Buf:
    def fill_(self, v): return self
    def copy_(self, o): return self
class Event:
    def __init__(self, enable_timing=False): pass
    def record(self): pass
    def synchronize(self): pass
    def elapsed_time(self, other): return 100.0   # ms, whatever ran in between
class _Cuda:
    Event = Event
    def is_available(self): return True
    def get_device_name(self, i=0): return "NVIDIA GB10"
    def get_device_capability(self, i=0): return (12, 1)
    def synchronize(self): pass
cuda = _Cuda()
def device(name): return name
def empty(n, dtype=None, device=None): return _Buf()
def empty_like(b): return _Buf()
def sum(b): return 0
'''


def _fake_python(tmp_path, torch_src):
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(torch_src)
    return make_script(tmp_path, "python-fake", f"PYTHONPATH='{site}' exec '{sys.executable}' \"$@\"\n")


def test_probe_arithmetic_counts_read_plus_written_bytes(tmp_path):
    py = _fake_python(tmp_path, FAKE_CUDA_TORCH)
    res = bandwidth.measure(py, 2 * GIB, timeout_s=30, repeats=3)
    assert res["status"] == "ok", res
    # every timed block "takes" 100 ms: iterations = target 0.25 s / (100 ms / 3) -> 7
    assert res["iterations"] == 7
    half = GIB
    assert res["copy_gbs"] == pytest.approx(2 * half * 7 / 0.1 / 1e9)
    assert res["read_gbs"] == pytest.approx(half * 7 / 0.1 / 1e9)
    assert res["buffer_bytes"] == 2 * GIB and "read + written" in res["convention"]


def test_probe_on_a_crashing_interpreter_names_the_signal(tmp_path):
    res = bandwidth.measure(make_standin(tmp_path, "segv_import"), GIB, timeout_s=30)
    assert res["status"] == "unknown" and "SIGSEGV" in res["reason"] and "import torch" in res["reason"]


def test_probe_on_a_hanging_interpreter_is_killed_at_the_timeout(tmp_path):
    t0 = time.monotonic()
    res = bandwidth.measure(make_standin(tmp_path, "hang_import"), GIB, timeout_s=2)
    assert time.monotonic() - t0 < 10
    assert res["status"] == "unknown" and "no answer after 2" in res["reason"]


def test_probe_on_garbage_output(tmp_path):
    py = make_script(tmp_path, "python-garbage", "echo '{not json'; exit 0\n")
    res = bandwidth.measure(py, GIB, timeout_s=10)
    assert res["status"] == "unknown" and "before reporting anything" in res["reason"]


def test_probe_without_torch_points_at_python(tmp_path):
    py = make_standin(tmp_path, "no_torch")  # not `python -I`: the machine's own python may have torch
    res = bandwidth.measure(py, GIB, timeout_s=30)
    assert res["status"] == "unknown" and "torch not importable" in res["reason"]
    v = judge_result(res, None, fresh=True)
    assert v.status is Status.UNKNOWN and "--python" in v.summary


def test_cli_refuses_without_confirmation_when_not_interactive(tmp_path):
    import subprocess

    py = _fake_python(tmp_path, FAKE_CUDA_TORCH)
    p = subprocess.run([sys.executable, "-m", "sparktui", "bandwidth", "--python", py, "--force", "--json"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert p.returncode == 4, p.stderr
    doc = json.loads(p.stdout)
    assert doc["result"]["status"] == "refused" and "not confirmed" in doc["result"]["reason"]


def test_cli_yes_measures_and_keeps_the_result_for_check(tmp_path):
    import subprocess

    py = _fake_python(tmp_path, FAKE_CUDA_TORCH)
    p = subprocess.run([sys.executable, "-m", "sparktui", "bandwidth", "--python", py, "--force", "--yes", "--json", "--size", "2"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    doc = json.loads(p.stdout)
    assert doc["result"]["status"] == "ok", doc
    assert p.returncode in (0, 1)
    p2 = subprocess.run([sys.executable, "-m", "sparktui", "check", "G5", "--json"], capture_output=True, text=True, timeout=60)
    c = json.loads(p2.stdout)["checks"][0]
    assert c["status"] == "skip" and "last measured" in c["summary"]


# --- the device table: first match wins, so order and word edges matter ---------------------------


@pytest.mark.parametrize("name,label,spec", [
    ("NVIDIA GB10", "GB10 (LPDDR5x, unified)", 273.0),
    ("NVIDIA H100 80GB HBM3", "H100 SXM (HBM3)", 3350.0),
    ("NVIDIA H100 PCIe", "H100 PCIe (HBM2e)", 2000.0),
    ("NVIDIA H100 NVL", "H100 NVL (HBM3)", 3900.0),
    ("NVIDIA H200", "H200 (HBM3e)", 4800.0),
    ("NVIDIA GH200 480GB", "GH200 (HBM3)", 4000.0),
    ("NVIDIA A100-SXM4-80GB", "A100 80GB", 2039.0),
    ("NVIDIA A100-SXM4-40GB", "A100 40GB", 1555.0),
    ("Tesla T4", None, None),
    ("NVIDIA GB200", None, None),  # not a GB10
    ("NVIDIA H20", None, None),  # not an H200
])
def test_device_name_picks_its_own_row(name, label, spec):
    e = g5.expected_for(name)
    assert (e.label if e else None) == label and (e.spec if e else None) == spec
    if e:
        assert e.copy[0] < e.copy[1] <= e.spec and e.read[1] <= e.spec


def test_gh200_is_judged_against_its_own_range_not_the_h200s():
    v = judge_result({**GB10_RESULT, "device": "NVIDIA GH200 480GB", "copy_gbs": 3500.0}, 1000.0, fresh=True)
    assert v.status is Status.OK and "3200-3680 GB/s copy on GH200" in v.summary


# --- bad data: unknown naming the field, never a crash ----------------------------------------------


def write_kept(content) -> None:
    from sparktui.probes import state

    p = state.bandwidth_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(content if isinstance(content, str) else json.dumps(content))


def judge_kept():
    from sparktui.core.readings import Readings
    from sparktui.probes import state

    r = Readings()
    r.add(state.read_bandwidth_last(Config()))
    return g5.judge(r, Config())


@pytest.mark.parametrize("field,value,needle", [
    ("copy_gbs", "abc", "copy_gbs is 'abc', not a number"),
    ("copy_gbs", None, "copy_gbs is missing"),
    ("copy_gbs", -3.0, "copy_gbs is -3.0, must be over 0"),
    ("copy_gbs", True, "copy_gbs is True, not a number"),
    ("measured_at", "yesterday", "measured_at is 'yesterday', not a number"),
    ("buffer_bytes", "4 GiB", "buffer_bytes is '4 GiB', not a number"),
    ("spread_pct", "x", "spread_pct is 'x', not a number"),
    ("read_gbs", [240], "read_gbs is [240], not a number"),
    ("device", 5, "device is 5, not a device name"),
])
def test_kept_result_with_a_bad_field_is_unknown_naming_it(field, value, needle):
    write_kept({**GB10_RESULT, field: value})
    v = judge_kept()
    assert v.status is Status.UNKNOWN, v.summary
    assert v.summary.startswith("last result unreadable: ") and needle in v.summary and "sparktui bandwidth" in v.fix


def test_kept_result_with_every_field_wrong_is_unknown_through_check_not_a_judge_error(capsys):
    from sparktui.cli.main import main

    write_kept({"status": "ok", "copy_gbs": "abc", "measured_at": "yesterday", "buffer_bytes": None,
                "spread_pct": "x", "device": 5})
    assert main(["check", "G5", "--json"]) == 3
    (c,) = json.loads(capsys.readouterr().out)["checks"]
    assert c["status"] == "unknown"
    assert c["summary"] == "last result unreadable: field bandwidth_last.copy_gbs: expected float, got str 'abc' (and 4 more)"
    assert "judge error" not in c["summary"]


def test_kept_nan_figure_is_unknown():
    write_kept('{"status": "ok", "device": "NVIDIA GB10", "copy_gbs": NaN}')  # Python's json writes NaN
    v = judge_kept()
    assert v.status is Status.UNKNOWN and "copy_gbs is nan, not a finite number" in v.summary


@pytest.mark.parametrize("content,needle", [("{torn", "Expecting property name"), ("[1, 2]", "not a JSON object"),
                                            ("", "Expecting value")])
def test_kept_file_that_is_not_a_json_object_is_unknown_not_not_run(content, needle):
    write_kept(content)
    v = judge_kept()
    assert v.status is Status.UNKNOWN and v.summary.startswith("last result unreadable: ") and needle in v.summary
    assert "not run" not in v.summary


def test_kept_result_from_the_future_is_called_suspicious_not_zero_seconds_ago():
    r = readings_of(bandwidth_last={**GB10_RESULT, "measured_at": 1000.0 + 3 * 86400})
    from dataclasses import replace
    r.add(replace(r.get_reading("bandwidth_last"), started_at=1000.0))
    v = g5.judge(r, Config())
    assert v.status is Status.SKIP and "last measured 201 GB/s copy" in v.summary
    assert "3.0 days in the future" in v.summary and "suspicious" in v.summary and "0 s ago" not in v.summary
    (m,) = [e for e in v.evidence if e.what == "measured"]
    assert "in the future" in m.value


def test_save_last_refuses_an_unusable_result():
    with pytest.raises(ValueError, match="copy_gbs"):
        bandwidth.save_last({**GB10_RESULT, "copy_gbs": "fast"})
    from sparktui.probes import state
    assert not state.bandwidth_path().exists()


BAD_DONE = {"device": "NVIDIA GB10", "buffer_bytes": 2 * GIB, "iterations": 7, "repeats": 3, "copy_gbs": 201.0}


@pytest.mark.parametrize("override,needle", [
    ({"copy_gbs": "fast"}, "copy_gbs is 'fast', not a number"),
    ({"copy_gbs": None}, "copy_gbs is missing"),
    ({"read_gbs": "quick"}, "read_gbs is 'quick', not a number"),
    ({"spread_pct": "x"}, "spread_pct is 'x', not a number"),
    ({"device": 5}, "device is 5, not a device name"),
    ({"measured_at": "tomorrow"}, None),  # cannot overwrite when it ran: the result is ok
])
def test_probe_result_is_validated_before_anyone_judges_or_keeps_it(tmp_path, override, needle):
    done = {k: v for k, v in {**BAD_DONE, **override}.items() if v is not None}
    py = make_standin(tmp_path, "bandwidth_result", extra_env={"FAKE_BANDWIDTH_RESULT": json.dumps(done)})
    res = bandwidth.measure(py, 2 * GIB, timeout_s=30)
    if needle is None:
        assert res["status"] == "ok" and isinstance(res["measured_at"], float)
        return
    assert res["status"] == "unknown" and needle in res["reason"], res
    v = judge_result(res, res["measured_at"], fresh=True)
    assert v.status is Status.UNKNOWN and "the probe's result is invalid" in v.summary and needle in v.summary


def test_cli_with_an_interpreter_reporting_a_bad_figure_keeps_nothing(tmp_path):
    import subprocess

    from sparktui.probes import state

    py = make_standin(tmp_path, "bandwidth_result", extra_env={"FAKE_BANDWIDTH_RESULT": json.dumps({**BAD_DONE, "copy_gbs": "fast"})})
    p = subprocess.run([sys.executable, "-m", "sparktui", "bandwidth", "--python", py, "--force", "--yes", "--json", "--size", "1"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 3
    doc = json.loads(p.stdout)
    assert doc["verdict"]["status"] == "unknown" and "copy_gbs is 'fast'" in doc["verdict"]["summary"]
    assert not state.bandwidth_path().exists()
    p2 = subprocess.run([sys.executable, "-m", "sparktui", "check", "G5", "--json"], capture_output=True, text=True, timeout=60)
    c = json.loads(p2.stdout)["checks"][0]
    assert c["status"] == "skip" and "not run automatically" in c["summary"]


# --- --size -------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", ["nan", "inf", "1e-9", "0.1", "NaN"])
def test_size_that_is_not_a_finite_buffer_of_at_least_the_minimum_is_a_usage_error(size, capsys):
    from sparktui.cli.main import main

    assert main(["bandwidth", "--size", size, "--yes", "--force", "--python", "/nonexistent/python"]) == 64
    err = capsys.readouterr().err
    assert "--size must be a finite number of GiB, at least 0.5" in err and "Traceback" not in err


def test_size_at_the_minimum_is_accepted():
    from sparktui.cli.bandwidth import size_bytes

    assert size_bytes(0.5) == g5.MIN_BUFFER and size_bytes(4) == 4 * GIB


# --- gates on real processes and recorded meminfo --------------------------------------------------

# /proc/meminfo as `sparktui snapshot` recorded it on a real machine (MemAvailable 125.3 GiB)
RECORDED_MEMINFO = json.loads((Path(__file__).resolve().parents[2] / "data" / "h200" / "snapshot.json").read_text())["readings"]["meminfo"]["data"]
SHORT_MEMINFO_TEXT = ("MemTotal:       127611680 kB\nMemFree:          838860 kB\nMemAvailable:    1258291 kB\n"
                      "Buffers:           2048 kB\nCached:           524288 kB\n")  # 1.2 GiB available


@pytest.fixture
def fake_gpu():
    from sparktui.testing import fake_nvml

    with fake_nvml.installed(fake_nvml.gb10()) as f:
        yield f


def observe_mine(kids, meminfo=RECORDED_MEMINFO, inside_container=False):
    """What `sparktui bandwidth` reads for its gates: a real process scan (only this test's own
    children kept: parallel tests start servers of their own) and a recorded /proc/meminfo."""
    from sparktui.core.readings import Reading, Readings
    from sparktui.probes import processes
    from sparktui.probes.nvml import NvmlSession

    def observe():
        s = NvmlSession()
        try:
            data = processes.scan(s, markers=(), exclude_own=False)  # this test's children stand in for the user's
        finally:
            s.close()
        mine = {p.pid for p in kids.procs}
        data["rows"] = [r for r in data["rows"] if r["pid"] in mine]
        data["container"] = {"inside": inside_container, "markers": [], "pid1": "systemd"}
        r = Readings()
        r.add(Reading("processes", data, source="NVML process lists + psutil"))
        r.add(Reading("meminfo", meminfo, source="/proc/meminfo (recorded)"))
        return r
    return observe


def decide_now(observe, force=False, size=4 * GIB):
    from sparktui.flows.bandwidth import decide

    return decide(observe(), size, force)


def test_real_gate_allows_an_idle_machine(kids, fake_gpu):
    kids.run("train_notes.txt")  # a sleeping process that is neither a server nor a job nor on the GPU
    d = decide_now(observe_mine(kids))
    assert d.allowed and d.buffer_bytes == 4 * GIB and not d.forced, d.reasons


@pytest.mark.parametrize("prog,args,needle", [
    ("vllm", ("serve", "m"), "server running: pid {pid}"),
    ("torchrun", ("--nproc-per-node", "1", "sft.py"), "training running: pid {pid}"),
])
def test_real_server_or_training_job_refuses_unless_forced(kids, fake_gpu, prog, args, needle):
    p = kids.run(prog, *args)
    d = decide_now(observe_mine(kids))
    assert not d.allowed and any(needle.format(pid=p.pid) in r for r in d.reasons), d.reasons
    assert "--force" in d.reasons[-1]
    f = decide_now(observe_mine(kids), force=True)
    assert f.allowed and f.forced and any(needle.format(pid=p.pid) in r and "overridden by --force" in r for r in f.reasons)


def test_real_process_holding_gpu_memory_refuses(kids, fake_gpu):
    p = kids.run("blender", "--background")
    fake_gpu.set_processes([(p.pid, 2 * GIB)])
    d = decide_now(observe_mine(kids))
    assert not d.allowed and any(f"holds GPU memory: pid {p.pid}" in r and "(2.0 GiB)" in r for r in d.reasons), d.reasons


def test_recorded_short_meminfo_refuses_even_forced_and_scales_down_when_tight(kids, fake_gpu):
    from sparktui.probes.host import parse_meminfo

    short = parse_meminfo(SHORT_MEMINFO_TEXT)
    for force in (False, True):
        d = decide_now(observe_mine(kids, meminfo=short), force=force)
        assert not d.allowed and "not overridable" in d.reasons[0]
    tight = {**RECORDED_MEMINFO, "MemAvailable": 7 * GIB}
    d = decide_now(observe_mine(kids, meminfo=tight))
    assert d.allowed and d.buffer_bytes == 2 * GIB + (256 << 20) and "scaled down" in d.reasons[0]


def test_real_gate_inside_a_container_cannot_confirm_idle(kids, fake_gpu):
    d = decide_now(observe_mine(kids, inside_container=True))
    assert not d.allowed and "inside a container: host processes are not visible" in d.reasons[0]


# --- the gates are checked again after the confirmation --------------------------------------------


def test_server_started_while_the_prompt_waits_stops_the_probe(kids, fake_gpu):
    from sparktui.cli.bandwidth import run

    started = []

    def confirm_slowly(plan: str) -> bool:
        started.append(kids.run("vllm", "serve", "m"))  # someone starts a server meanwhile
        return True

    cfg = Config().with_overrides(target={"python": "/nonexistent/python"})  # reaching measure() would say "cannot start"
    v, res = run(cfg, 4.0, yes=False, force=False, json_out=True, confirm=confirm_slowly, observe=observe_mine(kids))
    assert res["status"] == "refused", res
    assert res["reason"].startswith("changed while waiting for confirmation") and f"server running: pid {started[0].pid}" in res["reason"]
    assert v.status is Status.SKIP


def test_force_covers_only_what_the_confirmed_plan_listed(kids, fake_gpu):
    from sparktui.cli.bandwidth import run

    train = kids.run("torchrun", "--nproc-per-node", "1", "sft.py")
    started = []

    def confirm_slowly(plan: str) -> bool:
        started.append(kids.run("vllm", "serve", "m"))
        return True

    cfg = Config().with_overrides(target={"python": "/nonexistent/python"})
    _, res = run(cfg, 4.0, yes=False, force=True, json_out=True, confirm=confirm_slowly, observe=observe_mine(kids))
    assert res["status"] == "refused" and f"pid {started[0].pid}" in res["reason"] and f"pid {train.pid}" not in res["reason"], res


def test_nothing_changed_during_the_prompt_measures(tmp_path, kids, fake_gpu):
    from sparktui.cli.bandwidth import run

    py = _fake_python(tmp_path, FAKE_CUDA_TORCH)
    cfg = Config().with_overrides(target={"python": py})
    v, res = run(cfg, 2.0, yes=False, force=False, json_out=True, confirm=lambda plan: True, observe=observe_mine(kids))
    assert res["status"] == "ok" and v.status is Status.OK, res


# --- Ctrl-C on `sparktui bandwidth` stops the probe ------------------------------------------------


def test_ctrl_c_on_the_cli_kills_the_probe_and_its_grandchild(tmp_path):
    """The terminal sends SIGINT to sparktui's process group; the probe runs in its own session,
    so it only stops because sparktui kills it on the way out (exit 130)."""
    import signal
    import subprocess

    from tests.test_target_probe import gone, kill_leftovers, wait_for_pids

    pidfile = tmp_path / "pids"
    py = make_standin(tmp_path, "hang_grandchild", extra_env={"STANDIN_PIDFILE": str(pidfile)})
    p = subprocess.Popen([sys.executable, "-m", "sparktui", "bandwidth", "--python", py, "--yes", "--force", "--size", "1"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        try:
            child, grandchild = wait_for_pids(pidfile, timeout=30)
        except AssertionError:
            p.kill()
            raise AssertionError(f"the probe never started: {p.communicate()[1][-2000:]}") from None
        os.killpg(p.pid, signal.SIGINT)  # Ctrl-C at the terminal: sparktui's foreground group
        out, err = p.communicate(timeout=30)
        assert p.returncode == 130, err
        assert gone(child), f"bandwidth probe pid {child} survived Ctrl-C"
        assert gone(grandchild), f"its grandchild pid {grandchild} survived Ctrl-C"
    finally:
        if p.poll() is None:
            p.kill()
        kill_leftovers(pidfile)


# G5's gate (intrusive means opt-in): a process view that failed, or a GPU process whose memory
# NVML reports N/A, can never read as an idle machine.


HOST = {"inside": False, "markers": [], "pid1": "systemd"}


def readings(processes: dict) -> Readings:
    r = Readings()
    r.add(Reading("processes", processes, error=processes.get("scan_error"), source="test"))
    r.add(Reading("meminfo", {"MemTotal": 121 * GIB, "MemAvailable": 100 * GIB}, source="test"))
    return r


def test_a_failed_scan_is_a_blind_view_not_an_empty_machine():
    r = readings({"scan_error": "process scan failed: PermissionError", "nvml": {"ok": True, "count": 0},
                  "container": HOST})
    rows, blind = competitors(r)
    assert rows == [] and blind and "process scan failed" in blind
    d = decide(r, 4 * GIB, force=False)
    assert not d.allowed and "cannot confirm the machine is idle" in d.reasons[0]
    assert any("blind process view" in b for b in blockers(r))


def test_a_reading_without_rows_is_blind_too():
    rows, blind = competitors(readings({"nvml": {"ok": True, "count": 1}, "container": HOST}))
    assert rows == [] and blind and "no process rows" in blind


def test_an_nvml_process_with_na_memory_blocks():
    row = {"pid": 4242, "name": "python3", "kind": "gpu-process", "gpu_mem_bytes": None, "on_gpu": True}
    r = readings({"rows": [row], "nvml": {"ok": True, "count": 1}, "container": HOST})
    d = decide(r, 4 * GIB, force=False)
    assert not d.allowed and any("pid 4242" in x and "amount N/A" in x for x in d.reasons)
    assert blockers(r) == ["pid 4242 python3 (gpu-process)"]


def test_a_process_not_on_the_gpu_with_no_memory_figure_does_not_block():
    row = {"pid": 77, "name": "bash", "kind": "gpu-process", "gpu_memory_bytes": None, "on_gpu": False}
    assert gate(4 * GIB, 100 * GIB, [row], None, force=False).allowed
