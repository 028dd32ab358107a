"""G7 at each boundary: the capability (12,1) against its neighbours and against values no GPU has,
and each arch-list spelling that does or does not give SM121 native NVFP4 kernels.

docs/reference/FACTS.md: GB10 is SM121 (compute capability 12.1); NVFP4 is fast only with kernels built for
sm_121a or the sm_120f family; sm_120a code runs on sm_120 alone; a pip cu128 wheel's arch list is
sm_80 ... sm_120 + compute_120. A test fails when a comparison moves or an unknown guard goes.
"""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g07_nvfp4_arch as g7
from tests.conftest import readings_of
from tests.gotchas.builders import PIP_CU128, rows, values as ev_of


def nvml(cap: list[int] | None, name: str | None = "NVIDIA GB10") -> dict:
    dev: dict = {"index": 0}
    if name is not None:
        dev["name"] = {"value": name}
    if cap is not None:
        dev["compute_capability"] = {"value": cap}
    return {"driver_version": {"value": "580.95.05"}, "cuda_driver_version": {"value": "13.0"}, "devices": [dev]}


GB10 = nvml([12, 1])


def target(arch: list[str] | None, env: dict | None = None, available: bool | None = True, cuda: str | None = "13.0",
           version: str | None = "2.9.0+cu130", **tc_extra) -> dict:
    tc: dict = {"available": available, **tc_extra}
    if arch is not None:
        tc["arch_list"] = arch
    return {"interpreter": "/home/spark/venvs/train/bin/python", "python": {"env": env or {}},
            "torch": {"version": version, "cuda": cuda}, "torch_cuda": tc,
            "stages": {"import torch": {"status": "done"}, "torch.cuda": {"status": "done"}}}


def judge(nv=GB10, t=None, cfg: Config | None = None):
    return g7.judge(readings_of(nvml=nv, target=t), cfg or Config())


# --- the capability ------------------------------------------------------------------------------

@pytest.mark.parametrize("cap, status", [
    ([12, 1], Status.OK), ([12, 0], Status.SKIP), ([12, 2], Status.SKIP), ([11, 1], Status.SKIP), ([13, 1], Status.SKIP),
    ([9, 0], Status.SKIP), ([10, 0], Status.SKIP), ([1, 0], Status.SKIP), ([15, 9], Status.SKIP),
    ([99, 0], Status.UNKNOWN), ([-1, 0], Status.UNKNOWN), ([0, 0], Status.UNKNOWN), ([16, 0], Status.UNKNOWN),
    ([12, 10], Status.UNKNOWN), ([12, -1], Status.UNKNOWN), ([-12, -1], Status.UNKNOWN),
])
def test_only_sm121_is_judged_and_a_capability_no_gpu_has_is_a_measurement_error(cap, status):
    v = judge(nvml(cap, name=None), target(["sm_121a"]))
    assert v.status is status, v
    assert ev_of(v)["compute capability"] == f"{cap[0]}.{cap[1]} (unnamed)"
    if status is Status.SKIP:
        assert v.summary == f"not SM121: unnamed GPU (sm_{cap[0]}{cap[1]}); the NVFP4 packaging gotcha is GB10-specific"
        assert v.fix == "" and len(v.evidence) == 1
    if status is Status.UNKNOWN:
        assert v.summary == (f"cannot tell: measurement error: compute capability {cap[0]}.{cap[1]} is outside what "
                             "any NVIDIA GPU can produce (major 1..15, minor 0..9)")
        assert len(v.evidence) == 1


@pytest.mark.parametrize("cap, problem", [
    ((1, 0), False), ((15, 9), False), ((12, 1), False), ((0, 9), True), ((16, 0), True), ((15, 10), True), ((12, -1), True),
])
def test_capability_problem_bounds(cap, problem):
    assert (g7.capability_problem(cap) is not None) is problem
    assert (g7.MIN_MAJOR, g7.MAX_MAJOR, g7.MAX_MINOR, g7.SM121) == (1, 15, 9, (12, 1))


