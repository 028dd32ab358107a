"""G1's fix, filled from the evidence: the wheel index a GPU's driver can run, the interpreter's pip,
the libcudart.so.12 owners, and an `unset` only for a variable the target really has.

A mutation run (2026-12-05) found every one of these unpinned: each value in TORCH_INDEXES could move
by 5% and a wrong index (cu115 for a CUDA 12.1 driver) would still pass. A fix that names an index
the driver cannot run sends the user from one broken install to the next.
"""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.gotchas import g01_cuda_abi as g1
from sparktui.gotchas._facts import GpuFacts
from tests.conftest import readings_of
from tests.gotchas.builders import CUDA12, INTERP
from tests.gotchas.builders import g1_nvml as nvml, g1_target as target


def facts(nv: dict | None) -> GpuFacts:
    return GpuFacts(readings_of(nvml=nv), Config())


@pytest.mark.parametrize("driver_cuda, index", [
    # each index at its own driver version and just below the next one (the newest it can run)
    ("11.8", 118), ("12.0", 118), ("12.1", 121), ("12.3", 121), ("12.4", 124), ("12.5", 124),
    ("12.6", 126), ("12.7", 126), ("12.8", 128), ("12.9", 129), ("13.0", 130), ("13.1", 130), ("14.2", 130),
    ("11.7", 118),  # older than every index: the oldest, never an index past the driver's reach by more
    (" 12.4.1", 124),
])
def test_another_gpu_gets_the_newest_index_its_driver_can_run(driver_cuda, index):
    assert g1.torch_index(facts(nvml("NVIDIA H200", [9, 0], driver_cuda))) == index


@pytest.mark.parametrize("nv", [
    nvml("NVIDIA GB10", [12, 1], "12.8"),  # a GB10 needs CUDA 13 whatever an old driver says
    nvml("NVIDIA GB10", [12, 1], None),
    nvml(None, None, None),  # no GPU seen: the GB10's index, the one sparktui is for
    None,
])
def test_a_gb10_or_no_gpu_gets_cu130(nv):
    assert g1.torch_index(facts(nv)) == 130


@pytest.mark.parametrize("driver_cuda", ["x.y", "", "v12.4"])
def test_an_unreadable_driver_cuda_gets_the_newest_index(driver_cuda):
    assert g1.torch_index(facts(nvml("NVIDIA H200", [9, 0], driver_cuda))) == 130


def test_the_reinstall_fix_names_the_index_its_cuda_and_the_targets_pip():
    fix = g1.reinstall_fix(target(), facts(nvml("NVIDIA H200", [9, 0], "12.6")), [])
    assert fix.startswith("Install a torch built for CUDA 12.6 into this interpreter, from PyTorch's cu126 index "
                          "(never a plain `pip install torch`, which resolves to PyPI's default build):\n")
    assert f"{INTERP} -m pip uninstall -y torch torchvision torchaudio" in fix
    assert f"{INTERP} -m pip install torch torchvision --index-url https://download.pytorch.org/whl/cu126" in fix
    assert "print(torch.__version__, torch.version.cuda)\"   # expect 12.x" in fix
    assert ("Or train inside a matched NGC container, whose torch is built against CUDA 13 (it carries no "
            "`+cu130` tag, and needs none):\n") in fix
    assert g1.NGC_RUN in fix
    assert "libcudart.so.12" not in fix  # ldconfig read, and no CUDA 12 runtime registered: nothing to find


def test_the_reinstall_fix_on_a_gb10_says_cuda_13_0():
    fix = g1.reinstall_fix(target(), facts(nvml("NVIDIA GB10", [12, 1])), [])
    assert "Install a torch built for CUDA 13.0 into this interpreter, from PyTorch's cu130 index" in fix
    assert "whl/cu130" in fix and "# expect 13.x" in fix


def test_each_registered_cudart12_is_looked_up_by_its_own_path_after_the_reinstall():
    other = "/opt/old/lib/libcudart.so.12"
    fix = g1.reinstall_fix(target(), facts(nvml("NVIDIA GB10", [12, 1])), [CUDA12["path"], other])
    assert fix.index("Install a torch") < fix.index("A `libcudart.so.12` still registered beside `libcudart.so.13` "
                                                    "is usually left over from an older install; find what owns it "
                                                    "before removing anything:\n")
    assert f"ldconfig -p | grep libcudart\ndpkg -S {CUDA12['path']}\ndpkg -S {other}" in fix
    assert "awk" not in fix


def test_ldconfig_unread_gives_the_lookup_that_finds_the_path():
    fix = g1.reinstall_fix(target(), facts(nvml("NVIDIA GB10", [12, 1])), None)
    assert "Install a torch built for CUDA 13.0" in fix
    assert "ldconfig -p | grep libcudart\ndpkg -S \"$(ldconfig -p | awk '/libcudart.so.12 /{print $NF; exit}')\"" in fix


@pytest.mark.parametrize("env, unset", [
    ({}, []),
    ({"CUDA_VISIBLE_DEVICES": ""}, ["unset CUDA_VISIBLE_DEVICES"]),
    ({"NVIDIA_VISIBLE_DEVICES": "void", "HOME": "/root"}, ["unset NVIDIA_VISIBLE_DEVICES"]),
    ({"CUDA_VISIBLE_DEVICES": "-1", "NVIDIA_VISIBLE_DEVICES": "none"},
     ["unset CUDA_VISIBLE_DEVICES", "unset NVIDIA_VISIBLE_DEVICES"]),
])
def test_the_no_gpu_fix_unsets_only_what_the_target_has(env, unset):
    t = target(python={"version": "3.12.3", "env": env})
    fix = g1.no_gpu_fix(t)
    assert fix.startswith("torch is built for the right CUDA but cannot see the GPU, so nothing ran on it. Check that "
                          "the driver sees the GPU, that a container was started with the GPUs passed through, and "
                          "that the training environment does not hide them:\n\n")
    assert [line for line in fix.splitlines() if line.startswith("unset ")] == unset
    assert "nvidia-smi                                          # the driver must list the GPU first" in fix
    assert "env | grep -E 'CUDA_VISIBLE_DEVICES|NVIDIA_VISIBLE_DEVICES'" in fix
    assert INTERP in fix
    assert "A container must be started with the GPUs passed through (`--gpus" in fix


@pytest.mark.parametrize("t", [target(python=None), target(python={"env": None}), {}])
def test_the_no_gpu_fix_without_an_environment_unsets_nothing(t):
    assert "unset " not in g1.no_gpu_fix(t)
