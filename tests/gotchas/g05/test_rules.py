"""G5's rules at their edges, with GB10 figures from docs/reference/FACTS.md / docs/reference/FIELD-FACTS.md (read kernel 231-253 GB/s,
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
from tests.gotchas.builders import rows

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


# --- whole verdicts: the evidence is the product, so it is pinned too --------------------------------

FACTS_SRC = "public GB10 reports: read kernel 231-253 GB/s (antirez/ds4 #773); copy-style kernels 180-217 GB/s; spec 273"
EV_FIGURES = [
    ("device", "torch.cuda (target)", "NVIDIA GB10"),
    ("copy bandwidth in GB/s (bytes read + written per s)", "CUDA events over a device copy loop", 201.3),
    ("read-only bandwidth in GB/s", "CUDA events over a reduction", 240.2),
    ("buffer / iterations / repeats", "probe", "4.00 GiB / 12 / 5"),
    ("spread across repeats", "probe", "1.2%"),
]


def test_fresh_gb10_verdict_whole():
    r = readings_of(bandwidth={**GB10, "source": "torch.cuda (target)"})
    r.add(replace(r.get_reading("bandwidth"), started_at=1005.0))  # "now" of a fresh result: when it ran
    v = g5.judge(r, Config())
    assert v.id == "G5" and v.status is Status.OK and v.fix == "" and v.details == ()
    assert v.summary == ("measured 201 GB/s copy, 240 GB/s read; budget from this, not the spec (expected 180-220 GB/s "
                         "copy on GB10 (LPDDR5x, unified) (spec 273))")
    assert rows(v) == EV_FIGURES + [("measured", "this run", "5 s ago"),
                                    ("expected range", FACTS_SRC, "copy 180-220 GB/s, read 231-253 GB/s")]


def test_kept_over_spec_verdict_whole():
    r = readings_of(bandwidth_last={**GB10, "copy_gbs": 380.0, "source": "torch.cuda (target)"})
    r.add(replace(r.get_reading("bandwidth_last"), started_at=1000.0 + 7200, source="/s/bandwidth.json"))
    v = g5.judge(r, Config())
    assert v.id == "G5" and v.status is Status.UNKNOWN and v.fix == g5.SUSPECT_FIX
    assert v.summary == ("last result: measurement error: copy 380.0 GB/s (bytes read + written) is outside what GB10 "
                         "(LPDDR5x, unified) can produce (spec 273 GB/s); likely a cache-resident buffer or bad timing, "
                         "not a rate to budget from (380 GB/s copy, 240 GB/s read)")
    assert rows(v) == [EV_FIGURES[0], (EV_FIGURES[1][0], EV_FIGURES[1][1], 380.0)] + EV_FIGURES[2:] + [
        ("measured", "kept result", "2.0 h ago"),
        ("physical limit", FACTS_SRC, "273 GB/s spec on GB10 (LPDDR5x, unified): no figure can exceed it"),
        ("kept file", "state dir", "/s/bandwidth.json")]


def test_kept_in_range_has_no_kept_file_row_and_no_fix():
    r = readings_of(bandwidth_last=GB10)
    r.add(replace(r.get_reading("bandwidth_last"), started_at=1000.0 + 3 * 86400, source="/s/bandwidth.json"))
    v = g5.judge(r, Config())
    assert v.status is Status.SKIP and v.fix == ""
    assert v.summary == "intrusive, not rerun; last measured 201 GB/s copy, 240 GB/s read (3.0 days ago)"
    assert not any(e.what == "kept file" for e in v.evidence)


def test_kept_result_without_a_time_has_no_age():
    r = readings_of(bandwidth_last={k: v for k, v in GB10.items() if k != "measured_at"})
    v = g5.judge(r, Config())
    assert v.summary == "intrusive, not rerun; last measured 201 GB/s copy, 240 GB/s read"
    assert not any(e.what == "measured" for e in v.evidence)


def test_kept_result_with_no_reading_time_has_no_age():
    r = readings_of(bandwidth_last=GB10)
    r.add(replace(r.get_reading("bandwidth_last"), started_at=0.0))
    assert not any(e.what == "measured" for e in g5.judge(r, Config()).evidence)


def test_minimal_result_evidence():
    v = judge_result({"status": "ok", "device": "NVIDIA GB10", "copy_gbs": 201.3}, None, fresh=True)
    assert rows(v)[:3] == [("device", "torch.cuda", "NVIDIA GB10"),
                           ("copy bandwidth in GB/s (bytes read + written per s)", "CUDA events over a device copy loop", 201.3),
                           ("buffer / iterations / repeats", "probe", "? / None / None")]
    assert v.summary.startswith("measured 201 GB/s copy; budget")


def test_unknown_device_row():
    v = fresh(device="Tesla T4")
    assert rows(v)[-1] == ("expected range", "sparktui's device table", "none: no spec known for this device")
    assert v.summary == ("measured 201 GB/s copy, 240 GB/s read; budget from this, not the spec (Tesla T4 is not in "
                         "sparktui's table: no expected range and no spec, so the figure is not checked against what "
                         "the device can do)")


def test_far_below_whole_summary():
    v = fresh(copy_gbs=95.0)
    assert v.summary == ("measured 95 GB/s copy, 240 GB/s read, far below what this device sustains (copy 95 GB/s under "
                         "144; expected 180-220 GB/s copy on GB10 (LPDDR5x, unified) (spec 273)): contention or a "
                         "degraded state")


def test_future_timestamp_rows():
    v = kept({**GB10, "measured_at": 1000.0 + 3 * 86400}, now=1000.0)
    assert ("measured", "kept result", "timestamp 3.0 days in the future: the clock changed since, age unknown") in rows(v)
    assert v.summary.endswith("(its timestamp is 3.0 days in the future: suspicious, age unknown)")


def test_just_measured_is_zero_seconds_ago():
    v = kept({**GB10, "measured_at": 1001.5}, now=1000.0)  # inside the slack: a clock a second apart
    assert ("measured", "kept result", "0 s ago") in rows(v)


@pytest.mark.parametrize("res,summary,source", [
    ({"status": "refused", "reason": "not confirmed", "source": "sparktui"}, "not measured: not confirmed", "sparktui"),
    ({"status": "unknown", "error": "boom"}, "not measured: boom", "target interpreter"),
    ({"status": "unknown"}, "not measured: unknown", "target interpreter"),
])
def test_not_measured_whole(res, summary, source):
    v = judge_result(res, None, fresh=True)
    assert v.summary == summary and v.fix == ""
    assert rows(v) == [("bandwidth probe", source, summary.removeprefix("not measured: "))]


def test_unreadable_kept_file_whole():
    from sparktui.core.readings import Reading, Readings

    r = Readings()
    r.add(Reading("bandwidth_last", None, error="unreadable: /s/b.json: Expecting value: line 1", source="/s/b.json"))
    v = g5.judge(r, Config())
    assert v.status is Status.UNKNOWN and v.fix == g5.REMEASURE
    assert v.summary == "last result unreadable: /s/b.json: Expecting value: line 1"
    assert rows(v) == [("last measurement", "/s/b.json", "unreadable: /s/b.json: Expecting value: line 1")]
    r.add(Reading("bandwidth_last", None, error="unreadable", source=""))
    v = g5.judge(r, Config())
    assert v.summary == "last result unreadable: unreadable" and rows(v) == [("last measurement", "state dir", "unreadable")]


def test_nothing_kept_whole():
    from sparktui.core.readings import Reading, Readings

    r = Readings()
    r.add(Reading("bandwidth_last", None, error=None, source=""))
    v = g5.judge(r, Config())
    assert v.id == "G5" and v.status is Status.SKIP and v.fix == ""
    assert v.summary == "intrusive, not run automatically: run `sparktui bandwidth` on an idle machine"
    assert rows(v) == [("last measurement", "state dir", "none")]
    r.add(Reading("bandwidth_last", None, error="no file yet", source="/s/b.json"))
    assert rows(g5.judge(r, Config())) == [("last measurement", "/s/b.json", "no file yet")]


def test_unusable_kept_result_whole():
    v = judge_result({**GB10, "copy_gbs": "x"}, None, fresh=False)
    assert v.status is Status.UNKNOWN and v.fix == g5.REMEASURE
    assert rows(v) == [("result", "kept result", "copy_gbs is 'x', not a number")]
    v = judge_result({**GB10, "copy_gbs": "x"}, None, fresh=True)
    assert rows(v) == [("result", "this run", "copy_gbs is 'x', not a number")]


def test_gate_reasons_whole():
    assert gate(4 * GIB, None, [], None, False) == g5.GateDecision(
        False, 0, ("MemAvailable unreadable: cannot check that the buffer fits (not overridable)",))
    assert gate(4 * GIB, GIB, [], None, True) == g5.GateDecision(
        False, 0, ("MemAvailable is 1.0 GiB, under three times even a 0.5 GiB buffer (not overridable)",))
    assert gate(4 * GIB, 6 * GIB, [], None, False) == g5.GateDecision(
        True, 2 * GIB, ("buffer scaled down to 2.00 GiB (MemAvailable 6.0 GiB; asked 4.00 GiB)",))
    rows_ = [{"pid": 7, "kind": "server", "gpu_memory_bytes": None},
             {"pid": 8, "name": "blender", "kind": "other", "gpu_memory_bytes": 3 * GIB}]
    assert gate(4 * GIB, 100 * GIB, rows_, "denied", False) == g5.GateDecision(False, 4 * GIB, (
        "cannot confirm the machine is idle: denied", "server running: pid 7 ?", "holds GPU memory: pid 8 blender (3.0 GiB)",
        "use --force to override the process check"))
    assert gate(4 * GIB, 6 * GIB, rows_[:1], None, True) == g5.GateDecision(True, 2 * GIB, (
        "buffer scaled down to 2.00 GiB (MemAvailable 6.0 GiB; asked 4.00 GiB)",
        "overridden by --force: server running: pid 7 ?"), forced=True)


def test_gate_scaling_uses_whole_256_mib_steps_of_a_third():
    d = gate(4 * GIB, 10 * GIB + 1, [], None, False)  # a third is 3.33 GiB: 13 steps of 256 MiB
    assert d.buffer_bytes == 13 * (256 << 20)


# --- small pieces at their edges --------------------------------------------------------------------


@pytest.mark.parametrize("name,row", [
    ("NVIDIA GB10", (273.0, (180.0, 220.0), (231.0, 253.0))),
    ("NVIDIA GH200 480GB", (4000.0, (3200.0, 3680.0), (3400.0, 3800.0))),
    ("NVIDIA H200", (4800.0, (3840.0, 4420.0), (4080.0, 4560.0))),
    ("NVIDIA H100 NVL", (3900.0, (3120.0, 3590.0), (3320.0, 3700.0))),
    ("NVIDIA H100 PCIe", (2000.0, (1600.0, 1840.0), (1700.0, 1900.0))),
    ("NVIDIA H100 80GB HBM3", (3350.0, (2680.0, 3080.0), (2850.0, 3180.0))),
    ("NVIDIA A100-SXM4-80GB", (2039.0, (1630.0, 1880.0), (1730.0, 1940.0))),
    ("NVIDIA A100-SXM4-40GB", (1555.0, (1240.0, 1430.0), (1320.0, 1480.0))),
])
def test_device_table_rows(name, row):
    """The table is reference data: each row's spec and ranges are pinned (a changed figure is a decision)."""
    e = g5.expected_for(name)
    assert (e.spec, e.copy, e.read) == row


