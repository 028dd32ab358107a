"""One declared shape per reading (core/shapes.py), held from both sides.

mypy checks the probes that build each shape and the judges that read it against the declaration,
and the rest of the package with them (``test_mypy_*``: this is how CI runs mypy; deselect locally
with ``-m "not typecheck"``). The rest
run the real probes, on this machine, on fake NVML modelled on a GB10 and on stand-in interpreters,
and check that what they build at run time stays inside the declaration: a key a probe adds
without declaring it, or a value of another type, fails here. A failed probe is ``data None`` with
an error, never empty data.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import typing
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sparktui.core import shapes
from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.validate import shape_problems as problems
from sparktui.core.recording import read_recording, readings_from_recording
from sparktui.probes import bandwidth, cudalibs, container, host, nvml, pins, processes, sampler, state, target, tpscan
from sparktui.probes import playbooks as playbooks_probe
from sparktui.testing import fake_nvml
from sparktui.testing.github_server import make_issue, serve_issues
from tests.standins.make import make_standin

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "src" / "sparktui" / "data" / "gb10-demo.jsonl"


# --------------------------------------------------------------------------- mypy


# Files whose mypy errors are tolerated FOR NOW, each with why: files being rewritten while mypy
# came to cover the whole package. Empty it: a file listed here without an error fails the test too.
TEMPORARILY_UNTYPED: dict[str, str] = {}


def _mypy() -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_mypy_checks_the_whole_package():
    """[tool.mypy] names all of src/sparktui: a new module is checked without being listed."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["files"] == ["src/sparktui"]
    assert not config.get("exclude"), "exclude nothing: a file that cannot be typed yet goes in TEMPORARILY_UNTYPED"


