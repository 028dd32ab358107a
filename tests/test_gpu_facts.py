"""Which GPU the readings describe (gotchas/_facts.py): an unreadable compute capability or name
is not evidence, and never a crash of G1 or G7 (an edited snapshot, a peer's odd reading)."""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.gotchas import REGISTRY
from sparktui.gotchas._facts import GpuFacts, capability_pair
from sparktui.runner import judge
from tests.conftest import readings_of
from tests.gotchas.builders import PIP_CU128, g7_nvml as nvml, g7_target as target


@pytest.mark.parametrize("raw, pair", [
    ([12, 1], (12, 1)), ((9, 0), (9, 0)),
    (None, None), ([None, 1], None), (["12", "1"], None), ("12.1", None), ([12], None), ([12, 1, 0], None),
    ([True, 1], None), ([12.0, 1], None), ({"major": 12}, None),
])
def test_capability_pair_takes_two_integers_only(raw, pair):
    assert capability_pair(raw) == pair


@pytest.mark.parametrize("cap", [[None, 1], ["N/A", "N/A"], "12.1", [12]])
def test_an_unreadable_nvml_capability_falls_back_to_the_target_torch(cap):
    facts = GpuFacts(readings_of(nvml=nvml("NVIDIA GB10", cap), target=target(PIP_CU128)), Config())
    assert facts.capability == (12, 1) and facts.cap_source == "torch.cuda.get_device_capability(0)"


@pytest.mark.parametrize("gid", ["G1", "G7"])
@pytest.mark.parametrize("cap", [[None, 1], ["N/A", 1], "12.1"])
def test_g1_and_g7_never_crash_or_pass_on_an_unreadable_capability(gid, cap):
    t = target(PIP_CU128, available=False)  # torch cannot see the GPU either: nothing says sm_121
    v = judge(REGISTRY[gid], readings_of(nvml=nvml("NVIDIA H200", cap), target=t, cudalibs=None), Config())
    assert "judge error" not in v.summary
    assert v.status.value != "ok" or gid == "G1"  # G1 judges the CUDA build, not the capability


def test_a_name_that_is_not_text_is_not_a_name():
    d = nvml("x", [12, 1])
    d["devices"][0]["name"] = {"value": 10}
    facts = GpuFacts(readings_of(nvml=d), Config())
    assert facts.name is None and facts.capability == (12, 1) and facts.is_gb10
