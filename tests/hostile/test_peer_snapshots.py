"""Hostile peer snapshots through the fleet path: parse the peer's stdout, judge it, compare it.

A peer's stdout is whatever its shell and its sparktui printed: any field at any depth may hold any
JSON value (tests/hostile/test_snapshot_fields.py has the spoilings). Parsing either refuses it with
a reason or keeps the readings (a wrongly typed field making its reading an error that names the
field); then no judge raises ("judge error (a sparktui bug", 27 of 80 such snapshots before the
shape check), and the comparison against this machine builds, with unknown cells rather than a
crash or a made-up match.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.core.config import Config
from sparktui.fleet.compare import Machine, compare
from sparktui.fleet.peers import PeerOutputError, judge_peer, local_machine, parse_snapshot_output
from sparktui.testing.spoil import DEEP, DEEP_JSON, source_doc, source_paths
from tests.hostile.test_snapshot_fields import HOSTILE
from tests.test_verdicts_never_lie import JUDGE_ERROR, _source, _with


def peer_stdout(doc: dict) -> bytes:
    return ("Welcome to spark-2\n" + json.dumps(doc).replace(json.dumps(DEEP), DEEP_JSON) + "\n").encode()


@settings(max_examples=80)
@given(pick=st.integers(min_value=0), value=HOSTILE)
def test_a_hostile_peer_snapshot_is_refused_or_judged_and_compared_without_a_crash(pick, value):
    paths = source_paths("h200")
    path = paths[pick % len(paths)]
    try:
        readings, _, _, notes = parse_snapshot_output(peer_stdout(_with(source_doc("h200"), path, value)))
    except PeerOutputError as e:
        assert "\n" not in str(e)
        return
    crashed = [f"{v.id}: {v.summary}" for v in judge_peer(readings, Config()) if JUDGE_ERROR in v.summary]
    assert not crashed, f"{path} = {str(value)[:80]!r}: " + "; ".join(crashed)
    table = compare([local_machine(_source("h200")), Machine("spark-2", readings)])
    json.dumps(table.to_dict())  # every cell is plain data


def test_a_wrongly_typed_peer_field_is_an_error_naming_the_field_and_the_judge_says_why():
    doc = _with(source_doc("h200"), ("readings", "nvml", "data", "devices", 0, "compute_capability", "value"), "12.1")
    doc = _with(doc, ("readings", "target", "data", "torch_cuda", "devices", 0, "capability"), "12.1")
    readings, _, _, _ = parse_snapshot_output(peer_stdout(doc))
    nvml = readings.get_reading("nvml")
    assert nvml.data is None
    assert nvml.error == ("unusable data: field nvml.devices[0].compute_capability.value: "
                          "expected a list, got str '12.1'")
    g7 = next(v for v in judge_peer(readings, Config(), ["G7"]))
    assert g7.status.value == "unknown" and any("expected a list, got str '12.1'" in str(e.value) for e in g7.evidence)
