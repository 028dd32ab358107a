"""Issue 26 item 2: clocks set by hand (`nvidia-smi -lgc` / `-ac`) are a warn naming the reset.

Real numbers: a real H100 80GB HBM3 (driver 580.159.04) answered nvmlDeviceGetClock(GRAPHICS,
APP_CLOCK_TARGET) = 1980 and (..., APP_CLOCK_DEFAULT) = 1980, memory 2619 / 2619, with
`nvidia-smi -q -d CLOCK` showing the same "Applications Clocks" and "Default Applications Clocks"
(tests/data/h100/clocks-2026-12-05.txt). The lock: `sudo nvidia-smi -lgc 0,2000`, used on Sparks to
run ~10 °C cooler (a DeepSeek recipe report #146, FIELD-FACTS.md "Power and clocks"); sparkview shows
such a box as LOCKED. NVML's reason 0x2 (nvml.h: "GPU clocks are limited by current setting of
applications clocks"; nvidia-smi: "Applications Clocks Setting") is what NVML reports for it.
"""

from __future__ import annotations

from pathlib import Path

import pynvml

from sparktui.core.config import Config
from sparktui.core.recording import readings_from_samples
from sparktui.gotchas import g04_throttling as g4
from sparktui.gotchas.g04_throttling import judge
from sparktui.probes.nvml import NvmlSession, static_info
from sparktui.probes.sampler import Sampler
from sparktui.testing import fake_nvml
from tests.conftest import readings_of
from tests.gotchas.g04.test_rules import gpu, samples

DATA = Path(__file__).resolve().parents[2] / "data" / "h100" / "clocks-2026-12-05.txt"
APP = pynvml.nvmlClocksEventReasonApplicationsClocksSetting  # 0x2


def _static(fake):
    with fake_nvml.installed(fake):
        return static_info(NvmlSession())


def _verdict(fake, smp):
    return judge(readings_of(telemetry={"samples": smp, "static": _static(fake)}), Config())


def test_the_recorded_h100_answers_are_what_the_fake_gives():
    text = DATA.read_text()
    assert "GetClock graphics app_target: 1980" in text and "GetClock graphics app_default: 1980" in text
    assert "GetClock mem app_target: 2619" in text and "GetClock mem app_default: 2619" in text
    dev = _static(fake_nvml.h100())["devices"][0]
    assert (dev["app_clock_gr_mhz"], dev["default_app_clock_gr_mhz"]) == ({"value": 1980.0}, {"value": 1980.0})
    assert (dev["app_clock_mem_mhz"], dev["default_app_clock_mem_mhz"]) == ({"value": 2619.0}, {"value": 2619.0})


def test_clocks_at_their_defaults_are_not_a_warning_and_are_named():
    v = _verdict(fake_nvml.h100(), samples(lambda i, t: gpu(temp=60, power=500.0, sm=1980)))
    assert v.status.value == "ok", v.summary
    ev = {e.what: e.value for e in v.evidence}
    assert ev["application clocks"] == "at their defaults: graphics 1980 MHz, memory 2619 MHz"
    assert "nvidia-smi -rgc" not in v.fix


def test_application_clocks_changed_from_default_warn_with_the_reset():
    fake = fake_nvml.h100().set(app_gr_mhz=1410)  # `sudo nvidia-smi -ac 2619,1410`
    v = _verdict(fake, samples(lambda i, t: gpu(temp=60, power=400.0, sm=1410)))
    assert v.status.value == "warn"
    assert v.summary.startswith("clocks set by hand: application clocks changed from default "
                                "(graphics 1410 MHz, default 1980 MHz); reset with `sudo nvidia-smi -rgc`"), v.summary
    assert "`sudo nvidia-smi -rac` (application clocks)" in v.summary
    assert v.fix.startswith(g4.RESET_CLOCKS) and "sudo nvidia-smi -rac\n" in v.fix
    ev = {e.what: e.value for e in v.evidence}
    assert ev["application clocks"].startswith("changed from default: graphics 1410 MHz, default 1980 MHz")
    # a setting is a state: it warns on the first samples too, marked part-filled
    early = _verdict(fake, samples(lambda i, t: gpu(temp=40, power=80.0, sm=1410), seconds=10.0))
    assert early.status.value == "warn" and early.summary.endswith("[so far: 10 s of 10 min sampled]")


