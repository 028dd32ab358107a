"""Hostile recordings: whatever a line holds, reading never raises (only RecordingError when nothing
is usable), a bad line is skipped, counted and named, `check --replay` never exits 70, the
dashboard keeps running, and memory stays bounded however long the file is."""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.cli.main import EXIT_INTERNAL, EXIT_USAGE, main
from sparktui.core import recording
from sparktui.core.config import Config
from sparktui.core.recording import RecordingError, read_recording, readings_from_recording
from sparktui.gotchas import REGISTRY
from sparktui.runner import run_checks
from sparktui.ui.app import SparkApp
from tests.ui.waiting import loaded

DEMO = Path(__file__).resolve().parents[2] / "src" / "sparktui" / "data" / "gb10-demo.jsonl"
DEMO_LINES = [json.loads(x) for x in DEMO.read_text().splitlines()]
HEADER = DEMO_LINES[0]
SAMPLE = next(x for x in DEMO_LINES if x["type"] == "sample")
SNAPSHOT = next(x for x in DEMO_LINES if x["type"] == "processes" and x["data"]["rows"])


def write(path: Path, lines: list, tail: str = "") -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines) + tail)
    return path


def bad_rows(rows_edit) -> dict:
    snap = json.loads(json.dumps(SNAPSHOT))
    rows_edit(snap["data"])
    return snap


BAD_SNAPSHOTS = [
    bad_rows(lambda d: d["rows"][0].update(rss_bytes="x")),
    bad_rows(lambda d: d["rows"][0].update(age_s=math.nan)),
    bad_rows(lambda d: d.update(rows=[1, 2])),
]


def demo_with_bad_snapshots(tmp_path: Path) -> Path:
    """The demo recording with three process snapshots the process table cannot show, at lines 17-19."""
    lines = DEMO_LINES[:16] + BAD_SNAPSHOTS + DEMO_LINES[16:]
    return write(tmp_path / "bad.jsonl", lines)


def test_bad_process_snapshots_are_skipped_counted_and_named(tmp_path):
    rec = read_recording(demo_with_bad_snapshots(tmp_path))
    assert rec.lines_skipped == 3
    assert rec.problems == [
        "line 17: processes snapshot with data.rows[0].rss_bytes: expected int, got str 'x'; skipped",
        "line 18: processes snapshot with data.rows[0].age_s: expected a finite number, got float nan; skipped",
        "line 19: processes snapshot with data.rows[0]: expected a ProcessRow object, got int 1; skipped",
    ]
    assert rec.skipped_notice() == f"3 lines skipped: {rec.problems[0]}"
    assert len(rec.processes) == sum(x["type"] == "processes" for x in DEMO_LINES)


