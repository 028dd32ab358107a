"""G4 on recorded sequences: direct evidence first, the power-fault pattern, then the heuristic.
Boundary tests of every threshold are in tests/gotchas/g04/test_rules.py."""

from __future__ import annotations

import random

from sparktui.core.config import Config
from sparktui.core.recording import read_recording, readings_from_recording
from sparktui.core.telemetry import decode_reasons, sample_window
from sparktui.gotchas.g04_throttling import judge
from tests.conftest import readings_of
from tests.gotchas.builders import unread, DEMO, NS


def gpu(temp=70, power=95.0, sm=2405, util=98, reasons=0, thermal_ns=0, power_ns=0, errors=None, hw_ns=0, brake_ns=0):
    g = {"index": 0, "temp_c": temp, "power_w": power, "power_limit_w": None, "sm_mhz": sm, "gr_mhz": sm,
         "mem_mhz": None, "util_gpu": util, "util_mem": 0, "reasons_mask": reasons,
         "reasons": decode_reasons(reasons), "sw_thermal_ns": thermal_ns, "sw_power_cap_ns": power_ns,
         "sync_boost_ns": 0, "hw_thermal_ns": hw_ns, "hw_power_brake_ns": brake_ns,
         "mem_used": None, "mem_total": None, "errors": {"power_limit_w": NS}}
    return unread(g, errors)


def seq(minutes, fn, step_s=5.0):
    """Samples every ``step_s`` for ``minutes``; ``fn(t_seconds)`` gives the gpu dict."""
    n = int(minutes * 60 / step_s) + 1
    return [{"t": 1000.0 + i * step_s, "gpus": [fn(i * step_s)], "mem": {}} for i in range(n)]


def verdict(samples, cfg=None):
    return judge(readings_of(telemetry={"samples": samples}), cfg or Config())


COUNTERS = {"sw_thermal_ns": NS, "sw_power_cap_ns": NS, "sync_boost_ns": NS, "hw_thermal_ns": NS,
            "hw_power_brake_ns": NS}
UNREADABLE = {"reasons_mask": NS, **COUNTERS}


def test_without_reasons_and_counters_a_clock_down_while_hot_is_the_throttling_signature():
    # Full clock while heating up, then the SM clock sags to ~1950 MHz under full load at 86 °C.
    def fn(t):
        if t < 240:
            return gpu(temp=60 + 26 * t / 240, power=100.0, errors=UNREADABLE)
        return gpu(temp=86, power=70.0 + (t % 10) / 10, sm=1950 + int(t % 3), errors=UNREADABLE)

    v = verdict(seq(10, fn))
    assert v.status.value == "warn"
    assert v.summary.startswith("throttling signature (heuristic: clock-event reasons and counters unreadable): "
                                "SM clock down to ~1951 MHz under load from 2405 MHz"), v.summary
    assert "sits at 86 °C" in v.summary


def test_without_reasons_and_counters_power_falling_at_a_steady_clock_is_not_a_warning():
    """Issue 12, class 5: the old heuristic warned on power flat under the rating while hot. A GB10
    serving sits at ~80 W and 83-85 °C; without NVML's reasons and counters, temperature (and power)
    alone is never a warning. The SM clock held at 2405 MHz says the clocks were not cut."""
    def fn(t):
        if t < 240:
            return gpu(temp=60 + 26 * t / 240, power=100.0, errors=UNREADABLE)
        return gpu(temp=86, power=70.0 + (t % 10) / 10, errors=UNREADABLE)

    v = verdict(seq(10, fn))
    assert v.status.value == "ok"
    assert v.summary.startswith("no sign of throttling (heuristic: clock-event reasons and counters unreadable): "
                                "SM clock held at ~2405 MHz under load at 86 °C")
    assert "a slowdown between samples cannot be seen" in v.summary


def test_normal_gb10_plateau_with_nvml_reporting_nothing_is_ok():
    """docs/reference/FACTS.md: ~80 W under an LLM load and an 83-85 °C plateau are normal. With the reasons and the
    counters readable and clean over the whole window, that is ok."""
    v = verdict(seq(10, lambda t: gpu(temp=85, power=80.0, thermal_ns=903_158_000, power_ns=165_687_000)))
    assert v.status.value == "ok", v.summary
    assert v.summary.startswith("no throttling: 80 W at 85 °C, the normal GB10 plateau under load")
    assert "NVML reports no sustained slowdown over 10 min (no slowdown reason in 121 samples; " \
           "SW thermal slowdown +0.0 s)" in v.summary
    ev = {e.what: e.value for e in v.evidence}
    assert ev["clock-event reasons"] == "none"
    assert ev["SW thermal slowdown (NVML field 269)"] == "+0.0 s (0.0% of the window)"
    assert ev["HW power brake (NVML field 271)"].startswith("+0.0 s")