@pytest.mark.typecheck
def test_mypy_finds_no_errors_in_the_package():
    """[tool.mypy] in pyproject.toml names the files (the whole package); mypy's exit status and
    error lines decide."""
    proc = _mypy()
    if "No module named mypy" in proc.stderr:
        pytest.fail("mypy is not installed: python3 -m pip install -e '.[test]'")
    found = [line for line in proc.stdout.splitlines() if ": error:" in line]
    if proc.returncode != 0 and not found:
        pytest.fail(f"mypy did not run (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    errors = [line for line in found if line.split(":", 1)[0] not in TEMPORARILY_UNTYPED]
    per_file = Counter(line.split(":", 1)[0] for line in errors)
    summary = "\n".join(f"{n:4d}  {f}" for f, n in per_file.most_common())
    assert not errors, f"mypy: {len(errors)} errors\n{summary}\n\n" + "\n".join(errors)
    stale = sorted(set(TEMPORARILY_UNTYPED) - {line.split(":", 1)[0] for line in found})
    assert not stale, f"no mypy error left in {stale}: take them out of TEMPORARILY_UNTYPED in tests/test_types.py"


# --------------------------------------------------------------------------- a run-time check of a shape


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and typing.is_typeddict(tp)


def assert_shape(reading: Reading[Any], name: str | None = None) -> None:
    """A reading that read something holds its probe's declared shape."""
    name = name or reading.probe
    assert reading.data is not None, f"{name} failed: {reading.error}"
    found = problems(reading.data, shapes.SHAPES[name], name)
    assert not found, "\n".join(found)


def assert_failed(reading: Reading[Any]) -> None:
    """A probe that could not read: no data at all (never an empty list or dict), and why."""
    assert reading.data is None
    assert reading.error


def test_the_checker_catches_an_undeclared_key_a_missing_required_key_and_a_wrong_type():
    row = {"index": 0, "temp_c": 72, "power_w": 80.1, "errors": {}}
    assert problems(row, shapes.GpuRow) == []
    assert problems({**row, "temp": 72}, shapes.GpuRow) == ["data.temp: not declared in GpuRow"]
    assert problems({"temp_c": 72}, shapes.GpuRow) == ["data: GpuRow requires 'index'"]
    assert problems({**row, "temp_c": "72"}, shapes.GpuRow) == ["data.temp_c: expected int, got str '72'"]
    assert problems({**row, "util_gpu": True}, shapes.GpuRow)  # a bool is not a count
    assert problems({**row, "power_w": 80}, shapes.GpuRow) == []  # JSON writes 80.0 as 80


def test_every_probe_has_a_declared_shape():
    from sparktui import probes

    assert set(probes.names()) <= set(shapes.SHAPES)
    assert all(_is_typeddict(t) for t in shapes.SHAPES.values())


# --------------------------------------------------------------------------- host and meminfo

GB10_MEMINFO = """MemTotal:       127601568 kB
MemFree:        63015232 kB
MemAvailable:   112113728 kB
Buffers:          153600 kB
Cached:         50331648 kB
SwapCached:            0 kB
Active:         30000000 kB
AnonPages:      12582912 kB
Mapped:          2097152 kB
Shmem:           4194304 kB
KReclaimable:    1048576 kB
SReclaimable:    1048576 kB
Unevictable:       32768 kB
Mlocked:           32768 kB
SwapTotal:      16777212 kB
SwapFree:       16777212 kB
Dirty:              2048 kB
CmaTotal:              0 kB
CmaFree:               0 kB
HugePages_Total:       0
HugePages_Free:        0
HugePages_Rsvd:        0
HugePages_Surp:        0
Hugepagesize:       2048 kB
Hugetlb:               0 kB
"""


def test_host_and_meminfo_of_this_machine_hold_their_shapes(cfg):
    assert_shape(host.read(cfg))
    assert_shape(host.read_meminfo(cfg))


def test_meminfo_of_a_gb10_holds_its_shape_and_a_missing_file_is_a_failure(cfg, tmp_path):
    p = tmp_path / "meminfo"
    p.write_text(GB10_MEMINFO)
    r = host.read_meminfo(cfg, str(p))
    assert_shape(r)
    assert r.data is not None and r.data["MemTotal"] == 127601568 * 1024
    assert_failed(host.read_meminfo(cfg, str(tmp_path / "absent")))


# --------------------------------------------------------------------------- NVML and telemetry


@pytest.mark.parametrize("profile", [fake_nvml.gb10, fake_nvml.h200])
def test_nvml_static_facts_hold_their_shape(cfg, profile):
    with fake_nvml.installed(profile()):
        assert_shape(nvml.read_static(cfg))


def test_nvml_without_a_library_is_a_failure(cfg):
    with fake_nvml.installed(fake_nvml.gb10(library_missing=True)):
        assert_failed(nvml.read_static(cfg))


@pytest.mark.parametrize("profile", [fake_nvml.gb10, fake_nvml.h200])
def test_a_telemetry_window_holds_its_shape(cfg, tmp_path, profile):
    p = tmp_path / "meminfo"
    p.write_text(GB10_MEMINFO)
    with fake_nvml.installed(fake_nvml.gb10_loaded(profile()) if profile is fake_nvml.gb10 else profile()):
        data = sampler.gather(cfg, 0.2, 0.1, meminfo_path=str(p))
    assert len(data["samples"]) >= 2
    assert_shape(Reading("telemetry", data))


def test_a_lost_gpu_still_gives_samples_in_the_declared_shape(cfg, tmp_path):
    p = tmp_path / "meminfo"
    p.write_text(GB10_MEMINFO)
    with fake_nvml.installed(fake_nvml.gb10().lose_gpu()):
        data = sampler.gather(cfg, 0.1, 0.1, meminfo_path=str(p))
    assert_shape(Reading("telemetry", data))


# --------------------------------------------------------------------------- processes


def test_a_process_scan_with_a_server_and_a_trainer_holds_its_shape(kids):
    kids.run("vllm", "serve", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "0.5")
    kids.run("torchrun", "--nproc-per-node", "1", "train.py")
    with fake_nvml.installed(fake_nvml.gb10()):
        s = nvml.NvmlSession()
        try:
            data = processes.scan(s, exclude_own=False)  # the test's children stand in for the workload
        finally:
            s.close()
    assert {r.get("server") for r in data["rows"]} >= {"vllm"}
    assert any(r.get("cap") for r in data["rows"])
    assert_shape(Reading("processes", data))


# --------------------------------------------------------------------------- target interpreter


def test_a_gb10_target_interpreter_holds_its_shape(tmp_path):
    py = make_standin(tmp_path, "ok_gb10")
    r = target.read(Config().with_overrides(target={"python": py, "timeout_s": 20.0}))
    assert_shape(r)
    assert r.data is not None and (r.data.get("torch_cuda") or {}).get("devices")


def test_a_target_that_crashes_on_import_holds_its_shape(tmp_path):
    r = target.read(Config().with_overrides(target={"python": make_standin(tmp_path, "segv_import"), "timeout_s": 20.0}))
    assert_shape(r)
    assert r.data is not None and r.data.get("torch") is None and r.data.get("crashes")


def test_a_missing_target_interpreter_is_a_failure(tmp_path):
    assert_failed(target.read(Config().with_overrides(target={"python": str(tmp_path / "no-python")})))


def test_safe_read_hands_cancel_to_the_probes_that_take_it_and_only_to_them(tmp_path):
    from sparktui import probes

    stop = threading.Event()
    stop.set()
    py = make_standin(tmp_path, "hang_import")
    r = probes.safe_read("target", Config().with_overrides(target={"python": py, "timeout_s": 20.0}), stop)
    assert_failed(r)
    assert r.error == "cancelled by the user"
    assert_shape(probes.safe_read("container", Config(), stop))  # takes no cancel: read as usual


# --------------------------------------------------------------------------- cudalibs, container, pins

LDCONFIG = """	libcudart.so.13 (libc6,AArch64) => /usr/local/cuda-13.0/targets/sbsa-linux/lib/libcudart.so.13
	libcudart.so.12 (libc6,AArch64) => /usr/lib/aarch64-linux-gnu/libcudart.so.12
	libcudart.so (libc6,AArch64) => /usr/local/cuda-13.0/targets/sbsa-linux/lib/libcudart.so
"""


def test_ldconfig_lines_hold_their_shape_and_no_ldconfig_is_a_failure(cfg, monkeypatch):
    assert_shape(Reading("cudalibs", {"libcudart": cudalibs.parse_ldconfig(LDCONFIG)}))
    monkeypatch.setattr(cudalibs, "find_ldconfig", lambda: None)
    assert_failed(cudalibs.read(cfg))


def test_a_container_inspection_holds_its_shape(tmp_path):
    (tmp_path / ".dockerenv").write_text("")
    (tmp_path / "proc" / "1").mkdir(parents=True)
    (tmp_path / "proc" / "1" / "cgroup").write_text("0::/\n")
    env = {"NVIDIA_PYTORCH_VERSION": "25.11", "NVIDIA_BUILD_ID": "221111111", "PYTORCH_VERSION": "2.10.0a0",
           "CUDA_VERSION": "13.0.2.006"}
    data = container.inspect(tmp_path, environ=env)
    assert data["in_container"] is True and data["ngc"] and data["ngc"]["release"] == "25.11"
    assert_shape(Reading("container", data))
    assert_shape(Reading("container", container.inspect(tmp_path / "empty", environ={})))


def test_shipped_pins_hold_their_shape_and_a_bad_pins_file_is_a_failure(tmp_path):
    assert_shape(pins.read(Config()))
    bad = tmp_path / "pins.txt"
    bad.write_text("torch==2.9.0\ntorch>=>2\n")
    assert_failed(pins.read(Config().with_overrides(pins={"file": str(bad)})))


# --------------------------------------------------------------------------- tpscan


def test_a_tp_scan_with_findings_holds_its_shape(tmp_path):
    (tmp_path / "serve.sh").write_text("#!/bin/bash\nTP=${TP:-2}\nvllm serve Qwen/Qwen3-8B --tensor-parallel-size $TP\n")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "tp.yaml").write_text("trainer:\n  num_nodes: 2\nmodel:\n  tensor_model_parallel_size: 2\n")
    (tmp_path / "train.sh").write_text("#!/bin/bash\ntorchrun --nnodes 2 train.py --config cfg/tp.yaml\n")
    (tmp_path / "one.json").write_text('{"tp_size": 1}')
    data = tpscan.scan([str(tmp_path), str(tmp_path / "absent")], 1 << 20)
    assert data["matches_total"] >= 2 and data["at_one"] == 1
    assert_shape(Reading("tpscan", data))


