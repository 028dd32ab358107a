"""Issue 27 item 3: a `nvidia-smi -lgc` lock as a real driver shows it, not as heat.

Real numbers (tests/data/h100/lgc-lock-2026-12-05.txt, nvidia-smi on the lent H100 80GB HBM3,
driver 580.159.04): a bf16 matmul loop at 99-100 % utilization ran at 1350-1395 MHz, 696-700 W of
700 W, 68 °C with SW Power Cap active (0x4); `nvidia-smi -lgc 300,600` held it at 600 MHz, 283 W, 49 °C
with NO clock-event reason active (0x0: not the 0x2 clock-setting reason), while the driver booked the
locked time on the SW thermal slowdown counter (14.9 s at 15 s in, 110.0 s at 110 s in) and the SW power
capping counter (105.6 s -> 200.7 s over those 95 s). Before the fix G4 read the recording as "thermal
throttling at 71 °C: SW thermal slowdown +97.6 s (81% of the window)".
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from sparktui.core.config import Config
from sparktui.gotchas import g04_throttling as g4
from sparktui.gotchas.g04_throttling import judge
from sparktui.probes.nvml import NvmlSession, static_info
from sparktui.testing import fake_nvml
from tests.conftest import readings_of
from tests.gotchas.g04.test_rules import gpu, samples

DATA = Path(__file__).resolve().parents[2] / "data" / "h100" / "lgc-lock-2026-12-05.txt"
POWER_CAP, SW_THERMAL = 0x4, 0x20


def _static(fake):
    with fake_nvml.installed(fake):
        return static_info(NvmlSession())


def _verdict(smp, fake=None, cfg=None):
    return judge(readings_of(telemetry={"samples": smp, "static": _static(fake or fake_nvml.h100())}), cfg or Config())


def locked(i, t):
    """The lock as recorded: 600 MHz, 283 W, 49 °C, no reason, both counters +1 s a second."""
    return gpu(temp=49, power=283.0, sm=600, util=100, reasons=0, sw_thermal=int(t * 1e9), power_cap=int(t * 1e9))


def test_the_saved_nvidia_smi_output_shows_the_lock_without_a_reason():
    text = DATA.read_text()
    during = text.split("== locked, near the end")[1].split("==")[0]
    assert "600 MHz, 1980 MHz, 1980 MHz, 1980 MHz, 282.71 W, 700.00 W, 99 %, 49, 0x0000000000000000" in during
    assert "Applications Clocks Setting                    : Not Active" in during
    assert "SW Thermal Slowdown                            : 110032960 us" in during


def test_a_lock_with_no_reason_is_clocks_set_by_hand_not_thermal_throttling():
    v = _verdict(samples(locked))
    assert v.status.value == "warn"
    assert v.summary.startswith(
        "clocks set by hand: SM clock held at 600 MHz of its 1980 MHz maximum under load in 121 of 121 loaded "
        "samples with no clock-event reason active (a lock with `nvidia-smi -lgc`); NVML's counters grew meanwhile "
        "(SW thermal slowdown +600.0 s (100% of the window), SW power capping +600.0 s (100% of the window)) with no "
        "reason active to confirm them"), v.summary
    assert "reset with `sudo nvidia-smi -rgc`" in v.summary and "thermal throttling" not in v.summary
    assert v.fix.startswith(g4.RESET_CLOCKS)


def test_the_recorded_shape_steady_power_capped_then_locked():
    """2-min window as in the recording: 60 s at 1365 MHz power-capped (0x4), then 60 s locked."""
    def fn(i, t):
        if t < 60:
            return gpu(temp=68, power=697.0, sm=1365, util=99, reasons=POWER_CAP, power_cap=int(t * 1e9))
        return gpu(temp=49, power=283.0, sm=600, util=100, reasons=0, sw_thermal=int((t - 60) * 1e9),
                   power_cap=int(t * 1e9))
    cfg = replace(Config(), thermal=replace(Config().thermal, window_min=2.0))
    v = _verdict(samples(fn, seconds=120.0, step=1.0), cfg=cfg)
    assert v.summary.startswith("clocks set by hand: SM clock held at 600 MHz of its 1980 MHz maximum under load in "
                                "61 of 121 loaded samples with no clock-event reason active (a lock with `nvidia-smi "
                                "-lgc`); NVML's counters grew meanwhile (SW thermal slowdown +60.0 s (50% of the window)) "
                                "with no reason active"), v.summary  # the power cap of the steady half was real (0x4)


def test_a_real_thermal_reason_keeps_the_thermal_headline():
    v = _verdict(samples(lambda i, t: gpu(temp=88, power=283.0, sm=600, util=100, reasons=SW_THERMAL,
                                          sw_thermal=int(t * 1e9))))
    assert v.summary.startswith("thermal throttling at 88 °C"), v.summary


def test_a_power_capped_run_at_its_usual_clock_is_not_a_lock():
    v = _verdict(samples(lambda i, t: gpu(temp=68, power=698.0, sm=1365, util=99, reasons=POWER_CAP,
                                          power_cap=int(t * 1e9))))
    assert v.summary.startswith("power capping"), v.summary


def test_a_low_clock_with_no_reason_above_the_share_or_idle_or_in_few_samples_is_not_a_lock():
    assert g4.LOCK_CLOCK_SHARE == 0.6 and g4.LOCK_MIN_SAMPLES == 3
    at = _verdict(samples(lambda i, t: gpu(temp=49, power=283.0, sm=1189, util=100)))  # 60% of 1980 = 1188
    assert not at.summary.startswith("clocks set by hand"), at.summary
    idle = _verdict(samples(lambda i, t: gpu(temp=40, power=80.0, sm=345, util=0, reasons=0x1)))
    assert not idle.summary.startswith("clocks set by hand"), idle.summary
    few = _verdict(samples(lambda i, t: gpu(temp=49, power=283.0, sm=600 if i < 2 else 1980, util=100)))
    assert not few.summary.startswith("clocks set by hand"), few.summary


def test_without_the_maximum_clock_the_rule_stays_silent():
    """GB10 answers NOT_SUPPORTED for the maximum clock: no lock is claimed from a low clock alone."""
    v = _verdict(samples(locked), fake=fake_nvml.gb10())
    assert "SM clock held at" not in v.summary
