"""Principle 1 as a property: bad or missing evidence never turns a verdict into ok, nor crashes a judge.

Starting from real machines' readings (the lent H200's snapshot, an H200 recording under a matmul
load, and the shipped GB10 recording), each reading a gotcha uses is spoilt in turn:

- failed: the probe read nothing (data None with an error), or failed but left an empty dict;
- removed: every field (three levels deep) taken out in turn;
- every number (down to the samples of a series: the first, the last, and all of them at once)
  replaced with N/A (None), with 0, with a value no hardware produces (1e15 and -1), and with a
  string ("N/A", as nvidia-smi prints it).

A verdict may get worse or become unknown; it must never improve to ok, since an ok then rests on
evidence that was not there (N/A is never zero, a failed read is never an empty machine, an
impossible value is a measurement error). A failed reading leaves no ok behind unless the ok names
what it could not check (OK_WITHOUT). No judge may raise: the runner would turn that into
"judge error (a sparktui bug ...)", which must never appear. One test per (source, gotcha), so a
failure names the judge and each mutation that fooled or crashed it."""

from __future__ import annotations

import os
import random
import re
from typing import Any, Callable, Iterator, cast

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas import REGISTRY
from sparktui.runner import judge
from sparktui.testing.spoil import DELETE, HANG_S, JUDGE_ERROR, SOURCES
from sparktui.testing.spoil import elements as _elements
from sparktui.testing.spoil import source as _source
from sparktui.testing.spoil import timed as _timed
from sparktui.testing.spoil import with_value as _with

# a number spoilt four ways and a wrong type: N/A, zero, past any hardware limit both ways, a string
NUMBER_SPOILERS: tuple[tuple[str, Any], ...] = (("N/A", None), ("0", 0), ("1e15", 1e15), ("-1", -1), ("'N/A'", "N/A"))
# per (source, gotcha): above it, a fixed sample (seeded by the pair) keeps CI quick; the mutation
# run (tools/mutation.py) sets a smaller one, as it runs these once per surviving mutant
MAX_VARIANTS = int(os.environ.get("SPARKTUI_NEVER_LIE_VARIANTS", "1500"))

# an ok that stays ok without this reading, and why that is honest
OK_WITHOUT = {
    ("G3", "nvml"): "G3 judges /proc/meminfo; NVML only adds that GPU memory queries read N/A",
    ("G1", "cudalibs"): "the ok names the unchecked part (asserted below)",
    # G14's ok is the run's own progress (its log); these only name a slowdown's or a stall's cause,
    # and a warn or fail says a cause source it could not read as "not seen" (tests/gotchas/g14)
    ("G14", "telemetry"): "the run's progress is its own evidence; the telemetry names causes only",
    ("G14", "meminfo"): "the run's progress is its own evidence; memory pressure names causes only",
    ("G14", "processes"): "the run's liveness is the run reading's; the scan names a started process as a cause",
}


def _sources() -> dict[str, Readings]:
    return {label: _source(label) for label in SOURCES}


def _replace(readings: Readings, reading: Reading) -> Readings:
    out = Readings()
    for name, r in readings.items():
        out.add(reading if name == reading.probe else r)
    return out


# --- paths into a reading's data: keys, list indexes, and "*" for every element of a list ---------

def _field_paths(obj: Any, prefix: tuple = (), depth: int = 3) -> Iterator[tuple]:
    if depth == 0:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix + (k,)
            yield from _field_paths(v, prefix + (k,), depth - 1)
    elif isinstance(obj, list) and obj:
        yield prefix + (0,)
        yield from _field_paths(obj[0], prefix + (0,), depth - 1)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _number_paths(obj: Any, prefix: tuple = (), depth: int = 7) -> Iterator[tuple]:
    if depth == 0:
        return
    if isinstance(obj, dict):
        items = list(obj.items())
    elif isinstance(obj, list) and obj:
        items = [(i, obj[0 if i == "*" else i]) for i in _elements(obj)]
    else:
        return
    for k, v in items:
        if _is_number(v):
            yield prefix + (k,)
        else:
            yield from _number_paths(v, prefix + (k,), depth - 1)


