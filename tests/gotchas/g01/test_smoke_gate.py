"""G1's smoke test (the first .cuda() in the training interpreter) is not run when MemAvailable is
under G3's floor (issue 26 item 3): decided from /proc/meminfo before the interpreter starts, and G1
says so (unknown, with the figure), rather than take a CUDA context's memory from a run near the edge."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.shapes import TargetData
from sparktui.core.validate import shape_problems
from sparktui.core.verdict import Status
from sparktui.gotchas import g01_cuda_abi as g01
from sparktui.probes import target
from tests.conftest import readings_of
from tests.gotchas.builders import g1_nvml
from tests.standins.make import make_standin

GB10 = g1_nvml("NVIDIA GB10", [12, 1])
CUDALIBS = {"libcudart": [{"soname": "libcudart.so.13", "major": "13", "flags": "libc6,AArch64",
                           "path": "/usr/local/cuda/lib64/libcudart.so.13"}]}


def meminfo_text(avail_kib: int) -> str:
    """/proc/meminfo of a GB10 (MemTotal 127611680 kB, as tests/test_sampler.py records it) with
    MemAvailable set."""
    return (f"MemTotal:       127611680 kB\nMemFree:         1048576 kB\nMemAvailable:   {avail_kib:>8} kB\n"
            "Buffers:          314572 kB\nCached:          2097152 kB\nSwapTotal:       4194304 kB\nSwapFree:        4194304 kB\n")


LOW = meminfo_text(3 * 1024 * 1024 + 314572)  # 3.3 GiB available: under the 8 GiB floor
HIGH = meminfo_text(89128960)  # 85.0 GiB available


@pytest.fixture
def meminfo(tmp_path, monkeypatch):
    path = tmp_path / "meminfo"

    def put(text: str) -> Path:
        path.write_text(text)
        monkeypatch.setattr(target, "MEMINFO", str(path))
        return path

    return put


def test_gate_under_the_floor_says_why_with_the_figure(meminfo):
    meminfo(LOW)
    g = target.smoke_gate(Config())
    assert g is not None and g["ran"] is False and g["gated"] is True
    assert g["mem_available_bytes"] == (3 * 1024 * 1024 + 314572) * 1024 and g["floor_gib"] == 8.0
    assert g["reason"].startswith("MemAvailable 3.3 GiB is under G3's floor of 8 GiB (memory.available_floor_gib)")


def test_no_gate_above_the_floor_when_unreadable_or_when_the_test_is_off(meminfo, tmp_path):
    meminfo(HIGH)
    assert target.smoke_gate(Config()) is None
    assert target.smoke_gate(Config(), path=str(tmp_path / "absent")) is None  # nothing read: nothing decided
    meminfo(LOW)
    assert target.smoke_gate(Config().with_overrides(target={"cuda_smoke": False})) is None
    assert target.smoke_gate(Config().with_overrides(memory={"available_floor_gib": 2.0})) is None


def _read(py: str) -> dict:
    r = target.read(Config().with_overrides(target={"python": py, "timeout_s": 60}))
    assert r.data is not None, r.error
    return r.data


def test_real_interpreter_whose_first_cuda_crashes_is_not_started_on_it_under_the_floor(tmp_path, meminfo):
    """A stand-in torch that dies by SIGSEGV on its first .cuda(): above the floor the crash is seen
    (the test ran); under it the stage is skipped by the interpreter itself (--skip, decided before
    it started), nothing crashes, and G1 is unknown with the figure."""
    py = make_standin(tmp_path, "segv_first_cuda")
    meminfo(HIGH)
    ran = _read(py)
    assert ran["stages"]["first .cuda()"]["status"] == "crashed"
    assert ran["stages"]["first .cuda()"]["signal"] == "SIGSEGV"

    meminfo(LOW)
    d = _read(py)
    assert d["stages"]["first .cuda()"] == {"status": "skipped"}
    assert d["crashes"] == [] and d["stages"]["import torch"]["status"] == "done"
    assert d["cuda_smoke"]["gated"] is True and d["cuda_smoke"]["floor_gib"] == 8.0
    assert shape_problems(d, TargetData, "target") == []  # strict: the gate's keys are declared
    v = g01.judge(readings_of(target=d, nvml=GB10, cudalibs=CUDALIBS), Config())
    assert v.status is Status.UNKNOWN, v.summary
    assert v.summary.startswith("first .cuda() not run: MemAvailable 3.3 GiB under the 8 GiB floor "
                                "(memory.available_floor_gib)")
    assert any("built for CUDA 13.0, as GB10 needs" in d for d in v.details)  # the build was still judged
    e = next(e for e in v.evidence if e.what == "first .cuda()")
    assert e.value.startswith("not run: MemAvailable 3.3 GiB")


def test_a_wrong_build_still_fails_under_the_floor():
    """The gate hides only what the smoke test would have shown: a CUDA 12 torch on a GB10 fails."""
    t = {"interpreter": "/venv/bin/python", "selected_by": "configured",
         "stages": {"import torch": {"status": "done"}, "first .cuda()": {"status": "skipped"}},
         "torch": {"version": "2.9.0+cu128", "cuda": "12.8"}, "packages": {"torch": "2.9.0+cu128"},
         "cuda_smoke": {"ran": False, "gated": True, "mem_available_bytes": 3 << 30, "floor_gib": 8.0, "reason": "x"}}
    v = g01.judge(readings_of(target=t, nvml=GB10, cudalibs=CUDALIBS), Config())
    assert v.status is Status.FAIL and v.summary.startswith("torch 2.9.0+cu128 is built for CUDA 12.8")
    assert any(d.startswith("unknown: first .cuda() not run: MemAvailable 3.0 GiB") for d in v.details)


def test_smoke_test_turned_off_is_not_the_gate():
    """`cuda_smoke = false` (or a recording without the gate) keeps G1 as it was: no unknown from it."""
    t = {"interpreter": "/venv/bin/python", "selected_by": "configured",
         "stages": {"import torch": {"status": "done"}, "first .cuda()": {"status": "skipped"}},
         "torch": {"version": "2.9.0+cu130", "cuda": "13.0"}, "packages": {"torch": "2.9.0+cu130"}}
    v = g01.judge(readings_of(target=t, nvml=GB10, cudalibs=CUDALIBS), Config())
    assert v.status is Status.OK, v.summary