def test_the_name_does_not_override_the_capability():
    """A GB10 name beside capability 12.0 (a misread) is judged by the capability: skipped."""
    assert judge(nvml([12, 0], "NVIDIA GB10"), target(["sm_121a"])).status is Status.SKIP


def test_the_capability_comes_from_torch_when_nvml_names_no_device():
    tc_dev = [{"index": 0, "name": "NVIDIA GB10", "capability": [12, 1]}]
    v = judge(None, target(["sm_121a"], devices=tc_dev))
    assert v.status is Status.OK and ev_of(v)["compute capability"] == "12.1 (NVIDIA GB10)"
    v = judge({"devices": []}, target(["sm_121a"], devices=[{"index": 0, "name": "X", "capability": [99, 0]}]))
    assert v.status is Status.UNKNOWN and "compute capability 99.0 is outside what any NVIDIA GPU" in v.summary


@pytest.mark.parametrize("t, shown", [
    (None, "unavailable: target unavailable (test)"),
    (target(None, available=False), False),
    ({"stages": {}}, "unavailable: torch.cuda not reached"),
])
def test_no_capability_anywhere_is_unknown_with_what_torch_saw(t, shown):
    v = judge(None, t)
    assert v.status is Status.UNKNOWN
    assert v.summary == "cannot tell: compute capability unreadable (no GPU seen by NVML or the target torch)"
    ev = ev_of(v)
    assert ev["compute capability"] == "unavailable: nvml unavailable (test)"
    assert ev["torch.cuda.is_available()"] == shown
    assert v.fix == ""


def test_nvml_with_no_device_says_so():
    v = judge({"devices": []}, None)
    assert ev_of(v)["compute capability"] == "unavailable: NVML named no device"


# --- the arch list on SM121 -----------------------------------------------------------------------


@pytest.mark.parametrize("arch, status, summary", [
    (["sm_90", "sm_121a"], Status.OK, "SM121 and the torch build has sm_121a kernels: NVFP4 can use native paths; still measure against FP8"),
    (["sm_120f"], Status.OK, "SM121 and the torch build has sm_120f kernels: NVFP4 can use native paths; still measure against FP8"),
    (["sm_121f"], Status.OK, "SM121 and the torch build has sm_121f kernels: NVFP4 can use native paths; still measure against FP8"),
    (["compute_121a"], Status.OK, "SM121 and the torch build has compute_121a kernels: NVFP4 can use native paths; still measure against FP8"),
    (["sm_121a", "sm_120f"], Status.OK, "SM121 and the torch build has sm_121a, sm_120f kernels: NVFP4 can use native paths; still measure against FP8"),
    (["sm_121"], Status.WARN, "SM121, torch built for sm_121 but not sm_121a/sm_120f: NVFP4 kernels may fall back; benchmark FP8 first"),
    (PIP_CU128, Status.WARN, "SM121, torch built for sm_120 but not sm_121a/sm_120f: NVFP4 kernels may fall back; benchmark FP8 first"),
    (["sm_120", "sm_121"], Status.WARN, "SM121, torch built for sm_120, sm_121 but not sm_121a/sm_120f: NVFP4 kernels may fall back; benchmark FP8 first"),
    (["sm_90", "compute_90"], Status.WARN, "SM121 with no machine code it can run (only PTX compute_90): JIT at start-up and no native NVFP4"),
    (["compute_121"], Status.WARN, "SM121 with no machine code it can run (only PTX compute_121): JIT at start-up and no native NVFP4"),
    (["compute_120", "compute_122"], Status.WARN, "SM121 with no machine code it can run (only PTX compute_120): JIT at start-up and no native NVFP4"),
    (["compute_122"], Status.FAIL, "SM121, but the torch build targets only compute_122: no kernels for this GPU"),
    (["sm_120a"], Status.FAIL, "SM121, but the torch build targets only sm_120a: no kernels for this GPU"),
    (["sm_120a", "compute_120a"], Status.FAIL, "SM121, but the torch build targets only sm_120a, compute_120a: no kernels for this GPU"),
    (["sm_122"], Status.FAIL, "SM121, but the torch build targets only sm_122: no kernels for this GPU"),
    (["sm_90", "sm_100"], Status.FAIL, "SM121, but the torch build targets only sm_90, sm_100: no kernels for this GPU"),
    (["sm_1210a", "xsm_121a", "sm_121ab"], Status.FAIL,
     "SM121, but the torch build targets only sm_1210a, xsm_121a, sm_121ab: no kernels for this GPU"),
])
def test_each_arch_spelling(arch, status, summary):
    v = judge(GB10, target(arch))
    assert (v.status, v.summary) == (status, summary)
    assert ev_of(v)["torch.cuda.get_arch_list()"] == arch
    assert (v.fix == "") is (status is Status.OK)
    assert v.details == ()