def test_device_names_match_case_insensitively_and_odd_names_match_nothing():
    assert g5.expected_for("nvidia gb10").label == "GB10 (LPDDR5x, unified)"
    assert g5.expected_for("") is None and g5.expected_for(None) is None and g5.expected_for(5) is None


def test_read_exactly_at_the_spec_is_not_over_it():
    assert fresh(read_gbs=273.0).status is Status.OK


def test_future_slack_is_two_seconds_not_more():
    assert "in the future" in kept({**GB10, "measured_at": 1002.05}, now=1000.0).summary


@pytest.mark.parametrize("seconds,text", [(36184, "10.1 h"), (177121, "2.1 days")])
def test_age_divides_by_an_hour_and_a_day(seconds, text):
    assert g5._age(seconds) == text


@pytest.mark.parametrize("value,shown", [("a" * 58, "'" + "a" * 58 + "'"), ("a" * 59, "'" + "a" * 56 + "...")])
def test_show_cuts_long_values_at_60(value, shown):
    assert g5._show(value) == shown


@pytest.mark.parametrize("res,problem", [
    ([1], "not a JSON object (list)"),
    ({"status": "ok"}, "copy_gbs is missing (no copy figure)"),
    ({**GB10, "buffer_bytes": -1}, "buffer_bytes is -1, must be at least 0"),
    ({**GB10, "copy_gbs": 0}, "copy_gbs is 0, must be over 0"),
    ({**GB10, "read_gbs": None}, None),
])
def test_result_problem_messages(res, problem):
    assert g5.result_problem(res) == problem


