"""Issue 24, Seen 7: G4's words agree with themselves, the dashboard, `check` and `explain`; the fix
fits the machine. Built on the real H200 recording (tests/data/h200/README.md: driver 580.159.04,
3.2 min, power capped at the 700 W limit) and the shipped GB10 demo recording."""

from __future__ import annotations

from pathlib import Path

from sparktui.core.config import Config
from sparktui.core.recording import read_recording, readings_from_recording, readings_from_samples
from sparktui.gotchas import g04_throttling as g4
from sparktui.gotchas.g04_throttling import GOTCHA, judge
from tests.conftest import readings_of

H200 = Path(__file__).resolve().parents[2] / "data" / "h200" / "load-matmul-counters.jsonl"
SPARK_WORDS = ("USB-PD", "brick", "Spark")


def _ev(v):
    return {e.what: e.value for e in v.evidence}


def test_a_recording_shorter_than_the_window_is_never_called_full():
    """Seen: "window: 3.2 of 10 min" beside "1 full 10-min windows" (base 5e064fb)."""
    v = judge(readings_from_recording(read_recording(str(H200))), Config())
    ev = _ev(v)
    assert v.status.value == "warn" and v.summary.startswith("power capping: ")
    assert ev["window"] == "3.2 of 10 min, 195 samples"
    assert "full 10-min windows" not in ev["windows judged"]
    assert ev["windows judged"].startswith("none full: 00:03:14 recorded, short of the 10 min a window needs")
    assert "[no full 10-min window: the recording covers 3.2 min, " in v.summary
    assert "part-filled: 3.2 of 10 min" in ev["worst window"]


def _h200_live(seconds: float):
    """The dashboard's readings (window_readings -> readings_from_samples with the trailing window)
    over the first ``seconds`` of the real H200 recording."""
    rec = read_recording(str(H200))
    t0 = rec.samples[0]["t"]  # 20 s idle, then the load (capped at 700 W from its first seconds)
    head = [s for s in rec.samples if s["t"] <= t0 + seconds]
    return readings_from_samples(head, static=rec.header["static"], window_s=600.0, source="live")


def test_the_dashboard_and_explain_agree_on_a_part_filled_window():
    """Seen: the dashboard warned at "49 s of 10 min" while `explain G4` said a window that is not full
    is unknown. Now one rule, said in both: a slowdown already seen is reported at once, marked
    part-filled; nothing counting stays "watching"."""
    v = judge(_h200_live(49.0), Config())
    assert v.status.value == "warn", v.summary
    assert v.summary.endswith("[so far: 49 s of 10 min sampled]"), v.summary
    assert "never gives ok" in GOTCHA.check and "so far: N of 10 min sampled" in GOTCHA.check
    assert "Before the window is full the verdict is unknown" not in GOTCHA.explain()
    # nothing counting in a part-filled window: unknown, never ok (the idle start of the same recording)
    rec = read_recording(str(H200))
    idle = readings_from_samples(rec.samples[:8], static=rec.header["static"], window_s=600.0, source="live")
    w = judge(idle, Config())
    assert w.status.value == "unknown" and w.summary.startswith("watching: 7 s of 10 min sampled"), w.summary


def test_a_full_window_is_not_marked_part_filled():
    from tests.gotchas.g04.test_rules import gpu, samples, verdict

    v = verdict(samples(lambda i, t: gpu(power_cap=int(t) * 100_000_000)))
    assert v.status.value == "warn" and "so far" not in v.summary


def test_a_700_w_data_centre_gpu_gets_no_spark_fix():
    """Seen: the H200 got "use the original power brick", "unplug the power cable" (a Spark's USB-PD)."""
    v = judge(readings_from_recording(read_recording(str(H200))), Config())
    assert v.fix == g4.FIX_OTHER
    assert not any(w in v.fix for w in SPARK_WORDS), v.fix
    assert "sudo nvidia-smi -pl" in v.fix


def test_a_gb10_gets_the_spark_fix():
    demo = Path(g4.__file__).resolve().parents[1] / "data" / "gb10-demo.jsonl"
    v = judge(readings_from_recording(read_recording(str(demo))), Config())
    assert v.fix == g4.FIX_SPARK and "USB-PD" in v.fix and "nvidia-smi -pl" not in v.fix


def test_the_machine_is_told_by_nvml_name_capability_or_dmi_product():
    from tests.gotchas.g04.test_rules import gpu, samples

    smp = samples(lambda i, t: gpu())
    dev = lambda name, cc: {"index": 0, "name": {"value": name}, "compute_capability": {"value": cc}}  # noqa: E731
    cases = [
        ({"static": {"devices": [dev("NVIDIA GB10", [12, 1])]}}, {}, g4.FIX_SPARK),
        ({"static": {"devices": [dev(None, [12, 1])]}}, {}, g4.FIX_SPARK),
        ({"static": {"devices": [dev("NVIDIA H100 80GB HBM3", [9, 0])]}}, {}, g4.FIX_OTHER),
        ({}, {"host": {"dmi_product": "NVIDIA DGX Spark"}}, g4.FIX_SPARK),  # /sys/class/dmi/id/product_name
        ({}, {"host": {"dmi_product": "PowerEdge XE9680"}}, g4.FIX_OTHER),
        ({}, {}, g4.FIX),  # nothing names it: both, each labelled
    ]
    for extra, other, want in cases:
        v = judge(readings_of(telemetry={"samples": smp, **extra}, **other), Config())
        assert v.fix == want, (extra, other)
    assert "On a DGX Spark (GB10):" in g4.FIX and "On a data-centre or workstation GPU:" in g4.FIX


def test_the_power_delivery_pattern_on_a_data_centre_gpu_names_no_usb_pd():
    from tests.gotchas.g04.test_rules import gpu, samples

    smp = samples(lambda i, t: gpu(temp=50, power=30.0, sm=600))
    h100 = {"devices": [{"index": 0, "name": {"value": "NVIDIA H100 80GB HBM3"}, "compute_capability": {"value": [9, 0]}}]}
    v = judge(readings_of(telemetry={"samples": smp, "static": h100}), Config())
    assert v.status.value == "fail" and "power delivery" in v.summary and "USB-PD" not in v.summary, v.summary
    spark = judge(readings_of(telemetry={"samples": smp}), Config())
    assert "USB-PD" in spark.summary
