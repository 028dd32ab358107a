"""Any field of a snapshot, at any depth, replaced with any JSON value: every judge still answers.

tests/test_verdicts_never_lie.py spoils real readings a fixed set of ways (N/A, 0, 1e15, -1, "N/A")
and hands them to the judges. Here hypothesis spoils the whole stored document the way a hand
edit, a torn copy or a hostile peer would (null, NaN, inf, 1e308, -1, 0, "12.1", [], {}, nesting
1000 deep, a megabyte string, any small JSON tree) at any path, writes it as a snapshot file and
reads it back through ``read_snapshot``, the boundary that checks the declared shapes. Then either
the file is refused with a one-line reason, or every judge G1-G13 returns a verdict: no exception
("judge error (a sparktui bug"), in bounded time, and never ok where the unspoilt snapshot was not.
"""

from __future__ import annotations

import functools
import math
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.core.readings import Reading, SnapshotError, read_snapshot
from sparktui.core.shapes import SHAPES
from sparktui.core.validate import fits, shape_problems
from sparktui.testing.spoil import (DEEP, SOURCES, base_statuses, judges_of, source_doc, source_paths, verdict_problems,
                                    write)
from sparktui.testing.spoil import source as _source
from sparktui.testing.spoil import with_value as _with
from tests.test_verdicts_never_lie import _replace

HUGE = "x" * 1_000_000

SPECIAL = (None, math.nan, math.inf, -math.inf, 1e308, -1e308, 10 ** 30, -1, 0, 1, -300, "12.1", "", "N/A",
           "../../etc", [], {}, True, False, [1, 2], {"value": "x"}, DEEP, HUGE)
JSON_TREES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)
HOSTILE = st.sampled_from(SPECIAL) | JSON_TREES


@settings(max_examples=120)
@given(label=st.sampled_from(sorted(SOURCES)), pick=st.integers(min_value=0), value=HOSTILE)
def test_any_field_any_value_is_refused_or_judged_without_crash_hang_or_a_new_ok(label, pick, value):
    all_paths = source_paths(label)
    path = all_paths[pick % len(all_paths)]
    with tempfile.TemporaryDirectory() as d:
        snap = write(_with(source_doc(label), path, value), d)
        try:
            readings = read_snapshot(snap)[0]
        except SnapshotError as e:
            assert "\n" not in str(e) and str(e).startswith(str(snap)), str(e)
            return
    found = verdict_problems(readings, base_statuses(label), judges_of(path))
    assert not found, f"{label} {path} = {str(value)[:80]!r}:\n" + "\n".join(found)


@settings(max_examples=120)
@given(label=st.sampled_from(sorted(SOURCES)), pick=st.integers(min_value=0), value=HOSTILE)
def test_any_value_in_a_reading_however_it_was_made_never_crashes_a_judge_nor_makes_an_ok(label, pick, value):
    """The same spoiling handed to the judges directly, past any file: a live probe's or a recording's
    reading is checked against its shape before each judge sees it (gotchas/base.py)."""
    data_paths = [p for p in source_paths(label) if len(p) > 3 and p[2] == "data"]
    _, name, _, *path = data_paths[pick % len(data_paths)]
    readings, value = _source(label), functools.reduce(lambda inner, _: [inner], range(1000), []) if value == DEEP else value
    r = readings.get_reading(name)
    spoilt = Reading(name, _with(r.data, tuple(path), value), r.error, r.source, r.started_at, r.took_s)
    found = verdict_problems(_replace(readings, spoilt), base_statuses(label), judges_of(("readings", name)))
    assert not found, f"{label} {name}.{path} = {str(value)[:80]!r}:\n" + "\n".join(found)


@settings(max_examples=150)
@given(label=st.sampled_from(sorted(SOURCES)), pick=st.integers(min_value=0), value=HOSTILE)
def test_the_quick_shape_check_agrees_with_the_one_that_names_the_field(label, pick, value):
    """``fits`` (run before every judgement) accepts exactly what ``shape_problems`` finds nothing in."""
    data_paths = [p for p in source_paths(label) if len(p) > 3 and p[2] == "data"]
    _, name, _, *path = data_paths[pick % len(data_paths)]
    data = _with(_source(label).get_reading(name).data, tuple(path), value)
    assert fits(data, SHAPES[name]) == (shape_problems(data, SHAPES[name], strict=False) == [])


def test_the_paths_reach_deep_fields_of_every_reading():
    """The draw reaches what decides verdicts: a GPU sample's temperature, a process row, G7's capability."""
    demo = set(source_paths("gb10-demo"))
    assert ("readings", "telemetry", "data", "samples", "*", "gpus", 0, "temp_c") in demo
    assert ("readings", "processes", "data", "rows", 1, "gpu_mem_bytes") in demo
    assert ("readings", "nvml", "data", "devices", 0, "compute_capability", "value") in demo
    assert ("readings", "playbook_issues", "data", "matches", 0, "reasons") in demo
    assert all(len(source_paths(label)) > 250 for label in SOURCES)
