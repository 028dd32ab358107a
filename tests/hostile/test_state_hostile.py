"""The kept G5 result (probes/state.py) is a file anyone can replace: whatever is there, G5 is
unknown with the reason (or skip when there is none), never a hang, a crash or unbounded memory."""

from __future__ import annotations

import json
import math
import os
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas import g05_bandwidth as g5
from sparktui.probes import state

DEADLINE_S = 5.0
GOOD = {"status": "ok", "device": "NVIDIA GB10", "copy_gbs": 201.3, "read_gbs": 240.2, "buffer_bytes": 4 << 30,
        "iterations": 12, "repeats": 5, "spread_pct": 1.2, "measured_at": 1000.0}


def kept_path():
    p = state.bandwidth_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def judge_kept() -> Verdict:
    """Read and judge in a thread: a read that blocks fails the test instead of the suite."""
    out: list = []

    def run() -> None:
        r = Readings()
        r.add(state.read_bandwidth_last(Config()))
        out.append(g5.judge(r, Config()))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(DEADLINE_S)
    assert not t.is_alive(), f"reading the kept result did not return within {DEADLINE_S} s"
    assert out, "the read or the judge raised"
    return out[0]


def test_a_kept_result_that_is_a_fifo_is_unknown_not_waited_on():
    os.mkfifo(kept_path())
    v = judge_kept()
    assert v.status is Status.UNKNOWN and "not a regular file (a pipe or a device?)" in v.summary, v.summary


def test_a_kept_result_linked_to_dev_zero_is_unknown_without_reading_it():
    kept_path().symlink_to("/dev/zero")
    v = judge_kept()
    assert v.status is Status.UNKNOWN and "not a regular file" in v.summary, v.summary


@pytest.mark.parametrize("make, words", [
    (lambda p: p.mkdir(), "is a folder"),
    (lambda p: p.symlink_to(p), "Too many levels of symbolic links"),
    (lambda p: p.write_bytes(b"\xff\xfe{}"), "not UTF-8 text"),
    (lambda p: p.write_text("[" * 50_000), "JSON nested too deeply"),
    (lambda p: p.write_text(" " * (state.MAX_STATE_BYTES + 1)), "more than a kept bandwidth result can be"),
    (lambda p: p.write_text('{"copy_gbs": 2'), "not JSON"),
    (lambda p: p.write_text("[1, 2]"), "not a JSON object"),
])
def test_odd_kept_files_are_unknown_with_the_reason(make, words):
    make(kept_path())
    v = judge_kept()
    assert v.status is Status.UNKNOWN and words in v.summary, v.summary
    assert str(kept_path()) not in v.summary  # the evidence names the file; the summary says why


def test_no_kept_result_is_skip_not_unknown():
    assert judge_kept().status is Status.SKIP


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8)


@settings(max_examples=150)
@given(field=st.sampled_from(sorted(GOOD)), value=json_values)
def test_any_value_at_any_field_is_judged_never_raised_and_never_ok_on_garbage(field, value):
    kept_path().write_text(json.dumps({**GOOD, field: value}))
    v = judge_kept()
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if v.status is Status.OK and field in ("copy_gbs", "read_gbs", "buffer_bytes", "measured_at"):
        assert numeric and math.isfinite(value) and value > 0, (value, v.summary)


@settings(max_examples=100)
@given(raw=st.binary(max_size=200))
def test_arbitrary_bytes_are_unknown_never_a_crash(raw):
    kept_path().write_bytes(raw)
    assert judge_kept().status is Status.UNKNOWN
