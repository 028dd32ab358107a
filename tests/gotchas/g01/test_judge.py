"""G1 judged on recorded-style readings: every status, on a GB10 and on another GPU."""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import REGISTRY
from sparktui.runner import judge
from tests.conftest import readings_of
from tests.gotchas.builders import BLIND, CUDA12, CUDA13

G1 = REGISTRY["G1"]


def nvml(name: str, cap: list[int], driver_cuda: str) -> dict:
    """NVML as a real reading has it (GB10: memory and power limit NOT_SUPPORTED, per docs/reference/FACTS.md)."""
    na = {"value": None, "error": "NOT_SUPPORTED (Not Supported)"}
    return {"driver_version": {"value": "580.95.05"}, "cuda_driver_version": {"value": driver_cuda},
            "devices": [{"index": 0, "name": {"value": name}, "compute_capability": {"value": cap},
                         "memory": na, "power_limit_w": na}]}


def target(version: str | None, cuda: str | None, torch_cuda: dict | None = None, env: dict | None = None,
           **stages) -> dict:
    st = {"import torch": {"status": "done"}} if version else \
        {"import torch": {"status": "error", "error_type": "ModuleNotFoundError", "error": "No module named 'torch'"}}
    st.update(stages)
    t = {"interpreter": "/home/spark/venvs/train/bin/python", "selected_by": "configured",
         "stages": st, "torch": {"version": version, "cuda": cuda} if version else {},
         "packages": {"torch": version}, "python": {"version": "3.12.3", "env": env or {}}}
    if torch_cuda is not None:
        t["torch_cuda"] = torch_cuda
    return t


def broken_import(error_type: str, error: str, wheel: str | None = "2.9.0+cu130") -> dict:
    t = target(None, None, **{"import torch": {"status": "error", "error_type": error_type, "error": error}})
    t["packages"] = {"torch": wheel}
    return t


GB10 = nvml("NVIDIA GB10", [12, 1], "13.0")
H200 = nvml("NVIDIA H200", [9, 0], "12.8")


def g1(**readings):
    return judge(G1, readings_of(**readings), Config())


def test_cuda13_torch_on_a_gb10_with_only_cudart13_registered_is_ok():
    v = g1(target=target("2.9.0+cu130", "13.0"), nvml=GB10, cudalibs={"libcudart": [CUDA13]})
    assert v.status is Status.OK and v.summary == "torch 2.9.0+cu130 is built for CUDA 13.0, as GB10 needs"
    ev = {e.what: e.value for e in v.evidence}
    assert ev["torch.version.cuda (authoritative)"] == "13.0"
    assert ev["ldconfig -p libcudart"] == [f"libcudart.so.13 => {CUDA13['path']}"]
    assert v.fix == ""


def test_an_ngc_build_without_a_wheel_tag_is_judged_by_torch_version_cuda():
    v = g1(target=target("2.10.0a0+b558c986e8.nv25.11", "13.0"), nvml=GB10, cudalibs={"libcudart": [CUDA13]})
    assert v.status is Status.OK
    assert "(no +cuNNN tag: normal for NGC builds)" in {e.what: e.value for e in v.evidence}["torch wheel version (reported, not decisive)"]


def test_a_leftover_cudart12_beside_13_warns():
    v = g1(target=target("2.9.0+cu130", "13.0"), nvml=GB10, cudalibs={"libcudart": [CUDA13, CUDA12]})
    assert v.status is Status.WARN and "libcudart.so.12 is registered beside libcudart.so.13" in v.summary
    assert "dpkg -S" in v.fix


@pytest.mark.parametrize("version, cuda, needle", [
    ("2.9.0+cu128", "12.8", "torch 2.9.0+cu128 is built for CUDA 12.8; GB10 needs CUDA 13.x"),
    ("2.9.0+cpu", None, "torch 2.9.0+cpu is a CPU-only build on a GB10"),
])
def test_cuda12_or_cpu_build_on_a_gb10_fails(version, cuda, needle):
    v = g1(target=target(version, cuda), nvml=GB10, cudalibs={"libcudart": [CUDA13]})
    assert v.status is Status.FAIL and v.summary.startswith(needle)
    assert "--index-url https://download.pytorch.org/whl/cu130" in v.fix


def test_other_gpus_are_judged_by_the_drivers_cuda():
    ok = g1(target=target("2.9.0+cu128", "12.8"), nvml=H200, cudalibs={"libcudart": []})
    assert ok.status is Status.OK and "driver supports CUDA 12.8 (not a GB10: judged by the driver)" in ok.summary
    newer = g1(target=target("2.9.0+cu130", "13.0"), nvml=H200, cudalibs={"libcudart": []})
    assert newer.status is Status.FAIL and "driver supports only CUDA 12.8" in newer.summary