def _without(data: Any, path: tuple) -> Any:
    return _with(data, path, DELETE)


def _show(path: tuple) -> str:
    return "".join(f"[{k}]" if isinstance(k, int) or k == "*" else f".{k}" for k in path)


# --- the variants of one reading -------------------------------------------------------------------

def _variants(reading: Reading) -> Iterator[tuple[str, str, Reading]]:
    """(kind, what, spoilt reading) for one reading."""
    name, data = reading.probe, reading.data

    def spoilt(new: Any, error: str | None = None) -> Reading:
        return Reading(name, new, error=error, source=reading.source, started_at=reading.started_at,
                       took_s=reading.took_s)

    yield "failed", f"{name} failed (no data)", spoilt(None, "read failed (injected)")
    yield "failed", f"{name} failed (empty data)", spoilt({}, "read failed (injected)")
    if data is None:
        return
    for p in _field_paths(data):
        yield "removed", f"{name} without {_show(p)}", spoilt(_without(data, p))
    for p in _number_paths(data):
        for label, value in NUMBER_SPOILERS:
            yield "number", f"{name}{_show(p)} = {label}", spoilt(_with(data, p, value))


def _cases(label: str, gid: str, limit: int | None = MAX_VARIANTS) -> list[tuple[str, str, Reading]]:
    readings, g = _source(label), REGISTRY[gid]
    cases = [c for name, r in readings.items() if name in g.probes for c in _variants(r)]
    if limit is not None and len(cases) > limit:
        failed = [c for c in cases if c[0] == "failed"]
        rest = random.Random(f"{label}/{gid}").sample([c for c in cases if c[0] != "failed"], limit)
        cases = failed + rest
    return cases


def _field_of(what: str) -> str:
    """"telemetry.samples[0].t = 0" -> "telemetry.samples[].t": the field, whatever element and value."""
    return re.sub(r"\[[^\]]*\]", "[]", what.split(" = ")[0])


def _lies(label: str, gid: str, run: Callable[[Readings], Verdict] | None = None,
          limit: int | None = MAX_VARIANTS) -> tuple[list[str], int]:
    """What went wrong for one (source, gotcha), and how many variants were judged (at most
    ``limit``, a fixed sample; mutation runs lower it through SPARKTUI_NEVER_LIE_VARIANTS)."""
    readings, g, cfg = _source(label), REGISTRY[gid], Config()
    run = run or (lambda rs: judge(g, rs, cfg))
    base = run(readings)
    lies = [f"{gid} crashes on the unspoilt {label} readings: {base.summary}"] if JUDGE_ERROR in base.summary else []
    cases, hung, skipped = _cases(label, gid, limit), set(), 0
    for kind, what, variant in cases:
        field = _field_of(what)
        if field in hung:  # each hang costs HANG_S: one per field shows it
            skipped += 1
            continue
        v = _timed(run, _replace(readings, variant))
        if v is None:
            lies.append(f"{gid} hangs (> {HANG_S:g} s) with {what}")
            hung.add(field)
        elif JUDGE_ERROR in v.summary:
            lies.append(f"{gid} crashes with {what}: {v.summary}")
        elif v.status is Status.OK and base.status is not Status.OK:
            lies.append(f"{gid} {base.status.value} -> ok with {what}: {v.summary}")
        elif v.status is Status.OK and kind == "failed" and (gid, variant.probe) not in OK_WITHOUT:
            lies.append(f"{gid} still ok with {what}: {v.summary}")
    if skipped:
        lies.append(f"{gid}: {skipped} more variants of the fields it hung on not tried")
    return lies, len(cases)


# the pairs where the source has at least one reading the gotcha uses
PAIRS = [(label, gid) for label in SOURCES for gid, g in REGISTRY.items() if set(g.probes) & set(_source(label))]


@pytest.mark.parametrize("label, gid", PAIRS, ids=[f"{label}-{gid}" for label, gid in PAIRS])
def test_spoilt_evidence_never_improves_a_verdict_to_ok_nor_crashes_a_judge(label, gid):
    lies, judged = _lies(label, gid)
    assert judged >= 2  # at least a reading it uses failed both ways
    assert not lies, f"{len(lies)} of {judged} spoilt readings:\n" + "\n".join(lies[:60])