@pytest.mark.parametrize("arch, num", [("sm_121a", 121), ("compute_90", 90), ("sm_120f", 120), ("gfx90a", None), ("sm_", None)])
def test_arch_num(arch, num):
    assert g7._arch_num(arch) == num


# --- TORCH_CUDA_ARCH_LIST in the training environment -----------------------------------------------

@pytest.mark.parametrize("env_list, native", [
    ("12.1a", True), ("12.0f", True), ("12.1f", True), ("9.0;12.1a+PTX", True), ("12.1A", True), ("8.0 12.1a", True),
    ("8.0,12.0f", True), (" 12.1a ", True),
    ("12.1", False), ("12.0", False), ("12.0a", False), ("12.1a0", False), ("112.1a", False), ("12.10a", False),
    ("9.0;12.0+PTX", False), ("", False),
])
def test_torch_cuda_arch_list_needs_12_1a_or_the_12_0f_family(env_list, native):
    v = judge(GB10, target(["sm_121a"], env={"TORCH_CUDA_ARCH_LIST": env_list}))
    assert ev_of(v)["TORCH_CUDA_ARCH_LIST (extension builds)"] == env_list
    if native:
        assert v.status is Status.OK and v.details == ()
    else:
        assert v.status is Status.WARN
        assert v.summary.endswith("kernels: NVFP4 can use native paths; still measure against FP8; but TORCH_CUDA_ARCH_LIST lacks 12.1a/12.0f")
        assert v.details == (f"TORCH_CUDA_ARCH_LIST={env_list!r} has no 12.1a/12.0f: kernels you build now lack NVFP4 paths for SM121",)
        assert v.fix == g7.fix_for(target([]), env_list) and f"# TORCH_CUDA_ARCH_LIST is {env_list!r}" in v.fix


def test_a_bad_torch_cuda_arch_list_does_not_hide_a_worse_verdict():
    v = judge(GB10, target(["sm_90"], env={"TORCH_CUDA_ARCH_LIST": "9.0"}))
    assert v.status is Status.FAIL and "but TORCH_CUDA_ARCH_LIST" not in v.summary and len(v.details) == 1
    v = judge(GB10, target(PIP_CU128, env={"TORCH_CUDA_ARCH_LIST": "9.0"}))
    assert v.status is Status.WARN and "but TORCH_CUDA_ARCH_LIST" not in v.summary


def test_an_unset_torch_cuda_arch_list_is_shown_as_not_set():
    assert ev_of(judge(GB10, target(["sm_121a"])))["TORCH_CUDA_ARCH_LIST (extension builds)"] == "not set"


# --- an arch list that could not be read ------------------------------------------------------------

def test_a_cpu_only_build_fails_only_when_torch_version_cuda_was_read_as_none():
    v = judge(GB10, target([], available=False, cuda=None, version="2.9.0+cpu"))
    assert (v.status, v.summary) == (Status.FAIL, "SM121, but torch 2.9.0+cpu is a CPU-only build: no GPU kernels at all")
    assert ev_of(v)["torch.version.cuda"] is None and v.fix == g7.fix_for(target([]), None)
    t = target([], available=False, version="2.9.0+cpu")
    del t["torch"]["cuda"]  # not read: no claim about the build
    assert judge(GB10, t).status is Status.UNKNOWN
    assert judge(GB10, target([], available=False, cuda=None, version=None)).status is Status.UNKNOWN
    # a CPU-only build whose (odd) arch list has entries is judged by the list
    assert judge(GB10, target(["sm_121a"], cuda=None, version="2.9.0+cpu")).status is Status.OK