def test_a_result_that_is_not_an_object_is_unknown_not_a_crash():
    v = judge_result([1], None, fresh=True)
    assert v.status is Status.UNKNOWN and v.summary == "bandwidth result unusable: not a JSON object (list)"


def test_gate_buffer_is_a_whole_number_of_bytes():
    d = gate(4 * GIB, 10 * GIB + 1, [], None, False)
    assert isinstance(d.buffer_bytes, int)


# --- the id and the exact words on every path --------------------------------------------------------


def test_every_path_is_g5():
    cases = [fresh(), fresh(copy_gbs=95.0), fresh(copy_gbs=300.0), kept(GB10), kept({**GB10, "copy_gbs": 95.0}),
             judge_result({"status": "refused", "reason": "x"}, None, fresh=True), fresh(copy_gbs="x"),
             judge_result({**GB10, "copy_gbs": "x"}, None, fresh=False)]
    assert {v.id for v in cases} == {"G5"}


def test_kept_far_below_whole_summary():
    v = kept({**GB10, "copy_gbs": 95.0})
    assert v.summary == "intrusive, not rerun; last measured 95 GB/s copy, 240 GB/s read (10 min ago); that was far below range"


def test_both_figures_above_their_ranges_are_both_said():
    v = fresh(copy_gbs=230.0, read_gbs=260.0)
    assert v.summary.endswith("(spec 273)); copy above the usual 180-220, read above the usual 231-253, still under the spec")


