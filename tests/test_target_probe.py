"""The target-interpreter probe, run for real against stand-in interpreters and a real torch.

A crash in the training environment is evidence, not a failure of sparktui: each way of breaking
must come back as data, and G1 must name what happened.
"""

from __future__ import annotations

import sys
import time

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.gotchas import g01_cuda_abi, g07_nvfp4_arch
from sparktui.probes import target
from tests.conftest import readings_of
from tests.standins.make import FLASH_ATTN_SEGV, make_script, make_standin


def probe(python: str, timeout: float = 20.0, cuda_smoke: bool = True) -> Reading:
    cfg = Config().with_overrides(target={"python": python, "timeout_s": timeout, "cuda_smoke": cuda_smoke})
    return target.read(cfg)


def g1(reading: Reading, **more):
    return g01_cuda_abi.judge(readings_of(target=reading, **more), Config())


def test_undefined_symbol_import_error_is_a_g1_failure_naming_the_symbol(tmp_path):
    r = probe(make_standin(tmp_path, "undefined_symbol"))
    st = r.data["stages"]["import torch"]
    assert st["status"] == "error" and st["error_type"] == "ImportError"
    assert r.data["packages"] is not None  # the env stage still reported
    v = g1(r)
    assert v.status is Status.FAIL
    assert "undefined symbol cudaGetDriverEntryPointByVersion" in v.summary


def test_sigsegv_on_import_is_recorded_with_the_stage_and_the_rest_still_reported(tmp_path):
    r = probe(make_standin(tmp_path, "segv_import"))
    st = r.data["stages"]["import torch"]
    assert st["status"] == "crashed" and st["signal"] == "SIGSEGV"
    assert r.data["crashes"][0]["stage"] == "import torch"
    # rerun without the crashing stage still learned about flash_attn
    assert r.data["stages"]["import flash_attn"]["status"] in ("error", "done")
    v = g1(r)
    assert v.status is Status.FAIL
    assert "SIGSEGV" in v.summary and "import torch" in v.summary


def test_hang_past_timeout_is_killed_and_reported_unknown_with_the_stage(tmp_path):
    t0 = time.monotonic()
    r = probe(make_standin(tmp_path, "hang_import"), timeout=2.0)
    assert time.monotonic() - t0 < 10
    st = r.data["stages"]["import torch"]
    assert st["status"] == "hung"
    v = g1(r)
    assert v.status is Status.UNKNOWN
    assert "import torch did not finish" in v.summary and "2.0 s" in v.summary


def test_segfault_on_first_cuda_call_on_a_gb10_is_a_failure(tmp_path):
    r = probe(make_standin(tmp_path, "segv_first_cuda"))
    assert r.data["torch"]["cuda"] == "13.0"
    assert r.data["stages"]["first .cuda()"]["status"] == "crashed"
    v = g1(r)
    assert v.status is Status.FAIL
    assert "first .cuda() crashed" in v.summary and "SIGSEGV" in v.summary


def test_cuda_smoke_can_be_turned_off(tmp_path):
    r = probe(make_standin(tmp_path, "segv_first_cuda"), cuda_smoke=False)
    assert r.data["stages"]["first .cuda()"]["status"] == "skipped"
    assert g1(r).status is Status.OK  # cu130 on a GB10, nothing crashed


def test_flash_attn_segfault_does_not_hide_the_cuda_smoke(tmp_path):
    r = probe(make_standin(tmp_path, "ok_gb10", flash_attn=FLASH_ATTN_SEGV))
    assert r.data["stages"]["import flash_attn"]["status"] == "crashed"
    assert r.data["stages"]["first .cuda()"]["status"] == "done"


def test_gb10_fake_build_without_sm121a_is_a_g7_warning(tmp_path):
    r = probe(make_standin(tmp_path, "ok_gb10"))
    v = g07_nvfp4_arch.judge(readings_of(target=r, nvml=None), Config())
    assert v.status is Status.WARN
    assert "sm_120" in v.summary and "sm_121a" in v.summary


def test_interpreter_that_prints_garbage(tmp_path):
    py = make_script(tmp_path, "python-garbage", "echo 'this is not python'; echo 'Traceback?' >&2; exit 3\n")
    r = probe(py)
    assert r.data is not None
    crash = r.data["crashes"][0]
    assert crash["kind"] == "no-output" and crash["returncode"] == 3
    v = g1(r)
    assert v.status is Status.UNKNOWN


def test_missing_interpreter_is_a_clear_error(tmp_path):
    r = probe(str(tmp_path / "no-such-python"))
    assert r.data is None
    assert "cannot start" in r.error and "no-such-python" in r.error
    v = g1(r)
    assert v.status is Status.UNKNOWN and "cannot start" in v.summary


