"""Principle 1 as a property: losing evidence never turns a verdict into ok.

Starting from a real machine's snapshot (the lent H200) and the shipped GB10 recording, every
reading a gotcha uses is knocked out in turn, and every field of it (three levels deep) removed in
turn. A verdict may get worse or become unknown; it must never improve to ok, since an ok then
rests on evidence that was not there. Where only part of the evidence was seen the ok must say so
(G1 without ldconfig)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Iterator

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings, read_snapshot
from sparktui.core.recording import read_recording, readings_from_recording
from sparktui.core.verdict import Status
from sparktui.gotchas import REGISTRY
from sparktui.runner import judge

ROOT = Path(__file__).resolve().parents[1]

# an ok that stays ok without this reading, and why that is honest
OK_WITHOUT = {
    ("G3", "nvml"): "G3 judges /proc/meminfo; NVML only adds that GPU memory queries read N/A",
    ("G1", "cudalibs"): "the ok names the unchecked part (asserted below)",
}


def _sources() -> dict[str, Readings]:
    h200, _, _ = read_snapshot(ROOT / "tests" / "data" / "h200" / "snapshot.json")
    gb10 = readings_from_recording(read_recording(ROOT / "src" / "sparktui" / "data" / "gb10-demo.jsonl"))
    return {"h200": h200, "gb10-demo": gb10}


def _replace(readings: Readings, reading: Reading) -> Readings:
    out = Readings()
    for name, r in readings.items():
        out.add(reading if name == reading.probe else r)
    return out


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


def _without(data: Any, path: tuple) -> Any:
    data = copy.deepcopy(data)
    node = data
    for k in path[:-1]:
        node = node[k]
    if isinstance(node, list):
        node.pop(path[-1])
    else:
        del node[path[-1]]
    return data


@pytest.mark.parametrize("label", ["h200", "gb10-demo"])
def test_losing_evidence_never_improves_a_verdict_to_ok(label):
    readings = _sources()[label]
    cfg = Config()
    base = {gid: judge(g, readings, cfg) for gid, g in REGISTRY.items()}
    lies, judged = [], 0
    for name, reading in readings.items():
        users = [g for g in REGISTRY.values() if name in g.probes]
        variants = [(f"{name} unavailable", Reading(name, None, error="knocked out", source=reading.source))]
        if reading.data is not None:
            variants += [(f"{name} without {list(p)}", Reading(name, _without(reading.data, p), source=reading.source,
                                                               started_at=reading.started_at, took_s=reading.took_s))
                         for p in _field_paths(reading.data)]
        for what, variant in variants:
            changed = _replace(readings, variant)
            for g in users:
                v = judge(g, changed, cfg)
                judged += 1
                if v.status is Status.OK and base[g.id].status is not Status.OK:
                    lies.append(f"{g.id}: {base[g.id].status.value} -> ok with {what}: {v.summary}")
                if v.status is Status.OK and what.endswith("unavailable") and (g.id, name) not in OK_WITHOUT:
                    lies.append(f"{g.id}: still ok with {what}: {v.summary}")
    assert judged > 500  # the walk really covered the readings
    assert not lies, "\n".join(lies)


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