@pytest.mark.parametrize("t, why", [
    (target([], available=False), "unavailable: torch.cuda.is_available() is False (torch cannot see the GPU), and get_arch_list() is then []"),
    (target([], available=None), "unavailable: torch.cuda facts unavailable"),
    (target(None, available=True, arch_list_error="RuntimeError: no CUDA"), "unavailable: RuntimeError: no CUDA"),
    (target(None, available=False), "unavailable: torch.cuda facts unavailable"),
])
def test_an_empty_or_unread_arch_list_is_unknown_and_says_why(t, why):
    v = judge(GB10, t)
    assert (v.status, v.summary) == (Status.UNKNOWN, "SM121 confirmed, but the build's arch list could not be read")
    assert ev_of(v)["torch.cuda.get_arch_list()"] == why
    assert v.fix == g7.fix_for(t, None)


def test_the_torch_cuda_stage_error_or_the_reading_error_explains_a_missing_list():
    t = target(None, available=None)
    t["stages"]["torch.cuda"] = {"status": "hung", "error": "no answer after 90.0 s during 'torch.cuda'; killed"}
    v = judge(GB10, t)
    assert v.status is Status.UNKNOWN
    assert ev_of(v)["torch.cuda.get_arch_list()"] == "unavailable: no answer after 90.0 s during 'torch.cuda'; killed"
    v = judge(GB10, None)
    assert v.status is Status.UNKNOWN and ev_of(v)["torch.cuda.get_arch_list()"] == "unavailable: target unavailable (test)"


def test_a_bad_env_list_is_reported_beside_an_unreadable_arch_list():
    v = judge(GB10, target([], available=False, env={"TORCH_CUDA_ARCH_LIST": "8.0"}))
    assert v.status is Status.UNKNOWN and len(v.details) == 1


# --- the evidence: every row, its source and value ------------------------------------------------


def test_every_evidence_row_on_each_path():
    v = judge(None, target(None, available=False))
    assert v.id == "G7" and rows(v) == [("compute capability", "NVML", "unavailable: nvml unavailable (test)"),
                                        ("torch.cuda.is_available()", "target interpreter", False)]
    v = judge(nvml([99, 0]), None)
    assert v.id == "G7" and rows(v) == [("compute capability", "NVML nvmlDeviceGetCudaComputeCapability", "99.0 (NVIDIA GB10)")]
    v = judge(nvml([9, 0], "NVIDIA H200"), None)
    assert v.id == "G7" and rows(v) == [("compute capability", "NVML nvmlDeviceGetCudaComputeCapability", "9.0 (NVIDIA H200)")]
    v = judge(GB10, target([], available=False, cuda=None, version="2.9.0+cpu"))
    assert v.id == "G7" and v.details == () and rows(v) == [
        ("compute capability", "NVML nvmlDeviceGetCudaComputeCapability", "12.1 (NVIDIA GB10)"),
        ("TORCH_CUDA_ARCH_LIST (extension builds)", "target environment", "not set"),
        ("torch.version.cuda", "target interpreter", None)]
    v = judge(GB10, target([], available=False, cuda=None, version="2.9.0+cpu", env={"TORCH_CUDA_ARCH_LIST": "9.0"}))
    assert v.details == ("TORCH_CUDA_ARCH_LIST='9.0' has no 12.1a/12.0f: kernels you build now lack NVFP4 paths for SM121",)
    v = judge(GB10, target([], available=False))
    assert v.id == "G7" and rows(v)[-1] == (
        "torch.cuda.get_arch_list()", "target interpreter",
        "unavailable: torch.cuda.is_available() is False (torch cannot see the GPU), and get_arch_list() is then []")
    v = judge(GB10, target(PIP_CU128))
    assert v.id == "G7" and rows(v)[-1] == ("torch.cuda.get_arch_list()", "target interpreter", PIP_CU128)


def test_only_ptx_lists_every_ptx_target():
    v = judge(GB10, target(["compute_90", "compute_120"]))
    assert v.summary == "SM121 with no machine code it can run (only PTX compute_90, compute_120): JIT at start-up and no native NVFP4"
