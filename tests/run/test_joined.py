"""A recording's run readings, written as deltas while the run goes on, joined on replay into the
whole run (core/recording.py ``joined_run`` via ``header_readings``)."""

from __future__ import annotations

import json

from sparktui.core.readings import Reading
from sparktui.core.recording import header_readings, joined_run, read_recording


def _run(points, **more):
    return Reading("run", {"found": True, "pids": [42], "alive": True, "progress": points, "events": [],
                           "first": points[0] if points else None, **more}, started_at=points[-1]["t"] if points else 0.0)


def _pts(a, b, t0=1000.0):
    return [{"t": t0 + i, "step": i, "format": "tqdm"} for i in range(a, b)]


def test_deltas_join_into_the_whole_run_in_time_order():
    r = joined_run(_run(_pts(0, 10)), _run(_pts(10, 20), alive=False))
    assert [p["step"] for p in r.data["progress"]] == list(range(20))
    assert r.data["alive"] is False  # the newest line's facts win
    assert r.data["first"]["step"] == 0


def test_a_point_both_lines_hold_is_kept_once_and_an_older_one_is_not_put_back():
    r = joined_run(_run(_pts(0, 10)), _run(_pts(8, 12)))
    assert [p["step"] for p in r.data["progress"]] == list(range(12))
    r = joined_run(_run(_pts(0, 10)), _run(_pts(0, 3, t0=900.0)))  # times before the last kept: not put back
    assert [p["step"] for p in r.data["progress"]] == list(range(10))


def test_events_are_joined_without_repeats():
    e1 = {"kind": "nonfinite", "t": 1005.0, "field": "loss", "value": "nan", "text": "loss nan"}
    e2 = {"kind": "error", "t": 1019.0, "error": "cuda_oom", "text": "torch.OutOfMemoryError: CUDA out of memory."}
    r = joined_run(_run(_pts(0, 10), events=[e1]), _run(_pts(10, 20), events=[e1, e2]))
    assert r.data["events"] == [e1, e2]


def test_a_malformed_line_does_not_cost_the_run():
    good = _run(_pts(0, 5))
    assert joined_run(good, Reading("run", None, error="could not read")).data["progress"] == good.data["progress"]
    odd = Reading("run", {"progress": "not a list", "events": [1, "x"]})
    assert joined_run(good, odd).data["progress"] == good.data["progress"]


def test_a_replay_joins_every_run_line_of_the_recording(tmp_path):
    f = tmp_path / "rec.jsonl"
    head = {"type": "header", "kind": "sparktui-recording", "schema": 1, "sparktui_version": "0", "started_at": 999.0,
            "interval_s": 1.0, "host": {}, "static": {}}
    lines = [head, {"type": "sample", "t": 1000.0, "gpus": [], "mem": {}}]
    for a in range(0, 30, 10):
        lines.append({"type": "readings", "t": 1000.0 + a, "readings": {"run": _run(_pts(a, a + 10)).to_dict()}})
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = header_readings(read_recording(str(f)))
    assert [p["step"] for p in r.data("run")["progress"]] == list(range(30))