def test_unreadable_kept_file_reason_after_the_first_colon():
    from sparktui.core.readings import Reading, Readings

    r = Readings()
    r.add(Reading("bandwidth_last", None, error="unreadable:torn file", source="/s/b.json"))
    assert g5.judge(r, Config()).summary == "last result unreadable: torn file"


# A kept G5 result shown as a skip keeps every evidence row: the figure, how it was measured, its
# age and the expected range (a mutation run on 2026-12-05 could drop them all unnoticed).


def test_a_kept_result_skip_carries_its_figures_age_and_range():
    v = kept({**GB10})
    assert v.status.value == "skip"
    assert v.summary == "intrusive, not rerun; last measured 201 GB/s copy, 240 GB/s read (10 min ago)"
    rows = [(e.what, e.source, e.value) for e in v.evidence]
    assert rows[:6] == [
        ("device", "torch.cuda", "NVIDIA GB10"),
        ("copy bandwidth in GB/s (bytes read + written per s)", "CUDA events over a device copy loop", 201.3),
        ("read-only bandwidth in GB/s", "CUDA events over a reduction", 240.2),
        ("buffer / iterations / repeats", "probe", "4.00 GiB / 12 / 5"),
        ("spread across repeats", "probe", "1.2%"),
        ("measured", "kept result", "10 min ago"),
    ]
    assert rows[6][0] == "expected range" and rows[6][2] == "copy 180-220 GB/s, read 231-253 GB/s"
    assert v.fix == ""


def test_a_fresh_figure_far_below_range_warns_with_its_evidence():
    v = fresh(copy_gbs=120.0)
    assert v.status.value == "warn" and v.summary.startswith("measured 120 GB/s copy, 240 GB/s read, far below")
    rows = {e.what: e.value for e in v.evidence}
    assert rows["copy bandwidth in GB/s (bytes read + written per s)"] == 120.0 and rows["device"] == "NVIDIA GB10"
    assert rows["expected range"] == "copy 180-220 GB/s, read 231-253 GB/s"
