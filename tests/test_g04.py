"""G4 on recorded sequences: direct evidence first, the power-fault pattern, then the heuristic."""

from __future__ import annotations

from pathlib import Path

from sparktui.core.config import Config
from sparktui.core.recording import read_recording, readings_from_recording
from sparktui.core.telemetry import decode_reasons
from sparktui.gotchas.g04_throttling import judge
from tests.conftest import readings_of

NS = "NOT_SUPPORTED (Not Supported)"
DEMO = Path(__file__).resolve().parents[1] / "src" / "sparktui" / "data" / "gb10-demo.jsonl"


def gpu(temp=70, power=95.0, sm=2405, util=98, reasons=0, thermal_ns=0, power_ns=0, errors=None):
    g = {"index": 0, "temp_c": temp, "power_w": power, "power_limit_w": None, "sm_mhz": sm, "gr_mhz": sm,
         "mem_mhz": None, "util_gpu": util, "util_mem": 0, "reasons_mask": reasons,
         "reasons": decode_reasons(reasons), "thermal_viol_ns": thermal_ns, "power_viol_ns": power_ns,
         "mem_used": None, "mem_total": None, "errors": {"power_limit_w": NS}}
    for k, why in (errors or {}).items():
        g[k] = None
        if k == "reasons_mask":
            g["reasons"] = None
        g["errors"][k] = why
    return g


def seq(minutes, fn, step_s=5.0):
    """Samples every ``step_s`` for ``minutes``; ``fn(t_seconds)`` gives the gpu dict."""
    n = int(minutes * 60 / step_s) + 1
    return [{"t": 1000.0 + i * step_s, "gpus": [fn(i * step_s)], "mem": {}} for i in range(n)]


def verdict(samples, cfg=None):
    return judge(readings_of(telemetry={"samples": samples}), cfg or Config())


def test_plateau_then_throttle_by_the_heuristic():
    # Full power (100 W) while heating up, then power drops to a flat 70 W while temperature sits at 86 °C.
    def fn(t):
        if t < 240:
            return gpu(temp=60 + 26 * t / 240, power=100.0)
        return gpu(temp=86, power=70.0 + (t % 10) / 10)

    v = verdict(seq(10, fn))
    assert v.status.value == "warn"
    assert v.summary.startswith("throttling signature: power flat at 70 W, well under the 140 W rating")
    assert "sits at 86 °C" in v.summary and "NVML reports no slowdown reason" in v.summary


def test_heuristic_applies_when_reasons_are_not_supported():
    def fn(t):
        err = {"reasons_mask": NS, "thermal_viol_ns": NS, "power_viol_ns": NS}
        return gpu(temp=60 + 26 * min(t, 240) / 240, power=100.0 if t < 240 else 70.0, errors=err)

    v = verdict(seq(10, fn))
    assert v.status.value == "warn" and "throttling signature" in v.summary
    assert "NVML reports" not in v.summary
    assert any(e.what == "clock-event reasons" and e.value == f"unavailable: {NS}" for e in v.evidence)


def test_rising_temperature_with_power_near_peak_is_not_yet():
    v = verdict(seq(10, lambda t: gpu(temp=58 + 20 * t / 600, power=100.0 + (t % 15) / 5)))
    assert v.status.value == "ok" and v.summary.startswith("not throttling yet: temperature climbing")


def test_active_thermal_reason_wins_at_once_even_on_a_short_window():
    def fn(t):
        return gpu(temp=84, power=74.0, sm=1950, reasons=0x20 if t >= 20 else 0, thermal_ns=int(max(0, t - 20) * 1e9))

    v = verdict(seq(1, fn))
    assert v.status.value == "warn" and v.summary.startswith("thermal throttling at 84 °C")
    assert "thermal slowdown active in 9 of 13 samples" in v.summary
    assert "thermal violation counter +40.0 s" in v.summary


def test_growing_counter_alone_is_direct_evidence():
    v = verdict(seq(0.5, lambda t: gpu(temp=83, thermal_ns=int(t * 0.5e9))))
    assert v.status.value == "warn" and "thermal violation counter +15.0 s" in v.summary


def test_hardware_slowdown_fails():
    v = verdict(seq(0.5, lambda t: gpu(temp=97, power=60.0, sm=1200, reasons=0x40 | 0x20)))
    assert v.status.value == "fail" and "hw_thermal_slowdown" in v.summary


def test_power_cap_is_reported_as_power_capping():
    v = verdict(seq(0.5, lambda t: gpu(reasons=0x04, power_ns=int(t * 1e9))))
    assert v.status.value == "warn" and v.summary.startswith("power capping: power cap active in 7 of 7 samples")


def test_low_clocks_low_power_under_load_without_thermal_reason_is_a_power_fault():
    v = verdict(seq(1, lambda t: gpu(temp=55, power=28.0, sm=650, util=99)))
    assert v.status.value == "fail"
    assert "clocks pinned at ~650 MHz with ~28 W under load" in v.summary and "power-delivery fault" in v.summary


def test_power_fault_with_unreadable_reasons_is_only_a_warning():
    err = {"reasons_mask": NS}
    v = verdict(seq(1, lambda t: gpu(temp=55, power=28.0, sm=650, util=99, errors=err)))
    assert v.status.value == "warn" and "reasons unreadable, temperature normal" in v.summary


def test_before_the_window_is_full_it_says_watching():
    v = verdict(seq(2, lambda t: gpu(temp=70, power=95.0)))
    assert v.status.value == "unknown"
    assert v.summary.startswith("watching: 2.0 of 10 min sampled (no slowdown reason so far)")
    cfg = Config().with_overrides(thermal={"window_min": 2.0})
    assert verdict(seq(2, lambda t: gpu(temp=70, power=95.0)), cfg).status.value == "ok"


def test_missing_fields_on_a_full_window_are_unknown_with_the_reason():
    err = {"temp_c": NS, "reasons_mask": NS, "thermal_viol_ns": NS, "power_viol_ns": NS}
    v = verdict(seq(10, lambda t: gpu(power=95.0, errors=err)))
    assert v.status.value == "unknown"
    assert v.summary == f"cannot apply the power/temperature test: temperature unavailable ({NS})"


def test_idle_window_is_ok_without_claiming_a_load():
    v = verdict(seq(10, lambda t: gpu(temp=42, power=5.0, sm=208, util=0, reasons=0x1)))
    assert v.status.value == "ok" and v.summary.startswith("no sustained load in the last 10 min")


def test_no_telemetry_or_no_gpu_is_unknown():
    assert judge(readings_of(telemetry=None), Config()).status.value == "unknown"
    s = [{"t": 1.0, "gpus": [], "mem": {}, "errors": {"nvml": "nvmlInit failed: DRIVER_NOT_LOADED"}}]
    v = verdict(s)
    assert v.status.value == "unknown" and "DRIVER_NOT_LOADED" in v.summary


def test_only_the_rolling_window_counts():
    # Throttled 20 minutes ago, clean for the last 10: the old counter growth is outside the window.
    def fn(t):
        return gpu(temp=75, power=95.0, thermal_ns=int(min(t, 300) * 1e9))

    v = verdict(seq(25, fn))
    assert v.status.value == "ok" and v.summary.startswith("no throttling")


def test_demo_recording_shows_thermal_throttling():
    rec = read_recording(DEMO)
    v = judge(readings_from_recording(rec), Config())
    assert v.status.value == "warn" and v.summary.startswith("thermal throttling at 8")
    assert any(e.what == "rated power" and "NOT_SUPPORTED" in e.value for e in v.evidence)
