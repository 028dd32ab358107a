"""G5: the gates, the verdict, and the intrusive probe's subprocess handling with stand-ins."""

from __future__ import annotations

import json
import sys
import time

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g05_bandwidth as g5
from sparktui.gotchas.g05_bandwidth import GIB, gate, judge_result
from sparktui.probes import bandwidth
from tests.conftest import readings_of
from tests.standins.make import make_script, make_standin

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
    py = make_script(tmp_path, "python-notorch", f"PYTHONPATH='{tmp_path}/empty' exec '{sys.executable}' -I \"$@\"\n")
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
