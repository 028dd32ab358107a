"""core/units.py: the one meaning of a number, a size, an age and a time (issue 23, item 5)."""

from __future__ import annotations

import math
import sys
import time

import pytest

from sparktui.core import units
from sparktui.core.units import (GIB, age_compact, age_rounded, age_text, as_number, duration_hm, gib, is_number,
                                 local_text, number_or_none, offset_text, size_text, utc_text, when_text)

NAN, INF = float("nan"), float("inf")
HUGE = 10 ** 400  # an int no float can hold: float(HUGE) and HUGE / GIB overflow


@pytest.mark.parametrize("v", [0, 1, -1, 0.0, -0.0, 1.5, -2.5e9, sys.float_info.max, -sys.float_info.max,
                               int(sys.float_info.max), 5e-324, 2 ** 63])
def test_real_numbers_are_numbers(v):
    assert is_number(v)
    assert number_or_none(v) is v


@pytest.mark.parametrize("v", [NAN, INF, -INF, True, False, None, "1", b"1", [1], {"a": 1}, HUGE, -HUGE,
                               complex(1, 0), object()])
def test_nan_inf_bool_huge_and_others_are_not(v):
    assert not is_number(v)
    assert number_or_none(v) is None


def test_the_float_limit_is_the_int_limit():
    edge = int(sys.float_info.max)
    assert is_number(edge) and not is_number(edge * 2) and not is_number(-edge * 2)


def test_as_number_reads_strings_and_refuses_nan():
    assert as_number("12.5") == 12.5 and as_number(3) == 3.0
    for v in (NAN, INF, "nan", "inf", "-inf", "x", None, True, HUGE, [], "1e400"):
        assert as_number(v) is None, v


def test_gib():
    assert GIB == 1024 ** 3 == 2 ** 30
    assert gib(3 * GIB) == "3.0 GiB"
    assert gib(int(1.25 * GIB), digits=2) == "1.25 GiB"
    assert gib(GIB, unit="") == "1.0"
    for v in (None, NAN, INF, True, "12", HUGE):
        assert gib(v) == "?"
    assert gib(None, missing="n/a") == "n/a"


def test_size_text_steps():
    assert size_text(0) == "0 KiB"
    assert size_text(1023 * 1024) == "1023 KiB"
    assert size_text(1024 * 1024) == "1.0 MiB"
    assert size_text(GIB - 1) == "1024.0 MiB"
    assert size_text(GIB) == "1.0 GiB"
    assert size_text(int(12.34 * GIB)) == "12.3 GiB"
    for v in (-1, NAN, INF, None, True, HUGE):
        assert size_text(v, missing="RSS unknown") == "RSS unknown"


@pytest.mark.parametrize("s,text", [(0, "<1m"), (59.9, "<1m"), (60, "1m"), (3599, "59m"), (3600, "1h00m"),
                                    (9 * 3600 + 5 * 60, "9h05m"), (36000, "10h"), (86399, "23h"),
                                    (86400, "1d0h"), (2 * 86400 + 3 * 3600, "2d3h")])
def test_age_compact(s, text):
    assert age_compact(s) == text
    assert len(age_compact(s)) <= 5


def test_age_compact_negative_and_not_numbers():
    assert age_compact(-5) == "<1m" and age_compact(-1e9) == "<1m"  # a clock stepped back
    for v in (None, NAN, INF, -INF, True, HUGE):  # NaN and inf crashed int() in the old ui/format.age
        assert age_compact(v) == "—"


@pytest.mark.parametrize("s,text", [(0, "0 s"), (42, "42 s"), (119, "119 s"), (120, "2 min"), (7199, "120 min"),
                                    (7200, "2.0 h"), (5400 * 2, "3.0 h"), (172800, "2.0 days"),
                                    (3.5 * 86400, "3.5 days")])
def test_age_text(s, text):
    assert age_text(s) == text


def test_age_text_negative_and_not_numbers():
    assert age_text(-30) == "0 s"
    for v in (None, NAN, INF, True, HUGE, "5"):
        assert age_text(v) == "?"


@pytest.mark.parametrize("s,text", [(0, "0 s"), (89, "89 s"), (90, "2 min"), (5399, "90 min"), (5400, "2 h"),
                                    (47 * 3600, "47 h"), (48 * 3600, "2 d"), (10 * 86400 + 5, "10 d"),
                                    ("3600", "60 min")])
def test_age_rounded(s, text):
    assert age_rounded(s) == text


def test_age_rounded_negative_and_not_numbers():
    assert age_rounded(-1) == "0 s"
    for v in (None, NAN, INF, "nan", "x", HUGE, [], True):
        assert age_rounded(v) == "?"


def test_duration_hm():
    assert duration_hm(0) == "0h00m" and duration_hm(3725) == "1h02m" and duration_hm(100 * 3600) == "100h00m"
    for v in (-5, NAN, INF, None):
        assert duration_hm(v) == "0h00m"


def test_offset_text():
    assert offset_text(0) == "+00:00:00"
    assert offset_text(3 * 3600 + 61.4) == "+03:01:01"
    assert offset_text(-90) == "-00:01:30"


def test_utc_and_local_text():
    assert utc_text(0) == "1970-01-01 00:00:00 UTC"
    assert utc_text(86400 + 61, "%H:%M") == "00:01"
    assert local_text(1_000_000, "%Y") == time.strftime("%Y", time.localtime(1_000_000))
    for v in (NAN, INF, None, "x", 1e308, HUGE):
        assert utc_text(v) is None
        assert local_text(v) is None


