"""G4 on a machine with several GPUs (the lent H200 machines have up to eight): every GPU is judged,
the worst leads and is named, and a GPU without timed samples does not stop the others being judged.
A mutation run (2026-12-05) found these paths unpinned: `continue` -> `break` after a GPU without
timed samples, and the worst-first ranking dropped, both passed every test."""

from __future__ import annotations

from sparktui.core.verdict import Status
from tests.test_g04_rules import gpu, linear, samples, verdict


def two_gpus(first, second, seconds=600.0, step=5.0):
    """GPU 0's and GPU 1's records per sample: ``first(i, t)``, ``second(i, t)``."""
    smp = samples(lambda i, t: first(i, t), seconds, step)
    for i, s in enumerate(smp):
        s["gpus"].append(second(i, i * step))
    return smp


def test_the_worst_gpu_leads_and_is_named_whichever_index_it_has():
    hot = lambda i, t: gpu(index=1, sw_thermal=linear(60.0)(t))  # 10% of the window throttled for heat
    cool = lambda i, t: gpu(index=0)
    v = verdict(two_gpus(cool, hot))
    assert v.status is Status.WARN and v.summary.startswith("GPU 1: "), v.summary
    v = verdict(two_gpus(lambda i, t: gpu(index=0, sw_thermal=linear(60.0)(t)), lambda i, t: gpu(index=1)))
    assert v.status is Status.WARN and v.summary.startswith("GPU 0: "), v.summary
    whats = [e.what for e in v.evidence]
    assert any(w.startswith("GPU 0 ") for w in whats) and any(w.startswith("GPU 1 ") for w in whats)


def test_a_gpu_without_timed_samples_does_not_stop_the_next_being_judged():
    smp = samples(lambda i, t: gpu(index=1, sw_thermal=linear(60.0)(t)))
    smp.insert(0, {"t": None, "gpus": [gpu(index=0)], "mem": {}})  # GPU 0 only in an untimed sample
    v = verdict(smp)
    assert v.status is Status.WARN and v.summary.startswith("GPU 1: "), v.summary
    rows = {e.what: e.value for e in v.evidence}
    assert rows["GPU 0 GPU telemetry"] == "unavailable: no timed samples"
    assert [e.source for e in v.evidence if e.what == "GPU 0 GPU telemetry"] == ["telemetry"]


def test_a_gpu_index_that_is_no_integer_is_its_position():
    from sparktui.gotchas.g04_throttling import _index
    assert _index({"index": "1"}, 3) == 3 and _index({"index": 1.0}, 2) == 2 and _index({}, 4) == 4
    assert _index({"index": 5}, 0) == 5 and _index({"index": True}, 6) == 6


def test_one_gpu_is_not_prefixed():
    v = verdict(samples(lambda i, t: gpu(index=0, sw_thermal=linear(60.0)(t))))
    assert v.status is Status.WARN and not v.summary.startswith("GPU ")