def test_no_torch_or_no_gpu_is_unknown_never_ok():
    v = g1(target=target(None, None), nvml=GB10, cudalibs={"libcudart": [CUDA13]})
    assert v.status is Status.UNKNOWN and "point --python at the training environment" in v.summary
    v = g1(target=target("2.9.0+cu130", "13.0"), nvml=None, cudalibs={"libcudart": [CUDA13]})
    assert v.status is Status.UNKNOWN and "no NVIDIA GPU or driver seen" in v.summary
    v = g1(target=None, nvml=GB10, cudalibs={"libcudart": [CUDA13]})
    assert v.status is Status.UNKNOWN


def test_ok_with_ldconfig_unreadable_says_what_was_not_checked():
    v = g1(target=target("2.9.0+cu130", "13.0"), nvml=GB10, cudalibs=None)
    assert v.status is Status.OK
    assert v.summary.endswith("; ldconfig unreadable: a leftover libcudart.so.12 not checked")
    assert {e.what: e.value for e in v.evidence}["ldconfig -p libcudart"].startswith("unavailable: cudalibs unavailable")


# --- audit fixes -----------------------------------------------------------------------------------

NOT_RUN = {"status": "done"}


def test_cuda13_torch_that_cannot_see_the_gpu_warns_instead_of_ok():
    t = target("2.9.0+cu130", "13.0", torch_cuda=BLIND, env={"CUDA_VISIBLE_DEVICES": ""},
               **{"first .cuda()": NOT_RUN})
    t["cuda_smoke"] = {"ran": False, "reason": "torch.cuda.is_available() is False"}
    v = g1(target=t, nvml=GB10, cudalibs={"libcudart": [CUDA13]})
    assert v.status is Status.WARN
    assert v.summary.startswith("torch 2.9.0+cu130 is built for CUDA 13.0 but cannot see the GPU: "
                                "torch.cuda.is_available() is False, so the first .cuda() never ran")
    assert "CUDA_VISIBLE_DEVICES='' in the target's environment" in v.summary and "--gpus" in v.summary
    ev = {e.what: e.value for e in v.evidence}
    assert ev["torch.cuda.is_available()"] is False and ev["CUDA_VISIBLE_DEVICES"] == "''"
    assert ev["first .cuda()"] == "not run: torch.cuda.is_available() is False"
    assert "docker run --gpus all" in v.fix and "--index-url" not in v.fix  # the build is right: no reinstall


def test_a_blind_torch_on_another_gpu_warns_and_names_nvidia_visible_devices():
    t = target("2.9.0+cu128", "12.8", torch_cuda=BLIND, env={"NVIDIA_VISIBLE_DEVICES": "void"})
    v = g1(target=t, nvml=H200, cudalibs={"libcudart": []})
    assert v.status is Status.WARN and "cannot see the GPU" in v.summary
    assert "NVIDIA_VISIBLE_DEVICES='void'" in v.summary


def test_a_cuda12_build_that_cannot_see_the_gpu_still_fails_on_a_gb10():
    v = g1(target=target("2.9.0+cu128", "12.8", torch_cuda=BLIND), nvml=GB10, cudalibs={"libcudart": [CUDA13]})
    assert v.status is Status.FAIL and "GB10 needs CUDA 13.x" in v.summary


@pytest.mark.parametrize("nv", [GB10, H200], ids=["gb10", "h200"])
def test_an_unparseable_torch_version_cuda_is_unknown_naming_the_value(nv):
    v = g1(target=target("2.9.0+weird", "abc"), nvml=nv, cudalibs={"libcudart": [CUDA13]})
    assert v.status is Status.UNKNOWN
    assert v.summary.startswith("torch.version.cuda is 'abc', not a CUDA version")


def test_a_missing_torch_submodule_is_a_broken_install_not_an_absent_torch():
    v = g1(target=broken_import("ModuleNotFoundError", "No module named 'torch._C'"), nvml=GB10,
           cudalibs={"libcudart": [CUDA13]})
    assert v.status is Status.FAIL
    assert v.summary.startswith("torch is installed but broken: No module named 'torch._C'")
    assert "not installed" not in v.summary


def test_no_module_torch_while_its_metadata_is_registered_is_a_broken_install():
    v = g1(target=broken_import("ModuleNotFoundError", "No module named 'torch'"), nvml=GB10,
           cudalibs={"libcudart": [CUDA13]})
    assert v.status is Status.FAIL and "registered (importlib.metadata)" in v.summary


def test_the_undefined_symbol_is_named_without_trailing_punctuation():
    err = ("/home/spark/venvs/train/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
           "cudaGetDriverEntryPointByVersion, version libcudart.so.12")
    v = g1(target=broken_import("ImportError", err), nvml=GB10, cudalibs={"libcudart": [CUDA13]})
    assert v.status is Status.FAIL
    assert v.summary.startswith("import torch fails: undefined symbol cudaGetDriverEntryPointByVersion "
                                "(version libcudart.so.12) (CUDA ABI mismatch)")
    assert "EntryPointByVersion," not in v.summary
