"""Verdict model, snapshots and config: the contracts every other layer relies on."""

from __future__ import annotations

import json

import pytest

from sparktui.core.config import Config, ConfigError, describe_settings, load_config
from sparktui.core.readings import Reading, Readings, SnapshotError, read_snapshot, write_snapshot
from sparktui.core.verdict import Evidence, Status, Verdict, worst
from sparktui.gotchas import IDS, REGISTRY, UnknownGotcha, normalize_id
from sparktui.runner import judge, run_checks


def test_worst_orders_fail_over_warn_over_unknown_over_ok():
    assert worst([Status.OK, Status.UNKNOWN]) is Status.UNKNOWN
    assert worst([Status.UNKNOWN, Status.WARN, Status.SKIP]) is Status.WARN
    assert worst([Status.WARN, Status.FAIL, Status.OK]) is Status.FAIL
    assert worst([Status.SKIP]) is Status.OK


def test_verdict_round_trips_through_json():
    v = Verdict("G3", Status.WARN, "low", (Evidence("MemAvailable", "/proc/meminfo", 123),), fix="x", details=("a",),
                measured_at=1.5, took_s=0.2)
    assert Verdict.from_dict(json.loads(json.dumps(v.to_dict()))) == v


def test_registry_has_the_fixed_ids_in_order_with_texts():
    assert IDS == tuple(f"G{i}" for i in range(1, 15))
    for gid, g in REGISTRY.items():
        assert g.id == gid and g.title and g.symptom and g.cause and g.check and g.fix, gid
        assert "```" in g.fix, f"{gid}: fix text needs a command block"
        card = g.explain()
        assert card.startswith(f"# {gid}: {g.title}") and "## Fix" in card


def test_only_g5_is_intrusive():
    assert [g.id for g in REGISTRY.values() if g.intrusive] == ["G5"]


@pytest.mark.parametrize("text,expected", [("g4", "G4"), ("G04", "G4"), ("10", "G10"), (" g1 ", "G1")])
def test_id_spellings(text, expected):
    assert normalize_id(text) == expected


@pytest.mark.parametrize("bad", ["G0", "G15", "x", "", "GG1"])
def test_bad_ids(bad):
    with pytest.raises(UnknownGotcha):
        normalize_id(bad)


def test_snapshot_round_trip_and_judging_it_needs_no_machine(tmp_path):
    r = Readings()
    r.add(Reading("nvml", {"devices": [{"index": 0, "name": {"value": "NVIDIA H200"},
                                        "compute_capability": {"value": [9, 0]}}]}, source="NVML", started_at=10.0, took_s=0.1))
    p = tmp_path / "snap.json"
    write_snapshot(p, r, {"hostname": "spark-1"}, "0.1.0")
    back, host, doc = read_snapshot(p)
    assert host == {"hostname": "spark-1"} and doc["schema"] == 1
    assert back.get_reading("nvml") == r.get_reading("nvml")
    verdicts, _ = run_checks(["G7"], Config(), back)
    assert verdicts[0].status is Status.SKIP and "NVIDIA H200" in verdicts[0].summary
    assert verdicts[0].measured_at == pytest.approx(10.1)


@pytest.mark.parametrize("content,needle", [
    ("{not json", "not JSON"),
    ('{"kind": "other"}', "not a sparktui snapshot"),
    ('{"kind": "sparktui-snapshot", "schema": 99, "readings": {}}', "schema 99"),
    ('{"kind": "sparktui-snapshot", "schema": 1, "readings": {"x": 3}}', "reading 'x' is malformed"),
])
def test_bad_snapshots_give_clear_errors(tmp_path, content, needle):
    p = tmp_path / "s.json"
    p.write_text(content)
    with pytest.raises(SnapshotError, match=needle):
        read_snapshot(p)


def test_a_judge_bug_becomes_unknown_not_a_crash():
    from dataclasses import replace

    def broken(r, cfg):
        raise ZeroDivisionError("boom")

    g = replace(REGISTRY["G7"], judge=broken)
    v = judge(g, Readings(), Config())
    assert v.status is Status.UNKNOWN and "judge error" in v.summary and "boom" in v.summary