# --------------------------------------------------------------------------- bandwidth (G5)


def test_bandwidth_results_hold_their_shape(tmp_path):
    r = bandwidth.measure(str(tmp_path / "no-python"), 1 << 20, timeout_s=5)
    assert r["status"] == "unknown"
    assert_shape(bandwidth.as_reading(r))
    ok: shapes.BandwidthResult = {
        "device": "NVIDIA GB10", "capability": [12, 1], "torch": "2.9.0+cu130", "buffer_bytes": 4 << 30,
        "iterations": 40, "repeats": 5, "copy_gbs": 231.0, "copy_gbs_all": [229.5, 230.2, 231.0, 231.8, 233.6],
        "read_gbs": 233.0, "read_gbs_all": [232.0, 232.5, 233.0, 233.4, 234.0], "spread_pct": 1.8,
        "convention": "copy: bytes read + written per second; read: bytes read per second (GB = 1e9 bytes)",
        "python": "/venv/bin/python", "measured_at": 1767000000.0, "seconds": 12.5, "source": "/venv/bin/python (subprocess)",
        "status": "ok"}
    bandwidth.save_last(ok)
    assert_shape(state.read_bandwidth_last(Config()))


def test_no_kept_bandwidth_result_is_a_failure():
    assert_failed(state.read_bandwidth_last(Config()))