def test_a_lock_shows_as_the_clock_setting_reason_held_under_load():
    """A Spark locked with `nvidia-smi -lgc 0,2000`: ~2000 MHz under load instead of ~2400, NVML's
    clock-setting reason active; no app-clock reading (GB10's answer is not on record)."""
    v = _verdict(fake_nvml.gb10(), samples(lambda i, t: gpu(temp=75, power=80.0, sm=2000, reasons=APP)))
    assert v.status.value == "warn"
    assert ("clocks held by a clock setting (applications_clocks_setting in 121 of 121 samples): locked with "
            "`nvidia-smi -lgc` or application clocks set with `-ac`") in v.summary
    assert "USB-PD" in v.fix and v.fix.startswith(g4.RESET_CLOCKS)  # a GB10: Spark advice too
    # in one sample only: a snapshot, not a setting
    one = _verdict(fake_nvml.gb10(), samples(lambda i, t: gpu(temp=75, power=80.0, reasons=APP if i == 5 else 0)))
    assert one.status.value == "ok", one.summary


def test_unreadable_application_clocks_are_unknown_for_that_rule_never_default():
    v = _verdict(fake_nvml.gb10(), samples(lambda i, t: gpu(temp=75, power=80.0)))
    assert v.status.value == "ok"  # the throttling verdict stands on the counters and reasons
    ev = {e.what: e.value for e in v.evidence}
    assert ev["application clocks"] == ("unavailable: NOT_SUPPORTED (Not Supported): clocks set with "
                                        "`nvidia-smi -ac` cannot be seen")
    assert "default" not in ev["application clocks"]


def test_the_sampler_carries_the_static_clocks_into_the_dashboards_readings():
    fake = fake_nvml.h100().set(app_gr_mhz=1410)
    with fake_nvml.installed(fake):
        s = Sampler(Config(), interval_s=1.0)
        static = s.static()
        smp = [s.take() for _ in range(3)]
        s.close()
    assert fake.calls["nvmlDeviceGetClock"] == 4  # once, with the static facts; never per sample
    v = judge(readings_from_samples(smp, static=static, window_s=600.0, source="live"), Config())
    assert v.status.value == "warn" and v.summary.startswith("clocks set by hand"), v.summary


def test_the_reset_block_comes_first_and_runs_as_is():
    from tests.test_fix_blocks import assert_runnable, blocks

    v = _verdict(fake_nvml.h100().set(app_gr_mhz=1410), samples(lambda i, t: gpu(temp=60, power=400.0, sm=1410)))
    assert_runnable(v)
    assert blocks(v.fix)[0][1] == "sudo nvidia-smi -rgc\nsudo nvidia-smi -rac\n"  # what `c` copies


def test_a_rerun_reads_the_application_clocks_again():
    """The dashboard's `r` on G4 (live) re-reads NVML's static facts: a `sudo nvidia-smi -rac` since
    the start shows at once instead of the warn read at the start."""
    from sparktui.live.sources import LiveSource

    fake = fake_nvml.h100().set(app_gr_mhz=1410)
    with fake_nvml.installed(fake):
        src = LiveSource(Config(), lambda s: None, lambda d: None, keep_session=False)
        src.static = src.sampler.static()
        assert src.static["devices"][0]["app_clock_gr_mhz"] == {"value": 1410.0}
        fake.set(app_gr_mhz=1980)  # sudo nvidia-smi -rac
        src.refresh_static()
        src.sampler.close()
    assert src.static["devices"][0]["app_clock_gr_mhz"] == {"value": 1980.0}
