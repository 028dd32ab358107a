"""G5's rules at their edges, with GB10 figures from FACTS.md / FIELD-FACTS.md (read kernel 231-253 GB/s,
copy-style 180-220, spec 273) and the H200 figures measured on a real H200 (copy 4292, read 4391 GB/s;
spec 4800, tests/data/h200/).

A figure above the spec is a measurement error (a cache-resident buffer or bad timing), never a rate:
unknown, fresh or kept. Both conventions are bounded by the spec: the copy figure counts bytes read +
written, and the bus cannot carry more than the spec in both directions together.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g05_bandwidth as g5
from sparktui.gotchas.g05_bandwidth import GIB, MIN_BUFFER, gate, judge_result
from tests.conftest import readings_of

GB10 = {"status": "ok", "device": "NVIDIA GB10", "copy_gbs": 201.3, "read_gbs": 240.2, "buffer_bytes": 4 * GIB,
        "iterations": 12, "repeats": 5, "spread_pct": 1.2, "measured_at": 1000.0}
H200 = {**GB10, "device": "NVIDIA H200", "copy_gbs": 4292.0, "read_gbs": 4391.0}


def fresh(**over):
    return judge_result({**GB10, **over}, 1000.0, fresh=True)


def kept(res, now=1000.0 + 600):
    r = readings_of(bandwidth_last=res)
    r.add(replace(r.get_reading("bandwidth_last"), started_at=now, source="/state/bandwidth.json"))
    return g5.judge(r, Config())


# --- realistic figures -----------------------------------------------------------------------------


@pytest.mark.parametrize("copy,read", [(180.0, 231.0), (201.3, 240.2), (217.0, 253.0), (220.0, 234.0)])
def test_gb10_figures_seen_in_the_field_are_ok_without_a_note(copy, read):
    v = fresh(copy_gbs=copy, read_gbs=read)
    assert v.status is Status.OK, v.summary
    assert "budget from this, not the spec" in v.summary and "spec 273" in v.summary
    assert "above the usual" not in v.summary


def test_real_h200_figures_are_ok_against_the_h200_row():
    v = judge_result(H200, 1000.0, fresh=True)
    assert v.status is Status.OK, v.summary
    assert "4292 GB/s copy, 4391 GB/s read" in v.summary and "3840-4420 GB/s copy on H200" in v.summary
    assert "above the usual" not in v.summary


# --- the spec: above it is a measurement error -----------------------------------------------------


@pytest.mark.parametrize("copy,status", [(272.9, Status.OK), (273.0, Status.OK), (273.1, Status.UNKNOWN),
                                         (410.0, Status.UNKNOWN)])
def test_gb10_copy_figure_around_the_spec(copy, status):
    v = fresh(copy_gbs=copy, read_gbs=None)
    assert v.status is status, v.summary
    if status is Status.UNKNOWN:
        assert v.summary.startswith("measurement error: copy")
        assert "outside what GB10 (LPDDR5x, unified) can produce (spec 273 GB/s)" in v.summary
        assert "cache-resident buffer or bad timing" in v.summary and "budget from this" not in v.summary
        (lim,) = [e for e in v.evidence if e.what == "physical limit"]
        assert "273 GB/s spec" in lim.value
        assert "sparktui bandwidth" in v.fix
    else:
        assert "copy above the usual 180-220, still under the spec" in v.summary


@pytest.mark.parametrize("read,status", [(272.9, Status.OK), (273.1, Status.UNKNOWN)])
def test_gb10_read_figure_around_the_spec(read, status):
    v = fresh(copy_gbs=201.3, read_gbs=read)
    assert v.status is status, v.summary
    if status is Status.UNKNOWN:
        assert "read 273.1 GB/s" in v.summary and "copy 201" not in v.summary.split("is outside")[0]
    else:
        assert "read above the usual 231-253, still under the spec" in v.summary


def test_both_figures_over_spec_are_both_named():
    v = fresh(copy_gbs=300.0, read_gbs=520.0)
    assert v.status is Status.UNKNOWN
    assert "copy 300.0 GB/s (bytes read + written) and read 520.0 GB/s is outside" in v.summary


@pytest.mark.parametrize("copy,status", [(4799.9, Status.OK), (4800.1, Status.UNKNOWN)])
def test_h200_copy_figure_around_its_spec(copy, status):
    v = judge_result({**H200, "copy_gbs": copy}, 1000.0, fresh=True)
    assert v.status is status, v.summary
    if status is Status.UNKNOWN:
        assert "outside what H200 (HBM3e) can produce (spec 4800 GB/s)" in v.summary


def test_over_spec_wins_over_far_below():
    """A copy far under the range beside a read above the spec: the run is a measurement error."""
    v = fresh(copy_gbs=100.0, read_gbs=300.0)
    assert v.status is Status.UNKNOWN and "measurement error" in v.summary


def test_kept_result_above_the_spec_is_unknown_not_a_skip_with_a_figure():
    v = kept({**GB10, "copy_gbs": 380.0})
    assert v.status is Status.UNKNOWN, v.summary
    assert v.summary.startswith("last result: measurement error: copy 380.0 GB/s")
    assert any(e.what == "kept file" and e.value == "/state/bandwidth.json" for e in v.evidence)
    assert any(e.what == "measured" and e.value == "10 min ago" for e in v.evidence)


def test_kept_result_under_the_spec_is_still_a_skip():
    v = kept({**GB10, "copy_gbs": 272.9})
    assert v.status is Status.SKIP and "last measured 273 GB/s copy" in v.summary


def test_fresh_reading_through_judge_above_the_spec_is_unknown():
    r = readings_of(bandwidth={**GB10, "copy_gbs": 274.0})
    assert g5.judge(r, Config()).status is Status.UNKNOWN


# --- the range edges -------------------------------------------------------------------------------


@pytest.mark.parametrize("copy,noted", [(220.0, False), (220.1, True)])
def test_gb10_copy_range_top(copy, noted):
    v = fresh(copy_gbs=copy)
    assert v.status is Status.OK
    assert ("copy above the usual 180-220" in v.summary) is noted


@pytest.mark.parametrize("read,noted", [(253.0, False), (253.1, True)])
def test_gb10_read_range_top(read, noted):
    v = fresh(read_gbs=read)
    assert v.status is Status.OK
    assert ("read above the usual 231-253" in v.summary) is noted


@pytest.mark.parametrize("read,noted", [(4560.0, False), (4560.5, True)])
def test_h200_read_range_top(read, noted):
    v = judge_result({**H200, "read_gbs": read}, 1000.0, fresh=True)
    assert v.status is Status.OK and ("read above the usual 4080-4560" in v.summary) is noted


# --- WARN_BELOW: 0.8 of the low end of the copy range (GB10: 144 GB/s, H200: 3072 GB/s) -------------


@pytest.mark.parametrize("copy,status", [(144.0, Status.OK), (143.9, Status.WARN), (95.0, Status.WARN)])
def test_gb10_far_below_edge(copy, status):
    v = fresh(copy_gbs=copy)
    assert v.status is status, v.summary
    if status is Status.WARN:
        assert "far below" in v.summary and "under 144" in v.summary and v.fix == g5.FIX


@pytest.mark.parametrize("copy,status", [(3072.0, Status.OK), (3071.9, Status.WARN)])
def test_h200_far_below_edge(copy, status):
    assert judge_result({**H200, "copy_gbs": copy}, 1000.0, fresh=True).status is status


def test_low_read_beside_a_good_copy_is_not_judged_low():
    """Only the copy figure is judged low (budgets come from it); the read figure is shown."""
    v = fresh(copy_gbs=201.3, read_gbs=150.0)
    assert v.status is Status.OK


@pytest.mark.parametrize("copy,low", [(144.0, False), (143.9, True)])
def test_kept_far_below_edge(copy, low):
    v = kept({**GB10, "copy_gbs": copy})
    assert v.status is Status.SKIP
    assert ("far below range" in v.summary) is low and (v.fix == g5.FIX) is low


# --- a device sparktui has no spec for ------------------------------------------------------------


def test_device_without_a_spec_is_ok_and_says_nothing_was_checked_against_the_hardware():
    """A figure measured by CUDA events on the device itself; refusing an ok on every device not in
    the table would make G5 unknown on healthy machines. The summary names the gap instead."""
    v = fresh(device="Tesla T4", copy_gbs=250.0, read_gbs=280.0)
    assert v.status is Status.OK
    assert "not in sparktui's table: no expected range and no spec" in v.summary
    assert "not checked against what the device can do" in v.summary
    (e,) = [e for e in v.evidence if e.what == "expected range"]
    assert "no spec known" in e.value
    assert not any(e.what == "physical limit" for e in v.evidence)


def test_missing_device_name_is_also_unchecked():
    v = fresh(device=None)
    assert v.status is Status.OK and "this device is not in sparktui's table" in v.summary


# --- validation bounds ----------------------------------------------------------------------------


@pytest.mark.parametrize("field,value,bad", [
    ("copy_gbs", 0.0, True), ("copy_gbs", 0.1, False),
    ("read_gbs", 0.0, True), ("read_gbs", 0.1, False),
    ("buffer_bytes", 0, False), ("buffer_bytes", -1, True),
    ("iterations", 0, False), ("iterations", -1, True),
    ("repeats", 0, False), ("repeats", -1, True),
    ("spread_pct", 0.0, False), ("spread_pct", -0.1, True),
    ("measured_at", 0.0, True), ("measured_at", 0.5, False),
])
def test_result_problem_bounds(field, value, bad):
    problem = g5.result_problem({**GB10, field: value})
    assert (problem is not None) is bad, problem
    if bad:
        assert problem.startswith(f"{field} is ")


def test_unusable_fresh_result_is_unknown_without_the_remeasure_fix():
    v = fresh(copy_gbs=0.0)
    assert v.status is Status.UNKNOWN and v.summary.startswith("bandwidth result unusable: copy_gbs is 0.0")
    assert v.fix == ""


@pytest.mark.parametrize("res,status", [
    ({"status": "refused", "reason": "not confirmed"}, Status.SKIP),
    ({"status": "unknown", "reason": "torch not importable", "hint": "use --python"}, Status.UNKNOWN),
    ({"status": "error", "error": "boom"}, Status.UNKNOWN),
])
def test_not_measured(res, status):
    v = judge_result(res, None, fresh=True)
    assert v.status is status and v.summary.startswith("not measured: ")
    if "hint" in res:
        assert v.summary.endswith("; use --python") and v.fix == "use --python"


# --- ages and the clock ---------------------------------------------------------------------------


@pytest.mark.parametrize("seconds,text", [
    (119, "119 s"), (120, "2 min"), (7199, "120 min"), (7200, "2.0 h"), (172799, "48.0 h"), (172800, "2.0 days"),
])
def test_age_words_at_each_step(seconds, text):
    assert g5._age(seconds) == text


@pytest.mark.parametrize("ahead,future", [(2.0, False), (2.5, True)])
def test_future_slack(ahead, future):
    v = kept({**GB10, "measured_at": 1000.0 + ahead}, now=1000.0)
    assert v.status is Status.SKIP
    assert ("in the future" in v.summary) is future
    if not future:
        assert "(0 s ago)" in v.summary


# --- the gate's thresholds ------------------------------------------------------------------------


def test_gate_at_exactly_three_times_the_buffer_keeps_it():
    d = gate(4 * GIB, 12 * GIB, [], None, force=False)
    assert d.allowed and d.buffer_bytes == 4 * GIB and d.reasons == ()


def test_gate_just_under_three_times_scales_down_to_a_256_mib_step():
    d = gate(4 * GIB, 12 * GIB - 1, [], None, force=False)
    assert d.allowed and d.buffer_bytes == 4 * GIB - (256 << 20) and "scaled down" in d.reasons[0]


def test_gate_at_the_minimum_buffer_allows_it_and_just_under_refuses():
    at = gate(4 * GIB, 3 * MIN_BUFFER, [], None, force=False)
    assert at.allowed and at.buffer_bytes == MIN_BUFFER
    under = gate(4 * GIB, 3 * MIN_BUFFER - 1, [], None, force=True)
    assert not under.allowed and "not overridable" in under.reasons[0]


def test_gate_ignores_a_process_holding_no_gpu_memory():
    d = gate(4 * GIB, 100 * GIB, [{"pid": 5, "name": "bash", "kind": "other", "gpu_memory_bytes": 0}], None, force=False)
    assert d.allowed and not d.forced