def test_interpreter_choice_prefers_flag_then_venv_then_conda(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    conda = tmp_path / "conda"
    (conda / "bin").mkdir(parents=True)
    (conda / "bin" / "python").write_text("")
    cfg = Config()
    assert target.choose_interpreter(cfg, {"VIRTUAL_ENV": str(venv), "CONDA_PREFIX": str(conda)})[0] == str(venv / "bin" / "python")
    assert target.choose_interpreter(cfg, {"CONDA_PREFIX": str(conda)})[0] == str(conda / "bin" / "python")
    assert target.choose_interpreter(cfg, {})[0] == sys.executable
    flagged = cfg.with_overrides(target={"python": "/opt/train/bin/python"})
    assert target.choose_interpreter(flagged, {"VIRTUAL_ENV": str(venv)}) == ("/opt/train/bin/python", "configured (--python or [target] python)")


@pytest.mark.slow
def test_real_torch_cpu_build(torch_venv_python):
    """torch 2.13.0's CPU build, imported for real in its own venv."""
    r = probe(torch_venv_python, timeout=120)
    d = r.data
    assert d["stages"]["import torch"]["status"] == "done"
    assert d["torch"]["version"].startswith("2.13.0")
    assert d["torch"]["cuda"] is None
    assert d["torch_cuda"]["available"] is False
    assert d["packages"]["torch"].startswith("2.13.0")
    assert d["stages"]["import flash_attn"]["status"] == "error"
    assert d["cuda_smoke"] == {"ran": False, "reason": "torch.cuda.is_available() is False"}
    # no NVML reading given, and a CPU build sees no GPU: G1 cannot judge the ABI against a driver, and says so
    v = g1(r)
    assert v.status is Status.UNKNOWN and "no NVIDIA GPU or driver seen" in v.summary
    # on a GB10 (as NVML would report it) the same CPU-only build is a failure
    nvml = {"driver_version": {"value": "580.95.05"}, "cuda_driver_version": {"value": "13.0"},
            "devices": [{"index": 0, "name": {"value": "NVIDIA GB10"}, "compute_capability": {"value": [12, 1]}}]}
    v = g1(r, nvml=nvml)
    assert v.status is Status.FAIL and "CPU-only build on a GB10" in v.summary


# --- cancel and Ctrl-C: the child runs in its own session, so only sparktui can stop it ----------


def wait_for_pids(path, timeout: float = 15.0) -> tuple[int, int]:
    """(child, grandchild) as the hang_grandchild stand-in wrote them once both were running."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            child, grandchild = (int(x) for x in path.read_text().split())
            return child, grandchild
        time.sleep(0.02)
    raise AssertionError(f"the stand-in never wrote {path}")


def gone(pid: int, timeout: float = 5.0) -> bool:
    """Dead: no such process, or a zombie no one has reaped yet (a container's pid 1 may not)."""
    import psutil

    deadline = time.monotonic() + timeout
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def kill_leftovers(pidfile) -> None:
    """Cleanup when a test fails: never leave a 600 s sleeper behind."""
    import os
    import signal

    if pidfile.exists():
        for pid in (int(x) for x in pidfile.read_text().split()):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


HANG_ARGS = ["--mode", "torch", "--skip", "", "--packages-file", ""]


def test_ctrl_c_during_the_wait_kills_the_child_and_its_grandchild(tmp_path):
    """Ctrl-C reaches only sparktui's process group, never the probe's own session: run_staged
    must kill the probe's group itself on the KeyboardInterrupt, then let it propagate."""
    import _thread
    import threading

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("KeyboardInterrupt is delivered to the main thread only")
    pidfile = tmp_path / "pids"
    py = make_standin(tmp_path, "hang_grandchild", extra_env={"STANDIN_PIDFILE": str(pidfile)})
    pids: list[int] = []

    def press_ctrl_c() -> None:
        pids.extend(wait_for_pids(pidfile))
        _thread.interrupt_main()  # what the terminal's SIGINT does to the waiting main thread

    presser = threading.Thread(target=press_ctrl_c, daemon=True)
    presser.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            target.run_staged(py, target.SCRIPT, HANG_ARGS, timeout_s=60)
        presser.join(5)
        child, grandchild = pids
        assert gone(child), f"probe pid {child} still running after Ctrl-C"
        assert gone(grandchild), f"grandchild pid {grandchild} still running after Ctrl-C"
    finally:
        kill_leftovers(pidfile)


def test_cancel_kills_the_child_and_its_grandchild_and_says_cancelled(tmp_path):
    import threading

    pidfile = tmp_path / "pids"
    py = make_standin(tmp_path, "hang_grandchild", extra_env={"STANDIN_PIDFILE": str(pidfile)})
    cancel = threading.Event()
    threading.Thread(target=lambda: (wait_for_pids(pidfile), cancel.set()), daemon=True).start()
    try:
        t0 = time.monotonic()
        run = target.run_staged(py, target.SCRIPT, HANG_ARGS, timeout_s=60, cancel=cancel)
        assert time.monotonic() - t0 < 20
        assert run.cancelled and not run.timed_out and run.last_begun() == "import torch"
        child, grandchild = wait_for_pids(pidfile)
        assert gone(child) and gone(grandchild)
        assert target._describe_crash(target._crash_of(run, "torch", 60)) == "cancelled by the user during 'import torch'"
    finally:
        kill_leftovers(pidfile)


def test_an_interpreter_that_hangs_before_any_stage_is_named_as_such_by_every_check(tmp_path):
    """`--python` pointing at something that never answers (a wrapper stuck on a lock, a network
    home): every torch-side check says the interpreter did not answer within the timeout."""
    from sparktui.runner import run_checks
    from tests.standins.make import make_script

    py = make_script(tmp_path, "stuck-python", "sleep 100\n")
    cfg = Config().with_overrides(target={"python": py, "timeout_s": 2.0})
    t0 = time.monotonic()
    verdicts, _ = run_checks(["G1", "G2", "G9"], cfg)
    assert time.monotonic() - t0 < 15
    for v in verdicts:
        assert v.status is Status.UNKNOWN, (v.id, v.summary)
        assert "never started its stages: no answer after 2.0 s during 'start-up'" in v.summary, (v.id, v.summary)


# --- installed packages: a failed read is a distinct state, never "not installed" ------------------


def _dist_info(site, name: str, version: str | None) -> None:
    d = site / f"{name}-{version or '0'}.dist-info"
    d.mkdir()
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\n" + (f"Version: {version}\n" if version else ""))


def test_a_package_whose_metadata_cannot_be_read_is_unread_not_absent(tmp_path):
    """A torn install (dist-info without a Version) beside a good flash-attn: the probe reports the
    torn one as unread; G2 then cannot say "no Unsloth"."""
    from sparktui.gotchas import g02_flash_attn

    py = make_standin(tmp_path, "ok_gb10", flash_attn="__version__ = '2.7.4.post1'\n")
    site = tmp_path / "site-ok_gb10"
    _dist_info(site, "flash_attn", "2.7.4.post1")
    _dist_info(site, "unsloth", None)
    d = probe(py).data
    assert d["stages"]["packages"]["status"] == "done"
    assert d["packages"]["flash-attn"] == "2.7.4.post1" and d["packages"]["vllm"] is None
    assert "unsloth" not in d["packages"] and d["packages_unread"]["unsloth"]
    v = g02_flash_attn.judge(readings_of(target=d), Config())
    assert v.status is Status.UNKNOWN, v.summary
    assert "whether Unsloth is installed is unknown (its metadata could not be read: " in v.summary


SEGV_IN_METADATA = ("import importlib.metadata as m, os\n"
                    "def _die(name):\n    os.kill(os.getpid(), 11)\n"
                    "m.version = _die\n")


def test_a_packages_stage_that_crashes_is_packages_null_with_the_reason(tmp_path):
    from sparktui.gotchas import g02_flash_attn, g09_container_drift
    from sparktui.probes import pins

    py = make_standin(tmp_path, "ok_gb10", flash_attn="__version__ = '2.7.4.post1'\n")
    (tmp_path / "site-ok_gb10" / "sitecustomize.py").write_text(SEGV_IN_METADATA)
    r = probe(py)
    d = r.data
    assert d["stages"]["packages"]["status"] == "crashed" and d["stages"]["cudart"]["status"] == "done"
    assert d["packages"] is None and "packages_unread" not in d
    assert d["packages_error"] == "packages stage crashed: process died by SIGSEGV during 'packages'"
    v2 = g02_flash_attn.judge(readings_of(target=r), Config())
    assert v2.status is Status.UNKNOWN and "packages not read: packages stage crashed" in v2.summary
    v9 = g09_container_drift.judge(readings_of(target=r, pins=pins.read(Config()), container=None, nvml=None), Config())
    assert v9.status is Status.UNKNOWN and "packages stage crashed: process died by SIGSEGV" in v9.summary


def test_stage_packages_tells_not_installed_from_unreadable(tmp_path, monkeypatch):
    from sparktui.probes import target_script

    got = target_script.stage_packages(["pytest", "no-such-distribution-sparktui"])
    assert isinstance(got["versions"]["pytest"], str) and got["versions"]["no-such-distribution-sparktui"] is None
    assert got["unread"] == {}


@pytest.mark.parametrize("data,stage,expected", [
    ({"versions": {"torch": "2.9.0"}, "unread": {"x": "KeyError"}}, {"status": "done"},
     {"packages": {"torch": "2.9.0"}, "packages_unread": {"x": "KeyError"}}),
    ({"versions": {"torch": None}}, {"status": "done"}, {"packages": {"torch": None}, "packages_unread": {}}),
    (None, {"status": "error", "error_type": "RuntimeError", "error": "importlib.metadata unavailable (Python < 3.8)"},
     {"packages": None, "packages_error": "packages stage error: RuntimeError: importlib.metadata unavailable (Python < 3.8)"}),
    (None, {"status": "hung", "error": "no answer after 5.0 s during 'packages'; killed"},
     {"packages": None, "packages_error": "packages stage hung: no answer after 5.0 s during 'packages'; killed"}),
    (None, {"status": "skipped"}, {"packages": None, "packages_error": "packages stage skipped"}),
    (None, None, {"packages": None, "packages_error": "packages stage not reported"}),
    ({"torch": "2.9.0"}, {"status": "done"}, {"packages": None, "packages_error": "the packages stage reported no list of versions"}),
])
def test_packages_fields_of_the_reading(data, stage, expected):
    assert target._packages_of(data, stage) == expected
