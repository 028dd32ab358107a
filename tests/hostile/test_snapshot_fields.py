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
import json
import math
import tempfile
from pathlib import Path
from typing import Any, Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings, SnapshotError, read_snapshot
from sparktui.core.shapes import SHAPES
from sparktui.core.validate import fits, shape_problems
from sparktui.core.verdict import Status
from sparktui.gotchas import REGISTRY
from sparktui.runner import judge
from tests.test_verdicts_never_lie import HANG_S, JUDGE_ERROR, SOURCES, _elements, _replace, _source, _timed, _with

DEEP = "\x00nested 1000 deep\x00"  # stands for [[[...]]] 1000 levels: json.dumps itself cannot nest that deep
DEEP_JSON = "[" * 1000 + "]" * 1000
HUGE = "x" * 1_000_000

SPECIAL = (None, math.nan, math.inf, -math.inf, 1e308, -1e308, 10 ** 30, -1, 0, 1, -300, "12.1", "", "N/A",
           "../../etc", [], {}, True, False, [1, 2], {"value": "x"}, DEEP, HUGE)
JSON_TREES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)
HOSTILE = st.sampled_from(SPECIAL) | JSON_TREES


def snapshot_doc(readings: Readings) -> dict[str, Any]:
    """A snapshot document holding ``readings``, as ``sparktui snapshot`` writes it."""
    return {"schema": 1, "kind": "sparktui-snapshot", "sparktui_version": "test", "taken_at": 1.7e9,
            "host": {"hostname": "spark"}, "readings": readings.to_dict()}


@functools.cache
def source_doc(label: str) -> dict[str, Any]:
    return snapshot_doc(_source(label))


def paths(obj: Any, prefix: tuple = (), depth: int = 9) -> Iterator[tuple]:
    """Every key path into ``obj`` (lists: the first, the last and every element at once)."""
    if depth == 0:
        return
    items = (list(obj.items()) if isinstance(obj, dict)
             else [(i, obj[0 if i == "*" else i]) for i in _elements(obj)] if isinstance(obj, list) and obj else [])
    for k, v in items:
        yield prefix + (k,)
        yield from paths(v, prefix + (k,), depth - 1)


@functools.cache
def source_paths(label: str) -> tuple[tuple, ...]:
    doc = source_doc(label)
    return tuple(("readings",) + p for p in paths(doc["readings"]))


def write(doc: dict[str, Any], folder: str) -> Path:
    text = json.dumps(doc).replace(json.dumps(DEEP), DEEP_JSON)
    path = Path(folder) / "snapshot.json"
    path.write_text(text, encoding="utf-8")
    return path


def verdict_problems(readings: Readings, base: dict[str, Status], gids: list[str]) -> list[str]:
    """What went wrong judging ``readings``: a crash, a hang, a status outside the enum, or an ok the
    unspoilt readings (``base``) did not have."""
    found = []
    for gid in gids:
        run = functools.partial(_timed, lambda rs: judge(REGISTRY[gid], rs, Config()), readings)
        v = run() or run()  # once more before calling it a hang: a busy shared machine stalls a call, a hang repeats
        if v is None:
            found.append(f"{gid} hangs (> {HANG_S:g} s)")
        elif JUDGE_ERROR in v.summary:
            found.append(f"{gid} crashes: {v.summary}")
        elif not isinstance(v.status, Status):
            found.append(f"{gid} status {v.status!r}")
        elif v.status is Status.OK and base[gid] is not Status.OK:
            found.append(f"{gid} {base[gid].value} -> ok: {v.summary}")
    return found


@functools.cache
def base_statuses(label: str) -> dict[str, Status]:
    with tempfile.TemporaryDirectory() as d:
        readings = read_snapshot(write(source_doc(label), d))[0]
    return {gid: judge(g, readings, Config()).status for gid, g in REGISTRY.items()}


def judges_of(path: tuple) -> list[str]:
    """The gotchas a spoilt path can change: those using the reading, or all for the envelope."""
    if len(path) < 2:
        return list(REGISTRY)
    return [gid for gid, g in REGISTRY.items() if path[1] in g.probes]


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