def test_normal_plateau_with_part_of_nvml_unreadable_is_ok_naming_the_gap():
    """Issue 12, class 5: reasons or counters unreadable on GB10's normal plateau is never a warning.
    What was not seen is said."""
    v = verdict(seq(10, lambda t: gpu(temp=85, power=80.0, errors=COUNTERS)))
    assert v.status.value == "ok", v.summary
    assert "no slowdown reason in 121 samples; thermal counters unreadable (NOT_SUPPORTED (Not Supported)): " \
           "a slowdown between samples would be missed" in v.summary
    v = verdict(seq(10, lambda t: gpu(temp=85, power=80.0, errors={"reasons_mask": NS})))
    assert v.status.value == "ok", v.summary
    assert f"clock-event reasons unreadable ({NS}): judged on the counters; SW thermal slowdown +0.0 s" in v.summary
    v = verdict(seq(10, lambda t: gpu(temp=85, power=80.0, errors=UNREADABLE)))
    assert v.status.value == "ok" and v.summary.startswith("no sign of throttling (heuristic:"), v.summary


def test_direct_evidence_still_wins_on_a_normal_looking_plateau():
    v = verdict(seq(10, lambda t: gpu(temp=85, power=80.0, thermal_ns=int(t * 0.2e9))))
    assert v.status.value == "warn" and v.summary.startswith("thermal throttling at 85 °C")


def test_heuristic_applies_only_when_reasons_and_counters_are_not_supported():
    def fn(t):
        return gpu(temp=60 + 26 * min(t, 240) / 240, power=100.0 if t < 240 else 70.0,
                   sm=2405 if t < 240 else 1900, errors=UNREADABLE)

    v = verdict(seq(10, fn))
    assert v.status.value == "warn" and "throttling signature" in v.summary
    assert "NVML reports" not in v.summary
    assert any(e.what == "clock-event reasons" and e.value == f"unavailable: {NS}" for e in v.evidence)
    assert any(e.what == "SW thermal slowdown (NVML field 269)" and e.value == f"unavailable: {NS}" for e in v.evidence)


def test_rising_temperature_with_power_near_peak_is_not_yet():
    v = verdict(seq(10, lambda t: gpu(temp=58 + 20 * t / 600, power=100.0 + (t % 15) / 5)))
    assert v.status.value == "ok" and v.summary.startswith("not throttling yet: temperature climbing")


def test_active_thermal_reason_wins_at_once_even_on_a_short_window():
    def fn(t):
        return gpu(temp=84, power=74.0, sm=1950, reasons=0x20 if t >= 20 else 0, thermal_ns=int(max(0, t - 20) * 1e9))

    v = verdict(seq(1, fn))
    assert v.status.value == "warn" and v.summary.startswith("thermal throttling at 84 °C")
    assert "thermal slowdown active in 9 of 13 samples" in v.summary
    assert "SW thermal slowdown +40.0 s (67% of the window)" in v.summary


def test_growing_counter_alone_is_direct_evidence():
    v = verdict(seq(0.5, lambda t: gpu(temp=83, thermal_ns=int(t * 0.5e9))))
    assert v.status.value == "warn" and "SW thermal slowdown +15.0 s (50% of the window)" in v.summary


def test_the_gb10_sample_from_field_facts_is_not_a_headline():
    """docs/reference/FIELD-FACTS.md: a GB10 at 81 °C, every reason "Not Active", SW thermal slowdown 903158 us in total.
    Under a second of slowdown in ten minutes is named, not headlined."""
    v = verdict(seq(10, lambda t: gpu(temp=81, power=80.0, thermal_ns=int(t / 600 * 903_158_000))))
    assert v.status.value == "ok", v.summary
    assert "SW thermal slowdown +0.9 s (0.2%, under the 1.0% that counts)" in v.summary


def test_ollama_scale_slowdown_is_throttling():
    """docs/reference/FIELD-FACTS.md: 173 s of SW thermal slowdown under an Ollama load (ollama #13552)."""
    v = verdict(seq(10, lambda t: gpu(temp=85, power=78.0, thermal_ns=int(t / 600 * 173e9))))
    assert v.status.value == "warn" and "SW thermal slowdown +173.0 s (29% of the window)" in v.summary


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


def test_power_fault_is_named_even_with_a_power_reason_active():
    """A failed USB-PD negotiation holds the GPU to a low power budget, so NVML may well report a power
    reason too; only a thermal reason rules the fault out (docs/reference/FACTS.md)."""
    for reasons in (0x04, 0x80):  # sw_power_cap, hw_power_brake_slowdown
        v = verdict(seq(1, lambda t, r=reasons: gpu(temp=55, power=28.0, sm=650, util=99, reasons=r, power_ns=int(t * 1e9))))
        assert v.status.value == "fail", v.summary
        assert "clocks pinned at ~650 MHz with ~28 W under load" in v.summary
        assert "USB-PD" in v.summary and "full power cycle" in v.summary
        assert decode_reasons(reasons)[0] in v.summary


def test_a_thermal_reason_rules_the_power_fault_out():
    v = verdict(seq(1, lambda t: gpu(temp=90, power=28.0, sm=650, util=99, reasons=0x20 | 0x04)))
    assert v.status.value == "warn" and v.summary.startswith("thermal throttling at 90 °C")
    v = verdict(seq(1, lambda t: gpu(temp=90, power=28.0, sm=650, util=99, thermal_ns=int(t * 1e9))))
    assert v.status.value == "warn" and "power-delivery" not in v.summary


