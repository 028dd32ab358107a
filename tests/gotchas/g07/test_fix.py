"""G7's fix filled from the evidence, and its verdict on NVML's garbage, pinned (a mutation run on
2026-12-05 found both unpinned: the fix could name `None` as the interpreter or drop what
TORCH_CUDA_ARCH_LIST is now, and the garbage verdict could lose its status and evidence)."""

from __future__ import annotations

from sparktui.core.verdict import Status
from sparktui.gotchas import g07_nvfp4_arch as g7mod
from tests.gotchas.builders import INTERP, PIP_CU128
from tests.gotchas.builders import values as evidence
from tests.gotchas.builders import G7_GB10 as GB10, g7_judged as g7, g7_target as target


def test_the_fix_checks_the_arch_list_with_the_target_interpreter():
    fix = g7mod.fix_for(target(PIP_CU128), None)
    assert (f"{INTERP} -c \"import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())\""
            in fix)
    assert "None" not in fix and "TORCH_CUDA_ARCH_LIST is" not in fix


def test_the_fix_says_what_torch_cuda_arch_list_is_now_on_every_path():
    env = {"TORCH_CUDA_ARCH_LIST": "9.0;12.0"}
    note = "# TORCH_CUDA_ARCH_LIST is '9.0;12.0' in the training environment now"
    for t in (target(PIP_CU128, env=env),  # generic sm_120 kernels: warn
              target(["sm_90"], env=env),  # nothing SM121 runs: fail
              target(None, env=env, available=False),  # arch list unreadable: unknown, fix still given
              target(None, env=env, cuda=None, version="2.9.0+cpu")):  # a CPU-only build: fail
        v = g7(target=t, nvml=GB10)
        assert note in v.fix, (v.status, v.summary)
        assert v.fix == g7mod.fix_for(t, "9.0;12.0")


def test_nvml_garbage_is_unknown_with_the_reading_as_evidence():
    bad = {**GB10, "devices": [{**GB10["devices"][0], "compute_capability": {"value": "12.1"}}]}
    v = g7(nvml=bad, target=target(["sm_121a"]))
    assert v.status is Status.UNKNOWN
    assert v.summary.startswith("cannot tell: measurement error: NVML's reading is unusable data: field ")
    (row,) = v.evidence
    assert (row.what, row.source) == ("compute capability", "NVML")
    assert "expected a list, got str '12.1'" in row.value
    assert evidence(v)["compute capability"] == row.value
