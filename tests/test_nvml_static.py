"""The NVML static reading at the fake NVML boundary: what the plots' scales come from."""

from sparktui.core.config import Config
from sparktui.probes.nvml import read_static
from sparktui.testing import fake_nvml


def test_max_sm_clock_is_read_where_nvml_answers():
    fake = fake_nvml.gb10()
    fake.set(max_sm_mhz=1980)  # what an H200 answers
    with fake_nvml.installed(fake):
        dev = read_static(Config()).data["devices"][0]
    assert dev["max_sm_mhz"].get("value") == 1980.0


def test_a_refused_max_clock_is_unread_with_its_reason_never_zero():
    with fake_nvml.installed(fake_nvml.gb10()):
        dev = read_static(Config()).data["devices"][0]
    assert dev["max_sm_mhz"].get("value") is None
    assert "not supported" in str(dev["max_sm_mhz"].get("error")).lower()