def test_when_text():
    assert when_text(3600 + 5, 5) == "01:00:05 UTC (+01:00:00)"
    assert when_text(3600, None) == "01:00:00 UTC"
    assert when_text(3600, NAN) == "01:00:00 UTC"
    assert when_text(3600, "x") == "01:00:00 UTC"
    assert when_text("3600", 0) == "01:00:00 UTC (+01:00:00)"
    for v in (NAN, INF, None, "x", True):
        assert when_text(v, 0) == "at an unknown time"
    assert when_text(1e308, 0) == "at an impossible time (t = 1e+308)"


def test_gotchas_when_is_the_units_one():
    from sparktui.gotchas import _when

    assert _when.when_text is units.when_text and _when.offset_text is units.offset_text


def test_no_function_uses_math_isfinite_on_an_int_it_cannot_hold():
    with pytest.raises(OverflowError):  # why is_number does not just call math.isfinite
        math.isfinite(HUGE)
    assert is_number(HUGE) is False


# --- the callers whose behaviour changed when they took core/units (each failed before) -----------
def test_bandwidth_line_refuses_a_nan_figure():
    from sparktui.ui.format import bandwidth_line

    assert bandwidth_line({"status": "ok", "copy_gbs": NAN}, 1000.0) is None  # it read "bandwidth nan GB/s copy"
    line = bandwidth_line({"status": "ok", "copy_gbs": 200.0, "read_gbs": NAN, "measured_at": NAN}, 1000.0)
    assert line == "bandwidth 200 GB/s copy"  # no "nan read", no "just now" for a time that is no time


def test_dashboard_age_and_duration_survive_nan():
    from sparktui.ui.format import age, duration, gib

    assert age(NAN) == "—" and age(INF) == "—"  # int(nan) raised ValueError in the checklist column
    assert duration(NAN) == "0h00m"
    assert gib(NAN) == "?" and gib(None) == "?" and gib(3 * GIB) == "3.0"


def test_kept_bandwidth_result_with_a_huge_int_is_refused_not_a_crash():
    from sparktui.core.validate import bandwidth_result_problem

    assert bandwidth_result_problem({"copy_gbs": HUGE}).endswith("not a finite number")  # math.isfinite raised
    assert bandwidth_result_problem({"copy_gbs": NAN}) == "copy_gbs is nan, not a finite number"
    assert bandwidth_result_problem({"copy_gbs": "12"}) == "copy_gbs is '12', not a number"


def test_a_cached_listing_with_a_huge_fetched_at_is_discarded_not_a_crash(tmp_path):
    import json

    from sparktui.playbooks.github import CACHE_VERSION, _DiskCache

    cache = _DiskCache(tmp_path)
    url = "https://api.github.com/repos/o/r/issues"
    good = {"v": CACHE_VERSION, "url": url, "fetched_at": 1.0e9, "data": {}, "etag": None, "next": None}
    cache._path(url).write_text(json.dumps(good), encoding="utf-8")
    assert cache.load(url) == good
    for bad in (HUGE, NAN, True):  # math.isfinite raised OverflowError on the 400-digit int
        cache._path(url).write_text(json.dumps({**good, "fetched_at": bad}), encoding="utf-8")
        assert cache.load(url) is None


def test_g3_nvml_total_of_nan_is_no_figure():
    from sparktui.gotchas.g03_unified_memory import judge
    from tests.conftest import readings_of
    from tests.gotchas.g03.test_rules import CFG, ev, mi

    nvml = {"devices": [{"index": 0, "memory": {"value": {"total": NAN, "used": 0}}}]}
    v = judge(readings_of(meminfo=mi(avail=60.0, free=40.0), nvml=nvml), CFG)
    assert ev(v, "NVML device memory") == "reported"  # it read "reported total nan GiB"


def test_g11_an_event_time_no_clock_has_is_said_not_raised():
    from sparktui.gotchas import g11_kernel_log as g11

    ev = {"kind": "oom_kill", "text": "Killed process 12 (python3)", "pid": 12, "name": "python3", "rss_kb": 164}
    for t in (INF, 1e308):  # time.localtime raised OverflowError
        assert g11._at({**ev, "t": t, "t_boot": 12.5}) == "12.5 s after boot"
        g11.describe({**ev, "t": t})
    assert g11._at({**ev, "t": NAN, "t_boot": INF}) == "time unknown"  # it read "inf s after boot"
    assert g11._size(HUGE) == "RSS unknown" and g11._size(-1) == "RSS unknown"  # a 400-digit count raised


def test_fleet_report_times_of_nan_or_inf_are_a_question_mark():
    from sparktui.fleet.report import _when

    assert _when(0) == "?" and _when(None) == "?" and _when(86400 + 1) == "1970-01-02 00:00:01 UTC"
    for t in (NAN, INF):  # datetime.fromtimestamp raised ValueError / OverflowError
        assert _when(t) == "?"


def test_a_nan_sample_is_no_figure_in_the_report_or_the_rdma_line():
    from sparktui.fleet.report import _row
    from sparktui.ui.panels.telemetry import rdma_line

    row = _row("x", "u", [1.0, NAN, 3.0, INF], 1.0, "{:.1f}", None)  # NaN and inf were counted, min/max/last spoilt
    assert (row.min, row.max, row.last, row.n) == (1.0, 3.0, 3.0, 2)
    assert rdma_line({"rdma": {"rx_Bps": NAN, "tx_Bps": 2e9}}) == rdma_line({"rdma": {"rx_Bps": None, "tx_Bps": 2e9}})