def test_missing_reading_is_never_ok():
    for gid, g in REGISTRY.items():
        v = judge(g, Readings(), Config())
        assert v.status in (Status.UNKNOWN, Status.SKIP), (gid, v)
        assert v.summary


# --- config ---------------------------------------------------------------------------------------

def test_defaults_without_a_file():
    cfg = load_config()
    assert cfg.target.timeout_s == 90 and cfg.hardware.rated_power_w == 140 and cfg.source is None


def test_a_file_overrides_and_flags_override_the_file(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('[target]\npython = "/envs/train/bin/python"\n[scan]\npaths = ["/runs", "/configs"]\n'
                 '[hardware]\nrated_power_w = 240\n')
    cfg = load_config(p)
    assert cfg.target.python == "/envs/train/bin/python" and cfg.scan.paths == ["/runs", "/configs"]
    assert cfg.hardware.rated_power_w == 240.0
    assert cfg.with_overrides(target={"python": "/other"}, scan={"paths": None}).target.python == "/other"


def test_config_dir_file_is_picked_up(tmp_path, monkeypatch):
    d = tmp_path / "xdg_config_home" / "sparktui"
    d.mkdir(parents=True)
    (d / "config.toml").write_text("[memory]\navailable_floor_gib = 16\n")
    assert load_config().memory.available_floor_gib == 16


@pytest.mark.parametrize("content,needle", [
    ("[target\n", "not valid TOML"),
    ("[nosuch]\nx = 1\n", "unknown section [nosuch]"),
    ("[target]\npyton = 'x'\n", "[target] pyton: unknown setting"),
    ("[target]\ntimeout_s = 'slow'\n", "[target] timeout_s: expected a number"),
    ("[target]\ntimeout_s = 0\n", "must be greater than 0"),
    ("[scan]\npaths = 'a'\n", "expected a list of strings"),
    ("[target]\ncuda_smoke = 1\n", "expected true or false"),
    ("[memory]\ncache_warn_fraction = 2\n", "must be in (0, 1]"),
    ("target = 3\n", "[target] must be a table"),
])
def test_bad_config_values_are_clear_errors(tmp_path, content, needle):
    p = tmp_path / "bad.toml"
    p.write_text(content)
    with pytest.raises(ConfigError) as e:
        load_config(p)
    assert needle in str(e.value) and str(p) in str(e.value)


def test_missing_explicit_config_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")


def test_every_setting_is_described():
    rows = describe_settings()
    assert all(help for _, _, _, help in rows)
    assert ("target.timeout_s", "a number", 90.0) == rows[1][:3]


@pytest.mark.parametrize("field,value", [("data", '"x"'), ("data", "[]"), ("data", "3"), ("error", "{}"),
                                         ("started_at", "1" + "0" * 400), ("took_s", "NaN"), ("started_at", "[]")])
def test_snapshot_readings_of_the_wrong_shape_are_snapshot_errors(tmp_path, field, value):
    p = tmp_path / "s.json"
    write_snapshot(p, Readings({"host": Reading("host", {"hostname": "a"})}), {}, "t")
    text = p.read_text()
    doc = json.loads(text)
    doc["readings"]["host"][field] = "@@"
    p.write_text(json.dumps(doc).replace('"@@"', value))  # value: JSON text
    with pytest.raises(SnapshotError, match="malformed"):
        read_snapshot(p)


def test_deep_or_oversized_snapshots_are_snapshot_errors(tmp_path, monkeypatch):
    from sparktui.core import readings

    p = tmp_path / "s.json"
    p.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(SnapshotError, match="nested too deeply"):
        read_snapshot(p)
    monkeypatch.setattr(readings, "MAX_SNAPSHOT_BYTES", 10)
    with pytest.raises(SnapshotError, match="more than a snapshot can be"):
        read_snapshot(p)


@pytest.mark.parametrize("text", ["check_window_s = inf", "check_window_s = nan", "interval_s = 1e300"])
def test_non_finite_or_absurd_config_numbers_are_config_errors(tmp_path, text):
    p = tmp_path / "c.toml"
    p.write_text(f"[telemetry]\n{text}\n")
    with pytest.raises(ConfigError):
        load_config(p)