async def test_the_dashboard_replays_a_recording_with_bad_process_rows_at_80x24_and_says_so(tmp_path):
    app = SparkApp(Config(), replay=str(demo_with_bad_snapshots(tmp_path)), speed=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        assert app.is_running and app.source.finished and not app.source.errors
        assert len(app.source.history) == sum(x["type"] == "sample" for x in DEMO_LINES)
        header = app.header_bar.render().plain
        # at 80 columns the header keeps whole words (the REPLAY position first); the label says the rest
        assert "bad.jsonl" in header and "3 lines skipped" in app.source.label, header
        assert any(n.message.startswith("bad.jsonl: 3 lines skipped: line 17: processes snapshot with "
                                        "data.rows[0].rss_bytes") for n in app.said)
    assert app.return_code in (0, None)


def test_check_replay_names_the_bad_lines_and_judges_the_rest(tmp_path, capsys):
    code = main(["check", "G3", "G4", "G6", "--replay", str(demo_with_bad_snapshots(tmp_path)), "--json"])
    out, err = capsys.readouterr()
    assert code not in (EXIT_INTERNAL, EXIT_USAGE) and "Traceback" not in err
    assert "line 19: processes snapshot with data.rows[0]: expected a ProcessRow object" in err
    assert {c["id"] for c in json.loads(out)["checks"]} == {"G3", "G4", "G6"}


def test_a_line_longer_than_the_cap_is_skipped_without_being_held(tmp_path, monkeypatch):
    cap = 1 << 20
    monkeypatch.setattr(recording, "MAX_LINE_BYTES", cap)
    p = write(tmp_path / "huge.jsonl", [HEADER, SAMPLE])
    with open(p, "a") as f:
        f.write('{"type": "event", "t": 1, "text": "' + "x" * (8 * cap) + '"}\n')
        f.write(json.dumps({**SAMPLE, "t": SAMPLE["t"] + 1}) + "\n")
    tracemalloc.start()
    try:
        rec = read_recording(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert rec.problems == [f"line 3: longer than {cap} bytes; skipped"] and len(rec.samples) == 2
    assert peak < 4 * cap, f"{peak} bytes held to skip one 8 MiB line"  # a chunk at a time, never the line


def test_an_empty_file_and_binary_garbage_are_recording_errors(tmp_path):
    for raw, words in ((b"", "empty file"), (b"\x00\xff" * 1000, "line 1 is not JSON"),
                       (b"[" * 100_000, "nested too deeply")):
        p = tmp_path / "r.jsonl"
        p.write_bytes(raw)
        try:
            read_recording(p)
        except RecordingError as e:
            assert words in str(e)
        else:
            raise AssertionError(f"{raw[:10]!r} read as a recording")


def test_a_truncated_last_line_is_torn_not_a_problem_line(tmp_path):
    p = write(tmp_path / "r.jsonl", [HEADER, SAMPLE], tail=json.dumps(SAMPLE)[:40])
    rec = read_recording(p)
    assert rec.torn_tail and rec.lines_skipped == 0 and len(rec.samples) == 1
    assert rec.skipped_notice().startswith("1 line skipped: line 3: torn last line ignored")


def many_samples(n: int, low_at: int) -> list:
    out = []
    for i in range(n):
        mem = dict(SAMPLE["mem"], MemAvailable=SAMPLE["mem"]["MemAvailable"] - (10**9 if i == low_at else 0))
        out.append({**SAMPLE, "t": 1000.0 + i, "mem": mem})
    return out


def test_a_long_recording_is_thinned_to_the_cap_keeping_the_first_last_and_lowest(tmp_path, monkeypatch):
    monkeypatch.setattr(recording, "MAX_KEPT_SAMPLES", 100)
    samples = many_samples(1000, low_at=333)
    rec = read_recording(write(tmp_path / "r.jsonl", [HEADER] + samples[:500] + [{"type": "segment"}] + samples[500:]))
    times = [s["t"] for s in rec.samples]
    assert rec.samples_seen == 1000 and rec.sample_stride == 16 and len(rec.samples) <= 100
    assert times[0] == 1000.0 and times[-1] == 1999.0 and 1333.0 in times and times == sorted(times)
    assert [times[i] for i in rec.segment_starts] == [1512.0]  # 1500 is off the stride of 16: its mark moves on
    assert "1000 samples: every 16th kept" in rec.thinning_note()
    low = readings_from_recording(rec).data("meminfo")
    assert low["t"] == 1333.0


def test_reading_memory_does_not_grow_with_the_recording(tmp_path, monkeypatch):
    monkeypatch.setattr(recording, "MAX_KEPT_SAMPLES", 100)
    peaks = []
    for n in (1_000, 4_000):
        p = write(tmp_path / f"r{n}.jsonl", [HEADER] + many_samples(n, low_at=n // 2))
        tracemalloc.start()
        try:
            read_recording(p)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert peaks[1] < 1.3 * peaks[0], f"peak {peaks[0]} bytes for 1,000 samples, {peaks[1]} for 4,000"


# --- wrong types at every field of every line kind --------------------------------------------------

garbage = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**30, max_value=10**30), st.text(max_size=6),
    st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -1e308, 0.0, -1.0]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))

LINE_KINDS = [
    SAMPLE, SNAPSHOT,
    {"type": "readings", "t": 5.0, "readings": {"host": {"probe": "host", "data": {"hostname": "x"}, "error": None,
                                                          "source": "x", "started_at": 1.0, "took_s": 0.1}}},
    {"type": "verdict", "t": 5.0, "id": "G3", "old": "ok", "status": "warn", "summary": "s"},
    {"type": "event", "t": 5.0, "text": "paused"},
    {"type": "segment", **{k: v for k, v in HEADER.items() if k != "type"}},
]