# --------------------------------------------------------------------------- playbook issues (G8)


def test_playbook_issues_hold_their_shape_unconfigured_with_a_bad_url_and_fetched():
    assert_shape(playbooks_probe.read(Config()))
    bad = Config().with_overrides(playbooks={"slugs": ["vllm"], "api_url": "https://api.github.com?x=1"})
    assert_shape(playbooks_probe.read(bad, token=None))
    issues = [make_issue(109, "nvidia/vllm is wrong missing Ray", "https://github.com/NVIDIA/dgx-spark-playbooks/tree/main/nvidia/vllm"),
              make_issue(90, "llama-factory: re-validate on DGX Spark", "PR body", pr=True)]
    server, _ = serve_issues(issues, commit_dates={"vllm": "2026-01-10T00:00:00Z"})
    with server:
        cfg = Config().with_overrides(playbooks={"slugs": ["vllm"], "commands": ["vllm serve Qwen/Qwen3-8B"],
                                                 "api_url": server.url})
        r = playbooks_probe.read(cfg, token=None)
    assert r.data is not None and r.data.get("matches_total") == 1
    assert_shape(r)


# --------------------------------------------------------------------------- a recording, replayed


def test_the_shipped_recording_replays_into_the_declared_shapes():
    rec = read_recording(DEMO)
    readings: Readings = readings_from_recording(rec)
    for name in ("telemetry", "meminfo", "nvml", "processes"):
        assert name in readings, name
    for name, reading in readings.items():
        if reading.data is not None:
            assert_shape(reading, name)


def test_a_snapshot_round_trip_keeps_the_shapes(cfg, tmp_path):
    from sparktui.core.readings import read_snapshot, write_snapshot

    p = tmp_path / "meminfo"
    p.write_text(GB10_MEMINFO)
    r = Readings()
    r.add(host.read(cfg))
    r.add(host.read_meminfo(cfg, str(p)))
    with fake_nvml.installed(fake_nvml.gb10()):
        r.add(nvml.read_static(cfg))
    write_snapshot(tmp_path / "snap.json", r, {}, "test")
    back, _, _ = read_snapshot(tmp_path / "snap.json")
    for name, reading in back.items():
        assert_shape(reading, name)


def test_the_typed_accessors_give_the_same_data_as_the_mapping(cfg, tmp_path):
    p = tmp_path / "meminfo"
    p.write_text(GB10_MEMINFO)
    r = Readings()
    r.add(host.read_meminfo(cfg, str(p)))
    mem = r.data("meminfo")
    assert mem is not None and mem.get("Shmem") == 4194304 * 1024
    assert r.get_reading("meminfo") is r["meminfo"]
    assert r.data("target") is None and r.get_reading("target").error == "probe 'target' was not run"

