"""G6 never reads "no GPU process" from a process list that lacks processes NVML lists.

The scan gives every process in NVML's list a row (on_gpu), except sparktui's own and those that
exited or were denied mid-scan. An exhaustive pass over a recording's fields (2026-12-05) emptied the
rows of every process snapshot of the GB10 demo while each still said NVML listed vLLM's engine:
G6 went from fail to "ok: no inference server or other GPU process on the pool".
"""

from __future__ import annotations

import json

import pytest

from sparktui.core.config import Config
from sparktui.core.recording import Recording, read_recording, readings_from_recording
from sparktui.core.verdict import Status
from sparktui.gotchas.g06_contention import judge
from tests.gotchas.builders import DEMO, GIB
from tests.gotchas.builders import ENGINE_CORE, LORA, g6v, job, snap, vllm


@pytest.mark.parametrize("count, extra, missing", [
    (1, {}, "NVML lists 1 GPU process(es), the process list has 0"),
    (2, {"own_excluded": 1}, "NVML lists 2 GPU process(es), the process list has 0 and 1 left out (sparktui's own, "
                             "exited or denied mid-scan)"),
    (3, {"skipped": {"vanished": 1, "denied": 1}}, "NVML lists 3 GPU process(es), the process list has 0 and 2 left "
                                                   "out (sparktui's own, exited or denied mid-scan)"),
])
def test_nvml_processes_with_no_rows_is_unknown_never_ok(count, extra, missing):
    v = g6v(snap(count=count, **extra))
    assert v.status is Status.UNKNOWN and v.id == "G6"
    assert v.summary == f"cannot tell: the process list is incomplete ({missing})"
    assert {e.what: e.value for e in v.evidence}["GPU processes missing from the process list"] == missing


@pytest.mark.parametrize("count, extra, judged", [
    (1, {"own_excluded": 1}, True),  # sparktui's own probe on the GPU: left out, not missing
    (1, {"skipped": {"vanished": 1, "denied": 0}}, True),  # exited between NVML's list and the scan
    (1, {"skipped": {"vanished": 0, "denied": 1}}, True),
    (2, {"own_excluded": 1}, False),  # one more than can be explained
    (0, {}, True),
])
def test_left_out_processes_account_for_missing_rows_exactly(count, extra, judged):
    v = g6v(snap(count=count, inside=False, **extra))
    assert ("the process list is incomplete" not in v.summary) is judged, v.summary


def test_every_listed_process_with_its_row_is_judged_as_before():
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, LORA)))
    assert v.status is Status.OK
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, LORA), count=3))  # one GPU process without a row
    assert v.status is Status.UNKNOWN and "NVML lists 3 GPU process(es), the process list has 2" in v.summary


def test_nvml_unavailable_is_not_this_rule():
    v = g6v(snap(job(3310, LORA, listed=False), nv_ok=False, count=4))
    assert "incomplete" not in v.summary and "NVML process list unavailable" in v.summary


def test_a_recording_whose_process_rows_were_emptied_is_not_ok():
    rec = read_recording(DEMO)
    base = judge(readings_from_recording(rec), Config())
    assert base.status is Status.FAIL
    for p in rec.processes:
        for h in p.get("history") or [p]:
            h["rows"] = []
    rec = json.loads(json.dumps(rec.__dict__))  # plain data again, as a spoilt file would give
    v = judge(readings_from_recording(Recording(**rec)), Config())
    assert v.status is Status.UNKNOWN, v.summary
    assert v.summary == "cannot tell: 25 of 26 process snapshots could not be judged (the 1 seen were ok)"
    ev = {e.what: e.value for e in v.evidence}
    assert ev["snapshot not judged"].endswith("cannot tell: the process list is incomplete (NVML lists 1 GPU "
                                              "process(es), the process list has 0)")


# -- review mode: an ok needs the run seen --------------------------------------------------------

def _review(blind: int, seen: int, worst=None):
    from tests.gotchas.builders import T0
    from tests.gotchas.builders import g6_history as history
    snaps = [snap(t=T0 + i, scan_error="process scan failed: OSError") for i in range(blind)]
    snaps += [snap(job(3310, LORA), t=T0 + blind + i) for i in range(seen)]
    if worst is not None:
        snaps.append(dict(worst, t=T0 + blind + seen))
    return g6v(history(*snaps), t0=T0)


@pytest.mark.parametrize("blind, seen, status", [
    (1, 9, Status.OK),  # 10%: REVIEW_BLIND_OK_SHARE exactly
    (3, 27, Status.OK),  # 10% again
    (3, 26, Status.UNKNOWN),  # 10.3%: a share nudged to 10.5% would call it ok
    (2, 18, Status.OK),
    (2, 17, Status.UNKNOWN),  # 10.5%
    (1, 8, Status.UNKNOWN),  # 11.1%
    (1, 1, Status.UNKNOWN),
    (0, 5, Status.OK),
])
def test_an_ok_over_a_recording_needs_all_but_a_tenth_of_it_seen(blind, seen, status):
    v = _review(blind, seen)
    assert v.status is status, v.summary
    if status is Status.UNKNOWN:
        assert v.summary == (f"cannot tell: {blind} of {blind + seen} process snapshots could not be judged "
                             f"(the {seen} seen were ok)")
        assert {e.what: e.value for e in v.evidence}["process snapshots judged"] == f"{blind} unknown, {seen} ok"


def test_a_failure_seen_stands_however_much_was_blind():
    v = _review(5, 0, worst=snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), job(3310, 16 * GIB)))
    assert v.status is Status.FAIL and "fail in 1 of 6 process snapshots; 5 could not be judged" in v.summary