def test_power_fault_with_reasons_and_counters_unreadable_is_only_a_warning():
    v = verdict(seq(1, lambda t: gpu(temp=55, power=28.0, sm=650, util=99, errors=UNREADABLE)))
    assert v.status.value == "warn" and "reasons and counters unreadable, temperature normal" in v.summary
    # the counters alone say there was no heat: the fault stands
    v = verdict(seq(1, lambda t: gpu(temp=55, power=28.0, sm=650, util=99, errors={"reasons_mask": NS})))
    assert v.status.value == "fail" and "power-delivery fault" in v.summary


def test_before_the_window_is_full_it_says_watching():
    v = verdict(seq(2, lambda t: gpu(temp=70, power=95.0)))
    assert v.status.value == "unknown"
    assert v.summary.startswith("watching: 2.0 of 10 min sampled (no slowdown reason so far)")
    cfg = Config().with_overrides(thermal={"window_min": 2.0})
    assert verdict(seq(2, lambda t: gpu(temp=70, power=95.0)), cfg).status.value == "ok"


def per_second(times, g=None):
    g = g or gpu(temp=70, power=95.0)
    return [{"t": t, "gpus": [g], "mem": {}} for t in times]


def test_a_window_of_one_second_samples_is_full_at_its_boundary():
    """601 samples over exactly 600.000 s, or the same with the last one 1 ms late (the window then
    starts at the second sample: 600 samples over 599.001 s): both are a full 10 minutes."""
    exact = per_second([1000.0 + i for i in range(601)])
    assert verdict(exact).status.value == "ok"
    late = exact[:-1] + per_second([1600.001])
    v = verdict(late)
    assert v.status.value == "ok", v.summary
    short = verdict(exact[:599])  # 598 s: a sample short, and not rounded up to "10.0 of 10"
    assert short.status.value == "unknown" and short.summary.startswith("watching: 9.9 of 10 min")


def test_the_verdict_does_not_flip_with_sampling_jitter():
    # A 1 s sampler with +-20 ms jitter and ms-rounded timestamps, judged every few seconds on the
    # dashboard's trailing 10 minutes: ok every time, never "watching".
    rnd, t, times = random.Random(4), 1000.0, []
    for _ in range(900):
        times.append(round(t, 3))
        t += 1.0 + rnd.uniform(-0.02, 0.02)
    samples = per_second(times)
    seen = {verdict(sample_window(samples[:k], 600.0)).summary.split(":")[0] for k in range(605, 901, 5)}
    assert seen == {"no throttling"}


def test_a_short_check_window_says_seconds_and_whether_the_counters_were_read_twice():
    samples = per_second([1000.0, 1001.0, 1002.0])
    v = verdict(samples)
    assert v.summary.startswith("watching: 2 s of 10 min sampled")
    ev = {e.what: e.value for e in v.evidence}
    assert ev["window"] == "2 s of 10 min, 3 samples"
    assert ev["SW thermal slowdown (NVML field 269)"] == "unavailable: read once: cannot tell growth"
    # gather() says when it read them (first and last sample): two readings, growth is known
    data = {"samples": samples, "counters_read_t": [1000.0, 1002.0]}
    ev = {e.what: e.value for e in judge(readings_of(telemetry=data), Config()).evidence}
    assert ev["SW thermal slowdown (NVML field 269)"] == "+0.0 s (0.0% of the window)"


def test_missing_fields_on_a_full_window_are_unknown_with_the_reason():
    v = verdict(seq(10, lambda t: gpu(power=95.0, errors={"temp_c": NS, **UNREADABLE})))
    assert v.status.value == "unknown"
    assert v.summary == (f"cannot tell (heuristic: clock-event reasons and counters unreadable): temperature "
                         f"unavailable ({NS})")
    v = verdict(seq(10, lambda t: gpu(temp=85, power=80.0, errors={"sm_mhz": NS, **UNREADABLE})))
    assert v.status.value == "unknown"
    assert v.summary.startswith(f"cannot tell (heuristic: clock-event reasons and counters unreadable): SM clock "
                                f"under load unavailable ({NS}); temperature alone says nothing")


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


def test_empty_gpu_records_are_unknown_never_no_load():
    """Audit: samples of `"gpus": [{}]` read as "ok: no sustained load" while every evidence line
    said unavailable. No utilization and no power draw seen is no reading of the load at all."""
    v = verdict(seq(10, lambda t: {}))
    assert v.status.value == "unknown", v.summary
    assert "GPU load unknown" in v.summary and "not in the samples" in v.summary
    ev = {e.what: e.value for e in v.evidence}
    assert all(str(ev[k]).startswith("unavailable") for k in ("temperature", "power draw", "SM clock"))


def test_unreadable_utilization_and_power_is_unknown_with_the_reason():
    err = {"util_gpu": NS, "power_w": NS, "temp_c": NS, "sm_mhz": NS, **UNREADABLE}
    v = verdict(seq(10, lambda t: gpu(errors=err)))
    assert v.status.value == "unknown" and NS in v.summary