def paths_of(obj, prefix=()):
    """Every field path in a JSON value: (), ("gpus",), ("gpus", 0), ("gpus", 0, "temp_c") ..."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths_of(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths_of(v, prefix + (i,))


FIELD_PATHS = [(i, path) for i, line in enumerate(LINE_KINDS) for path in paths_of(line) if path]


def with_value(obj, path, value):
    obj = json.loads(json.dumps(obj))
    target = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return obj


def judge_all(p: Path) -> None:
    """Read and judge every check the recording answers; only RecordingError may come out."""
    try:
        rec = read_recording(p)
    except RecordingError:
        return
    readings = readings_from_recording(rec)
    verdicts, _ = run_checks(list(REGISTRY), Config(), readings)
    assert not [v for v in verdicts if "judge error" in v.summary], [v.summary for v in verdicts]


@settings(max_examples=150)
@given(where=st.sampled_from(FIELD_PATHS), value=garbage)
def test_a_wrong_value_at_any_field_of_any_line_never_raises(tmp_path_factory, where, value):
    i, path = where
    bad = with_value(LINE_KINDS[i], path, value)
    p = tmp_path_factory.mktemp("r") / "r.jsonl"
    write(p, [HEADER, SAMPLE, bad, {**SAMPLE, "t": SAMPLE["t"] + 5}], tail="")
    judge_all(p)


@settings(max_examples=100)
@given(lines=st.lists(st.one_of(st.binary(max_size=60),
                                st.sampled_from([json.dumps(x).encode() for x in LINE_KINDS]),
                                st.sampled_from([b"NaN", b"[1,2]", b'{"type": "sample", "t": 1e999}', b"\xff\xfe",
                                                 b'{"type": "processes", "data": {"rows": null}}'])),
                      max_size=12),
       torn=st.binary(max_size=30))
def test_binary_garbage_and_shuffled_lines_never_raise(tmp_path_factory, lines, torn):
    p = tmp_path_factory.mktemp("r") / "r.jsonl"
    p.write_bytes(json.dumps(HEADER).encode() + b"\n" + b"\n".join(lines) + b"\n" + torn)
    judge_all(p)


@settings(max_examples=25)
@given(where=st.sampled_from(FIELD_PATHS), value=garbage, shuffle=st.randoms(use_true_random=False))
def test_check_replay_never_exits_70(tmp_path_factory, capsys, where, value, shuffle):
    i, path = where
    lines = [SAMPLE, {**SAMPLE, "t": SAMPLE["t"] + 5}, SNAPSHOT, with_value(LINE_KINDS[i], path, value)]
    shuffle.shuffle(lines)  # out-of-order timestamps too
    p = write(tmp_path_factory.mktemp("r") / "r.jsonl", [HEADER] + lines)
    code = main(["check", "--replay", str(p), "--json"])
    err = capsys.readouterr().err
    assert code != EXIT_INTERNAL and "Traceback" not in err, err


def test_check_replay_of_a_thinned_recording_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(recording, "MAX_KEPT_SAMPLES", 100)
    p = write(tmp_path / "r.jsonl", [HEADER] + many_samples(1000, low_at=333))
    assert main(["check", "G3", "--replay", str(p)]) != EXIT_INTERNAL
    out, err = capsys.readouterr()
    assert "1000 samples: every 16th kept" in err
    assert out.startswith(f"recording {p} (1000 samples over 16.6 min, every 16th judged"), out


def test_every_field_of_every_line_as_a_list_or_an_object_never_raises(tmp_path):
    """Exhaustive, not sampled: the derandomized examples above never put a list at a verdict line's
    "status" on Python 3.11, and a run on Python 3.12 did (`[] not in STATUS_NAMES`: TypeError,
    unhashable). Every field path of every line kind, each as [] and as {}."""
    for n, (i, path) in enumerate(FIELD_PATHS):
        for value in ([], {}):
            p = tmp_path / f"{n}-{type(value).__name__}.jsonl"
            write(p, [HEADER, SAMPLE, with_value(LINE_KINDS[i], path, value), {**SAMPLE, "t": SAMPLE["t"] + 5}], tail="")
            judge_all(p)
            p.unlink()


@pytest.mark.parametrize("field", ["status", "old"])
@pytest.mark.parametrize("value", [[], ["warn"], {"warn": 1}])
def test_a_verdict_line_with_an_unhashable_status_is_left_out_or_loses_only_its_old(tmp_path, field, value):
    verdict = {"type": "verdict", "t": SAMPLE["t"] + 1, "id": "G3", "status": "warn", "old": "ok", "summary": "s"}
    p = tmp_path / "r.jsonl"
    write(p, [HEADER, SAMPLE, {**verdict, field: value}], tail="")
    rec = read_recording(p)
    if field == "status":
        assert rec.verdicts == [] and rec.lines_skipped == 1
        assert "without a check id and a known status" in rec.problems[0]
    else:
        assert [(v["status"], v["old"]) for v in rec.verdicts] == [("warn", None)]
