"""G7 judged on recorded-style readings: the build's arch list on SM121 (docs/reference/FACTS.md "NVFP4 vs FP8 on
SM121": the slowdown was packaging, kernels not compiled for sm_121a or the sm_120f family)."""

from __future__ import annotations

import pytest

from sparktui.core.verdict import Status
from tests.gotchas.builders import PIP_CU128, values as evidence
from tests.gotchas.builders import G7_GB10 as GB10, g7_judged as g7, g7_nvml as nvml, g7_target as target


H200 = nvml("NVIDIA H200", [9, 0])
RTX = nvml("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", [12, 0])


@pytest.mark.parametrize("native", ["sm_121a", "sm_120f", "compute_121a"])
def test_a_build_with_sm121a_or_the_sm120f_family_is_ok(native):
    v = g7(nvml=GB10, target=target(["sm_90", "sm_100", "sm_120", native]))
    assert v.status is Status.OK, v
    assert v.summary == (f"SM121 and the torch build has {native} kernels: NVFP4 can use native paths; "
                         "still measure against FP8")
    assert v.fix == "" and v.details == ()
    ev = evidence(v)
    assert ev["compute capability"] == "12.1 (NVIDIA GB10)"
    assert ev["TORCH_CUDA_ARCH_LIST (extension builds)"] == "not set"
    assert native in ev["torch.cuda.get_arch_list()"]


def test_ok_with_a_matching_torch_cuda_arch_list():
    v = g7(nvml=GB10, target=target(["sm_120", "sm_121a"], env={"TORCH_CUDA_ARCH_LIST": "9.0;12.1a+PTX"}))
    assert v.status is Status.OK and v.details == ()


def test_generic_sm120_kernels_warn_that_nvfp4_may_fall_back():
    v = g7(nvml=GB10, target=target(PIP_CU128))
    assert v.status is Status.WARN
    assert v.summary == ("SM121, torch built for sm_120 but not sm_121a/sm_120f: NVFP4 kernels may fall back; "
                         "benchmark FP8 first")
    assert 'TORCH_CUDA_ARCH_LIST="12.1a"' in v.fix and "1.5x faster" in v.fix


def test_ptx_only_warns_about_jit_and_no_native_nvfp4():
    v = g7(nvml=GB10, target=target(["sm_80", "sm_90", "compute_90"]))
    assert v.status is Status.WARN
    assert v.summary == ("SM121 with no machine code it can run (only PTX compute_90): JIT at start-up and "
                         "no native NVFP4")


def test_torch_cuda_arch_list_without_12_1a_downgrades_an_ok_to_a_warning():
    v = g7(nvml=GB10, target=target(["sm_120", "sm_121a"], env={"TORCH_CUDA_ARCH_LIST": "9.0;12.0+PTX"}))
    assert v.status is Status.WARN
    assert v.summary.endswith("; but TORCH_CUDA_ARCH_LIST lacks 12.1a/12.0f")
    assert v.summary.startswith("SM121 and the torch build has sm_121a kernels")
    assert v.details == ("TORCH_CUDA_ARCH_LIST='9.0;12.0+PTX' has no 12.1a/12.0f: kernels you build now lack "
                         "NVFP4 paths for SM121",)
    assert evidence(v)["TORCH_CUDA_ARCH_LIST (extension builds)"] == "9.0;12.0+PTX"
    assert v.fix


def test_nothing_sm121_can_run_fails():
    v = g7(nvml=GB10, target=target(["sm_80", "sm_90"]))
    assert v.status is Status.FAIL
    assert v.summary == "SM121, but the torch build targets only sm_80, sm_90: no kernels for this GPU"


def test_arch_specific_code_for_another_chip_is_no_code_for_sm121():
    # sm_120a / compute_120a run on sm_120 only: neither a fallback nor a JIT path on SM121
    v = g7(nvml=GB10, target=target(["sm_90", "sm_120a", "compute_120a"]))
    assert v.status is Status.FAIL and "no kernels for this GPU" in v.summary


def test_a_cpu_only_build_on_sm121_fails():
    v = g7(nvml=GB10, target=target([], available=False, cuda=None, version="2.9.0+cpu"))
    assert v.status is Status.FAIL
    assert v.summary == "SM121, but torch 2.9.0+cpu is a CPU-only build: no GPU kernels at all"


def test_a_torch_that_cannot_see_the_gpu_is_unknown_and_says_why_the_list_is_empty():
    v = g7(nvml=GB10, target=target([], available=False))
    assert v.status is Status.UNKNOWN
    assert v.summary == "SM121 confirmed, but the build's arch list could not be read"
    assert "torch.cuda.is_available() is False" in evidence(v)["torch.cuda.get_arch_list()"]


@pytest.mark.parametrize("nv, label", [(H200, "NVIDIA H200 (sm_90)"),
                                       (RTX, "NVIDIA RTX PRO 6000 Blackwell Workstation Edition (sm_120)")])
def test_skipped_off_sm121(nv, label):
    v = g7(nvml=nv, target=target(["sm_90"]))
    assert v.status is Status.SKIP
    assert v.summary == f"not SM121: {label}; the NVFP4 packaging gotcha is GB10-specific"


def test_capability_from_the_target_torch_when_nvml_is_missing():
    v = g7(nvml=None, target=target(["sm_121a"]))
    assert v.status is Status.OK
    assert evidence(v)["compute capability"] == "12.1 (NVIDIA GB10)"


def test_no_capability_anywhere_is_unknown_never_ok():
    v = g7(nvml=None, target=None)
    assert v.status is Status.UNKNOWN and "compute capability unreadable" in v.summary