def test_the_walk_reaches_deep_numbers_and_whole_series():
    """The variants reach the numbers that decide verdicts: a GPU sample's temperature, each process's
    GPU memory, the measured bandwidth; both one sample and the whole series."""
    whats = {what for r in _source("gb10-demo").values() for _, what, _ in _variants(r)}
    assert "telemetry.samples[*].gpus[0].temp_c = N/A" in whats
    assert "telemetry.samples[0].gpus[0].power_w = 1e15" in whats
    assert "processes.rows[1].gpu_mem_bytes = 0" in whats
    assert "bandwidth_last.copy_gbs = -1" in whats
    assert "meminfo.MemTotal = 'N/A'" in whats
    assert sum(1 for label in SOURCES for r in _source(label).values() for _ in _variants(r)) > 3000


def test_the_spoiling_copies_only_along_the_path():
    data = {"a": [{"x": 1, "y": {"z": 2}}, {"x": 3}], "b": {"c": 4}}
    assert _with(data, ("a", "*", "x"), None) == {"a": [{"x": None, "y": {"z": 2}}, {"x": None}], "b": {"c": 4}}
    assert _without(data, ("a", 0, "y")) == {"a": [{"x": 1}, {"x": 3}], "b": {"c": 4}}
    assert _without(data, ("a", 1)) == {"a": [{"x": 1, "y": {"z": 2}}], "b": {"c": 4}}
    assert data == {"a": [{"x": 1, "y": {"z": 2}}, {"x": 3}], "b": {"c": 4}}  # the original is untouched
    assert list(_number_paths(data)) == [("a", 0, "x"), ("a", 0, "y", "z"), ("a", 1, "x"), ("a", "*", "x"),
                                         ("a", "*", "y", "z"), ("b", "c")]


def test_a_crashing_or_lying_judge_is_caught():
    """The property itself bites: a judge that says ok on anything, or raises on a bad number, fails it."""
    def lenient(rs: Readings) -> Verdict:
        return Verdict("G3", Status.OK, "fine")

    def fragile(rs: Readings) -> Verdict:
        mem = rs.data("meminfo") or {}
        return Verdict("G3", Status.WARN if mem["MemAvailable"] / 2 < 8 << 30 else Status.OK, "low")

    # every variant, whatever sample the environment asks for: these are the ones that must bite
    lies, _ = _lies("gb10-demo", "G3", run=lenient, limit=None)
    assert any("still ok with meminfo failed (no data)" in x for x in lies)
    lies, _ = _lies("gb10-demo", "G3", run=lambda rs: judge(cast(Any, _Fake(fragile)), rs, Config()), limit=None)
    assert any("crashes with meminfo.MemAvailable = 'N/A'" in x for x in lies)
    assert any("warn -> ok with meminfo.MemAvailable = 1e15" in x for x in lies)


class _Fake:
    id, slug, probes = "G3", "fake", ("meminfo",)

    def __init__(self, fn: Callable[[Readings], Verdict]) -> None:
        self.judge = lambda rs, cfg: fn(rs)


def test_g1_ok_without_ldconfig_names_the_unchecked_part():
    readings = _sources()["h200"]
    assert judge(REGISTRY["G1"], readings, Config()).status is Status.OK
    v = judge(REGISTRY["G1"], _replace(readings, Reading("cudalibs", None, error="ldconfig not found")), Config())
    assert v.status is Status.OK and "ldconfig unreadable: a leftover libcudart.so.12 not checked" in v.summary


@pytest.mark.parametrize("gid, probe, field", [("G6", "processes", "rows"), ("G8", "playbook_issues", "matches")])
def test_a_reading_missing_the_decisive_list_is_unknown_not_an_empty_list(gid, probe, field):
    readings = _sources()["gb10-demo"]
    assert judge(REGISTRY[gid], readings, Config()).status in (Status.WARN, Status.FAIL)
    r = readings.get_reading(probe)
    v = judge(REGISTRY[gid], _replace(readings, Reading(probe, _without(r.data, (field,)), source=r.source)), Config())
    assert v.status is Status.UNKNOWN and f"the {probe} reading has no {field} field" in v.summary
