"""The "ok on garbage" cases of issue 15, one test each: each was ok (or a crash) before.

Values no hardware produces, and wrongly typed fields, in a stored snapshot are refused where it is
read (core/validate.py PHYSICAL_BOUNDS and the declared shapes): the reading is an error naming the
field, and the judge says unknown with that reason. A G6 review whose snapshots go back in time is
not "ok throughout".
"""

from __future__ import annotations

import json

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import read_snapshot
from sparktui.core.verdict import Status
from sparktui.gotchas import REGISTRY
from sparktui.runner import judge
from tests.hostile.test_snapshot_fields import source_doc
from tests.gotchas.builders import g6_history as history, g6v, job, snap
from sparktui.testing.spoil import H200
from sparktui.testing.spoil import with_value as _with

GIB = 1024 ** 3


def _judged_from_file(tmp_path, gid: str, path: tuple, value):
    doc = _with(source_doc("gb10-demo"), ("readings",) + path, value)
    (tmp_path / "snap.json").write_text(json.dumps(doc))
    readings = read_snapshot(tmp_path / "snap.json")[0]
    return readings.get_reading(path[0]), judge(REGISTRY[gid], readings, Config())


@pytest.mark.parametrize("gid, path, value, field", [
    ("G4", ("telemetry", "data", "samples", "*", "gpus", 0, "temp_c"), -300,
     "telemetry.samples[0].gpus[0].temp_c: -300 is outside what the machine can report (from -40 to 130)"),
    ("G3", ("meminfo", "data", "MemAvailable"), -1,
     "meminfo.MemAvailable: -1 is outside what the machine can report (from 0 to 2.19902e+12)"),
    ("G3", ("meminfo", "data", "MemTotal"), 0,
     "meminfo.MemTotal: 0 is outside what the machine can report (over 0 to 2.19902e+12)"),
    ("G7", ("nvml", "data", "devices", 0, "compute_capability", "value"), "12.1",
     "nvml.devices[0].compute_capability.value: expected a list, got str '12.1'"),
    ("G6", ("processes", "data", "rows", 1, "gpu_mem_bytes"), "x",
     "processes.rows[1].gpu_mem_bytes: expected int, got str 'x'"),
])
def test_an_impossible_or_wrongly_typed_stored_value_is_a_reading_error_and_unknown(tmp_path, gid, path, value, field):
    reading, v = _judged_from_file(tmp_path, gid, path, value)
    assert reading.data is None and reading.error.startswith(f"unusable data: field {field}")
    assert v.status is Status.UNKNOWN and "judge error" not in v.summary
    assert any(field in str(e.value) for e in v.evidence) or field in v.summary


def test_g7_on_a_capability_written_as_a_string_is_a_measurement_error_not_a_skip(tmp_path):
    """NVML's "12.1" beside a target torch that reads another GPU: no quiet fallback to a skip."""
    doc = _with(source_doc("h200"), ("readings", "nvml", "data", "devices", 0, "compute_capability", "value"), "12.1")
    (tmp_path / "snap.json").write_text(json.dumps(doc))
    readings = read_snapshot(tmp_path / "snap.json")[0]
    assert judge(REGISTRY["G7"], read_snapshot(H200 / "snapshot.json")[0], Config()).status is Status.SKIP  # an H200
    v = judge(REGISTRY["G7"], readings, Config())
    assert v.status is Status.UNKNOWN
    assert v.summary == ("cannot tell: measurement error: NVML's reading is unusable data: field "
                         "nvml.devices[0].compute_capability.value: expected a list, got str '12.1'")


def test_g6_rows_null_while_nvml_counts_processes_is_unknown():
    v = g6v(snap(job(3310, 10 * GIB), rows=None))
    assert v.status is Status.UNKNOWN and v.summary == "cannot see the processes: the snapshot has no process list"


def test_a_g6_review_whose_snapshots_go_back_in_time_is_not_ok():
    ok = [snap(job(3310, 10 * GIB), t=t) for t in (1000.0, 1060.0, 1120.0)]
    assert g6v(history(*ok)).status is Status.OK
    v = g6v(history(ok[0], ok[2], ok[1]))
    assert v.status is Status.UNKNOWN
    assert v.summary.startswith("cannot tell: the recording's process snapshots are out of order (snapshot 3 of 3")


def test_check_on_a_snapshot_with_a_wrongly_typed_field_exits_unknown_naming_it(tmp_path, capsys):
    from sparktui.cli.main import main

    doc = _with(source_doc("gb10-demo"), ("readings", "meminfo", "data", "MemAvailable"), "lots")
    (tmp_path / "snap.json").write_text(json.dumps(doc))
    assert main(["check", "G3", "--snapshot", str(tmp_path / "snap.json"), "--json"]) == 3
    (g3,) = json.loads(capsys.readouterr().out)["checks"]
    assert g3["status"] == "unknown" and "judge error" not in g3["summary"]
    assert "unusable data: field meminfo.MemAvailable: expected int, got str 'lots'" in g3["summary"]


# Each physical bound, just inside and just outside, beside the real GB10 readings (FACTS.md /
# FIELD-FACTS.md: 81-85 °C under load, 3-11 W idle and ~100 W loaded, ~2418 MHz SM clock, MemTotal
# 121.7 GiB): a real reading is never called impossible, a value past the bound always is.
GB10_REAL = [("GpuRow", "temp_c", 85.0), ("GpuRow", "power_w", 3.0), ("GpuRow", "power_w", 99.0),
             ("GpuRow", "sm_mhz", 2418.0), ("GpuRow", "util_gpu", 100.0),
             ("MemInfo", "MemTotal", 130_674_379_980.0), ("MemInfo", "MemAvailable", 0.0)]


@pytest.mark.parametrize("shape, name, value", GB10_REAL)
def test_real_gb10_readings_are_within_the_physical_bounds(shape, name, value):
    from sparktui.core.validate import out_of_bounds

    assert out_of_bounds(shape, name, value) is None


@pytest.mark.parametrize("key", sorted({("GpuRow", k) for k in ("temp_c", "power_w", "power_limit_w", "sm_mhz", "util_gpu")}
                                      | {("MemInfo", "MemTotal"), ("MemInfo", "MemAvailable"), ("ProcessRow", "rss_bytes")}))
def test_each_bound_holds_just_inside_and_fails_just_outside(key):
    from sparktui.core.validate import PHYSICAL_BOUNDS, out_of_bounds

    low, high, exclusive = PHYSICAL_BOUNDS[key]
    step = max(abs(high) * 1e-3, 1e-3)
    assert out_of_bounds(*key, high) is None and out_of_bounds(*key, high + step) is not None
    assert out_of_bounds(*key, low - step) is not None
    assert (out_of_bounds(*key, low) is not None) is exclusive and out_of_bounds(*key, low + step) is None
