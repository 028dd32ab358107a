"""Recordings: written line by line, read back despite a torn tail, replayed at a chosen speed."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest

from sparktui.cli.main import EXIT_FAIL, EXIT_OK, EXIT_USAGE, main
from sparktui.core.config import Config
from sparktui.core.recording import (RecordingError, RecordingWriter, Replay, header, read_recording,
                                     readings_from_samples)
from sparktui.probes import nvml
from sparktui.probes.sampler import Sampler
from sparktui.runner import run_checks
from sparktui.testing import fake_nvml
from tests.ui.waiting import wait_for

DEMO = Path(__file__).resolve().parents[1] / "src" / "sparktui" / "data" / "gb10-demo.jsonl"


def sample(t, temp=70):
    return {"t": t, "gpus": [{"index": 0, "temp_c": temp, "errors": {}}], "mem": {"MemAvailable": 1, "MemTotal": 2}}


def head(**kw):
    return header(interval_s=1.0, host={"hostname": "h"}, static={}, version="test", started_at=0.0, **kw)


def write(path, samples, procs=()):
    with RecordingWriter(path, head()) as w:
        for s in samples:
            w.sample(s)
        for p in procs:
            w.processes(p)


def test_written_recording_reads_back(tmp_path):
    f = tmp_path / "r.jsonl"
    write(f, [sample(1.0), sample(2.0, 71)], [{"t": 1.5, "rows": []}])
    lines = f.read_text().splitlines()
    assert json.loads(lines[0])["kind"] == "sparktui-recording" and len(lines) == 4
    rec = read_recording(f)
    assert rec.samples == [sample(1.0), sample(2.0, 71)] and rec.processes == [{"t": 1.5, "rows": []}]
    assert rec.problems == [] and not rec.torn_tail and rec.duration_s == 1.0


def test_torn_last_line_is_tolerated_and_malformed_lines_are_named(tmp_path):
    f = tmp_path / "r.jsonl"
    write(f, [sample(1.0), sample(2.0)])
    with open(f, "a") as fh:
        fh.write("{this is not json\n")
        fh.write(json.dumps({"type": "sample", "t": 3.0, "gpus": [], "mem": {}}) + "\n")
        fh.write('{"type": "sample", "t": 4.0, "gp')  # the writer was killed mid-line
    rec = read_recording(f)
    assert [s["t"] for s in rec.samples] == [1.0, 2.0, 3.0] and rec.torn_tail
    assert rec.problems[0].startswith("line 4: not JSON") and rec.problems[1].startswith("line 6: torn last line")


def test_continuing_a_recording_appends_after_a_torn_line(tmp_path):
    f = tmp_path / "r.jsonl"
    write(f, [sample(1.0)])
    with open(f, "a") as fh:
        fh.write('{"type": "sam')
    write(f, [sample(5.0)])
    rec = read_recording(f)
    assert [s["t"] for s in rec.samples] == [1.0, 5.0]
    assert len(rec.problems) == 1 and "not JSON" in rec.problems[0]


def test_unusable_files_give_clear_errors(tmp_path):
    with pytest.raises(RecordingError, match="no such file"):
        read_recording(tmp_path / "missing.jsonl")
    other = tmp_path / "other.jsonl"
    other.write_text('{"hello": 1}\n')
    with pytest.raises(RecordingError, match="not a sparktui recording"):
        read_recording(other)
    with pytest.raises(RecordingError, match="refusing to append"):
        RecordingWriter(other, head())
    assert other.read_text() == '{"hello": 1}\n'  # untouched


def test_replay_paces_by_timestamps_over_speed(tmp_path):
    rec = read_recording(_file(tmp_path, [sample(100.0 + i) for i in range(4)]))  # 3 s of recording
    t0 = time.monotonic()
    got = list(Replay(rec, speed=10.0))
    took = time.monotonic() - t0
    assert [s["t"] for s in got] == [100.0, 101.0, 102.0, 103.0]
    assert 0.29 <= took < 2.0, took  # 3 s / 10; never early


def test_replay_as_fast_as_possible_and_stop(tmp_path):
    rec = read_recording(_file(tmp_path, [sample(float(i)) for i in range(2000)]))
    t0 = time.monotonic()
    assert len(list(Replay(rec, speed=None))) == 2000
    assert time.monotonic() - t0 < 1.0
    slow = Replay(rec, speed=1.0)  # would take 2000 s
    threading.Timer(0.1, slow.stop).start()
    t0 = time.monotonic()
    assert len(list(slow)) < 5 and time.monotonic() - t0 < 2.0


def test_replay_pause_does_not_count_against_the_schedule(tmp_path):
    rec = read_recording(_file(tmp_path, [sample(0.0), sample(0.2), sample(0.4)]))
    r = Replay(rec, speed=1.0)
    it = iter(r)
    next(it)
    r.pause()
    threading.Timer(0.3, r.resume).start()
    t0 = time.monotonic()
    next(it)
    assert time.monotonic() - t0 >= 0.3
    t1 = time.monotonic()
    next(it)
    assert time.monotonic() - t1 < 0.35  # the next one is 0.2 s after, not bunched or delayed by the pause


def _file(tmp_path, samples):
    f = tmp_path / "r.jsonl"
    write(f, samples)
    return f


BAD_SAMPLES = [  # (line as written, what its problem names)
    ({"type": "sample", "t": 3.0, "gpus": [], "mem": 5}, '"mem" a number'),
    ({"type": "sample", "t": 4.0, "gpus": "x", "mem": {}}, '"gpus" a string'),
    ({"type": "sample", "t": 5.0, "gpus": [1], "mem": {}}, "gpus[0] a number"),
    ({"type": "sample", "t": 6.0, "gpus": [{"index": 0, "temp_c": "hot"}]}, "gpus[0].temp_c a string"),
    ({"type": "sample", "t": 7.0, "gpus": [{"index": 0, "reasons": "sw_thermal_slowdown"}]}, "gpus[0].reasons"),
    ({"type": "sample", "t": 8.0, "gpus": [{"index": 0, "errors": ["x"]}]}, "gpus[0].errors"),
    ({"type": "sample", "t": 9.0, "gpus": [], "mem": {"MemAvailable": "lots"}}, "mem.MemAvailable a string"),
    ({"type": "sample", "t": 10.0, "gpus": [], "errors": "nvml"}, '"errors" is not an object'),
    ({"type": "sample", "t": float("nan"), "gpus": []}, 'finite numeric "t"'),
    ({"type": "sample", "t": "11", "gpus": []}, 'finite numeric "t"'),
    ({"type": "processes", "t": 12.0, "data": {"t": "noon", "rows": []}}, "processes snapshot with data.t: expected float, got str 'noon'"),
]


def _with_bad_lines(tmp_path):
    """Two good samples, every kind of malformed line, then two more good samples."""
    f = tmp_path / "r.jsonl"
    write(f, [sample(1.0), sample(2.0)])
    with open(f, "a") as fh:
        for obj, _ in BAD_SAMPLES:
            fh.write(json.dumps(obj) + "\n")
    with RecordingWriter(f, head()) as w:
        w.sample(sample(20.0, 80))
        w.sample(sample(21.0, 81))
    return f


def test_samples_of_the_wrong_shape_are_skipped_and_named(tmp_path):
    rec = read_recording(_with_bad_lines(tmp_path))
    assert [s["t"] for s in rec.samples] == [1.0, 2.0, 20.0, 21.0] and rec.processes == []
    assert len(rec.problems) == len(BAD_SAMPLES)
    for n, ((_, why), problem) in enumerate(zip(BAD_SAMPLES, rec.problems), start=4):
        assert problem.startswith(f"line {n}: ") and why in problem and problem.endswith("skipped"), problem


def test_check_replay_judges_what_is_left_of_a_recording_with_malformed_samples(tmp_path, capsys):
    f = _with_bad_lines(tmp_path)
    rc = main(["check", "--replay", str(f), "--json"])
    out = capsys.readouterr()
    assert rc in (EXIT_OK, 1, 2, 3), out.err  # judged, not an internal error (70)
    assert [v["id"] for v in json.loads(out.out)["checks"]] == ["G3", "G4", "G6"]
    assert 'line 4: sample with "mem" a number' in out.err and 'line 5: sample with "gpus" a string' in out.err


def _replay_source(path, speed, on_sample=None):
    from sparktui.live.sources import ReplaySource

    done = threading.Event()
    got: list[tuple[float, float]] = []  # (sample t, monotonic time it arrived)

    def take(s):
        got.append((s["t"], time.monotonic()))
        if on_sample is not None:
            on_sample(s)

    src = ReplaySource(str(path), Config(), take, lambda p: None, speed, on_finished=done.set)
    return src, got, done


def test_the_dashboards_replay_skips_malformed_lines_says_so_and_finishes(tmp_path):
    src, got, done = _replay_source(_with_bad_lines(tmp_path), None)
    assert src.record_error.startswith(f"r.jsonl: {len(BAD_SAMPLES)} lines skipped: line 4:")
    src.start()
    try:
        assert done.wait(10) and src.finished
    finally:
        src.stop()
    assert [t for t, _ in got] == [1.0, 2.0, 20.0, 21.0] and len(src.history) == 4 and src.errors == []


def test_a_sample_the_dashboard_cannot_take_costs_that_sample_not_the_replay(tmp_path):
    def on_sample(s):
        if s["t"] == 2.0:
            raise RuntimeError("widget fell over")

    src, got, done = _replay_source(_file(tmp_path, [sample(float(i)) for i in range(5)]), None, on_sample)
    src.start()
    try:
        assert done.wait(10) and src.finished
    finally:
        src.stop()
    assert [t for t, _ in got] == [0.0, 1.0, 2.0, 3.0, 4.0] and src.skipped == 1
    assert src.errors == ["sample 3 of 5 skipped: RuntimeError('widget fell over')"]
    assert "sample 3 of 5 skipped" in src.label and src.label.startswith("replay of r.jsonl")


def test_a_replay_feed_that_fails_says_where_and_still_finishes(tmp_path):
    src, got, done = _replay_source(_file(tmp_path, [sample(float(i)) for i in range(5)]), None)

    class Failing:
        position = 0

        def __iter__(self):
            for s in src.recording.samples[:2]:
                self.position += 1
                yield s
            raise OSError("gone")

        def stop(self):
            pass

    src.replay = Failing()
    src.start()
    try:
        assert done.wait(10) and src.finished
    finally:
        src.stop()
    assert len(got) == 2 and src.errors == ["replay stopped at sample 2 of 5: OSError('gone')"]
    assert "replay stopped at sample 2 of 5" in src.label


def test_the_dashboards_replay_paces_samples_at_its_speed(tmp_path):
    src, got, done = _replay_source(_file(tmp_path, [sample(100.0 + i) for i in range(4)]), 10.0)  # 3 s
    t0 = time.monotonic()
    src.start()
    try:
        assert done.wait(30)
    finally:
        src.stop()
    took = time.monotonic() - t0
    assert [t for t, _ in got] == [100.0, 101.0, 102.0, 103.0]
    assert 0.29 <= took < 5.0, took  # 3 s / 10: never early, generous late (a loaded CI)
    arrived = [m for _, m in got]
    assert all(b - a >= 0.09 for a, b in zip(arrived, arrived[1:])), arrived  # spread out, not bunched


def _paced(rec, speed, limit=10.0):
    """Replay ``rec`` at ``speed`` on a thread, stopped after ``limit`` s: (sample times, seconds taken)."""
    r = Replay(rec, speed=speed)
    got: list[float] = []
    t0 = time.monotonic()
    th = threading.Thread(target=lambda: got.extend(s["t"] for s in r), daemon=True)
    th.start()
    th.join(limit)
    r.stop()
    th.join(2)
    return got, time.monotonic() - t0


def test_a_paced_replay_does_not_wait_out_the_time_between_segments(tmp_path):
    f = tmp_path / "r.jsonl"
    write(f, [sample(1000.0), sample(1001.0)])
    write(f, [sample(1000.0 + 86400), sample(1001.0 + 86400)])  # `record -o` again, a day later
    rec = read_recording(f)
    got, took = _paced(rec, 10.0)
    assert got == [1000.0, 1001.0, 87400.0, 87401.0], "the replay waited out the day between the segments"
    assert 0.29 <= took < 5.0, took  # 1 s + one interval + 1 s, at 10x
    assert rec.segment_starts == [2] and rec.problems == []
    src, samples, done = _replay_source(f, 10.0)
    src.start()
    try:
        assert done.wait(10), "the dashboard's replay waited out the day between the segments"
    finally:
        src.stop()
    assert len(samples) == 4


def test_a_long_gap_inside_a_segment_plays_as_a_few_intervals(tmp_path):
    rec = read_recording(_file(tmp_path, [sample(0.0), sample(1.0), sample(3601.0), sample(3602.0)]))
    got, took = _paced(rec, 10.0)
    assert got == [0.0, 1.0, 3601.0, 3602.0] and rec.segment_starts == []
    assert 0.6 <= took < 5.0, took  # 1 s + 5 intervals (the cap) + 1 s, at 10x: 0.7 s, not 6 min


def test_record_command_then_check_replay(tmp_path, capsys):
    fake = fake_nvml.gb10_loaded()
    nvml.set_backend(fake)
    try:
        out = tmp_path / "run.jsonl"
        # 1 s for 4 samples at 0.05 s: room for a loaded machine (0.3 s gave 1 sample under -n 4)
        rc = main(["record", "-o", str(out), "--interval", "0.05", "--duration", "1", "--processes-every", "0.1"])
    finally:
        nvml.set_backend(None)
    assert rc == EXIT_OK
    rec = read_recording(out)
    assert rec.header["static"]["devices"][0]["name"]["value"] == "NVIDIA GB10"
    assert len(rec.samples) >= 4 and rec.samples[0]["gpus"][0]["power_w"] == 80.0 and rec.processes
    assert "wrote" in capsys.readouterr().err
    rc = main(["check", "--replay", str(out), "--json"])
    doc = json.loads(capsys.readouterr().out)
    # the recording carries every check's readings (issue 12: a replay judges every check)
    assert [v["id"] for v in doc["checks"]] == [f"G{i}" for i in range(1, 15)]
    g4 = next(v for v in doc["checks"] if v["id"] == "G4")
    assert g4["status"] == "unknown" and re.search(r"[\d.]+ s of (the )?10 min", g4["summary"]), g4["summary"]
    assert rc in (1, 2, 3)


def test_check_replay_bad_file_is_a_usage_error(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nope\n")
    assert main(["check", "--replay", str(bad)]) == EXIT_USAGE
    assert "not a sparktui recording" in capsys.readouterr().err


def test_shipped_demo_recording_drives_the_judges(capsys):
    assert DEMO.stat().st_size < 1024 * 1024
    rec = read_recording(DEMO)
    assert rec.problems == [] and rec.duration_s >= 20 * 60 and rec.header["demo"] is True
    assert rec.header["static"]["devices"][0]["memory"]["error"].startswith("NOT_SUPPORTED")
    powers = [s["gpus"][0]["power_w"] for s in rec.samples]
    assert min(powers) < 8 and 80 <= max(powers) <= 105
    assert main(["check", "--replay", str(DEMO)]) == EXIT_FAIL
    out = capsys.readouterr().out
    assert "G3   ▲ warn" in out and "G4   ▲ warn" in out and "G6   ✘ fail" in out


def test_the_demo_header_carries_readings_for_every_other_check(capsys):
    """The shipped recording tells one story across all ten checks (tools/make_demo_recording.py)."""
    assert main(["check", "--replay", str(DEMO), "--json"]) == EXIT_FAIL
    got = {v["id"]: (v["status"], v["summary"]) for v in json.loads(capsys.readouterr().out)["checks"]}
    assert {k: v[0] for k, v in got.items()} == {
        "G1": "fail", "G2": "ok", "G3": "warn", "G4": "warn", "G5": "skip",
        "G6": "fail", "G7": "warn", "G8": "warn", "G9": "fail", "G10": "ok", "G14": "ok"}
    assert got["G14"][1].startswith("progressing: step 1341/3000")  # the LoRA run beside the servers
    assert got["G1"][1].startswith("torch 2.9.0+cu128 is built for CUDA 12.8; GB10 needs CUDA 13.x")
    assert "#109" in got["G8"][1] and "221 GB/s" in got["G5"][1]


def test_the_demo_recording_is_what_its_generator_writes(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "demo.jsonl"
    tool = DEMO.parents[3] / "tools" / "make_demo_recording.py"
    subprocess.run([sys.executable, str(tool), str(out)], check=True, capture_output=True, timeout=120)
    assert out.read_bytes() == DEMO.read_bytes(), "run: python tools/make_demo_recording.py"


def test_header_readings_that_are_malformed_are_left_out_and_their_checks_not_judged(tmp_path, capsys):
    from sparktui.core.readings import Reading

    good = Reading("cudalibs", {"libcudart": [{"soname": "libcudart.so.13", "major": "13", "path": "/x",
                                               "flags": "libc6,AArch64"}]}, source="ldconfig -p").to_dict()
    path = tmp_path / "r.jsonl"
    with RecordingWriter(path, head(readings={"cudalibs": good, "target": {"data": "no probe name"}})) as w:
        w.sample(sample(1.0))
    rec = read_recording(path)
    from sparktui.core.recording import header_readings, readings_from_recording

    assert list(header_readings(rec)) == ["cudalibs"]
    r = readings_from_recording(rec)
    assert "cudalibs" in r and "target" not in r and "telemetry" in r
    assert main(["check", "--replay", str(path), "--json"]) in (1, 2, 3)
    ids = [v["id"] for v in json.loads(capsys.readouterr().out)["checks"]]
    assert ids == ["G3", "G4", "G6"]  # G1 needs the target reading too: not claimed from half the evidence


def test_live_history_feeds_the_same_judges(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 127611680 kB\nMemFree: 2000000 kB\nMemAvailable: 5000000 kB\n"
                       "Buffers: 1000 kB\nCached: 3000000 kB\n")
    nvml.set_backend(fake_nvml.gb10_loaded())
    try:
        s = Sampler(meminfo_path=str(meminfo))
        for _ in range(3):
            s.sample_once()
        static = s.static()
    finally:
        nvml.set_backend(None)
    r = readings_from_samples(s.history.samples(), static=static, source="live")
    verdicts, _ = run_checks(["G3", "G4"], Config(), r)
    assert [v.status.value for v in verdicts] == ["warn", "unknown"]
    assert any("NOT_SUPPORTED" in str(e.value) for e in verdicts[0].evidence)


async def test_the_dashboard_replays_a_recording_with_malformed_samples_and_says_so(tmp_path):
    from sparktui.ui.app import SparkApp

    app = SparkApp(Config(), replay=str(_with_bad_lines(tmp_path)), speed=None, auto_checks=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.replay_settled, what="the replay settled")
        assert app.replay_settled and app.source.finished and len(app.source.history) == 4
        assert any("lines skipped: line 4" in n.message for n in app.said)


def test_a_recording_over_the_size_limit_is_refused_with_its_size(tmp_path, monkeypatch):
    from sparktui.core import recording

    f = tmp_path / "r.jsonl"
    f.write_text(json.dumps(header(interval_s=1.0, host={}, static=None, version="t")) + "\n" + "\n" * 200)
    monkeypatch.setattr(recording, "MAX_RECORDING_BYTES", 100)
    with pytest.raises(RecordingError, match="more than a recording can be"):
        read_recording(f)


def test_huge_numbers_in_samples_are_skipped_not_crashing(tmp_path):
    f = tmp_path / "r.jsonl"
    huge = "1" + "0" * 400
    f.write_text(json.dumps(header(interval_s=1.0, host={}, static=None, version="t")) + "\n"
                 + '{"type":"sample","t":' + huge + '}\n{"type":"sample","t":5,"mem":{"MemAvailable":' + huge + '}}\n'
                 + '{"type":"sample","t":6,"mem":{"MemAvailable":1}}\n' + "[" * 100000 + "\n")
    rec = read_recording(f)
    assert [s["t"] for s in rec.samples] == [6]
    assert len(rec.problems) == 3 and any("nested too deeply" in p for p in rec.problems)


def test_an_integer_too_long_to_convert_is_a_named_line_not_a_crash(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text(json.dumps(header(interval_s=1.0, host={}, static=None, version="t")) + "\n"
                 + '{"type":"sample","t":1' + "0" * 5000 + '}\n{"type":"sample","t":6,"mem":{"MemAvailable":1}}\n')
    rec = read_recording(f)
    assert [s["t"] for s in rec.samples] == [6]
    assert rec.problems[0].startswith("line 2: not JSON (Exceeds the limit (4300")  # 3.10 words it a little differently


def test_a_sample_keeps_the_meminfo_fields_g3_needs_with_hugepages_as_counts(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       127611680 kB\nMemFree:         2097152 kB\nMemAvailable:    5767168 kB\n"
                       "Buffers:          314572 kB\nCached:         70000000 kB\nSwapCached:            0 kB\n"
                       "AnonPages:      31457280 kB\nMapped:          1048576 kB\nShmem:          65011712 kB\n"
                       "KReclaimable:    1258291 kB\nSReclaimable:    1048576 kB\nUnevictable:       16384 kB\n"
                       "Mlocked:           16384 kB\nSwapTotal:       4194304 kB\nSwapFree:        4194304 kB\n"
                       "Dirty:               128 kB\nCmaTotal:              0 kB\nCmaFree:               0 kB\n"
                       "HugePages_Total:      16\nHugePages_Free:       16\nHugePages_Rsvd:        0\n"
                       "Hugepagesize:       2048 kB\n")
    with fake_nvml.installed(fake_nvml.gb10()):
        s = Sampler(meminfo_path=str(meminfo)).sample_once()
    from sparktui.core.telemetry import MEM_FIELDS

    assert set(s["mem"]) == set(MEM_FIELDS)
    assert s["mem"]["HugePages_Total"] == 16 and s["mem"]["Hugepagesize"] == 2048 * 1024  # a count; kB -> bytes
    assert s["mem"]["Shmem"] == 65011712 * 1024
    r = readings_from_samples([s], source="live")
    v = run_checks(["G3"], Config(), r)[0][0]
    assert "shmem/tmpfs (/dev/shm) 62.0 GiB" in v.summary and "/proc/sys/vm/drop_caches" not in v.fix


def test_static_nvml_facts_are_as_old_as_the_recordings_start_not_its_end():
    """G1 judges NVML's static facts: in a replay their age is the recording's, so the dashboard and
    check --replay do not show a 25-minute-old verdict as fresh."""
    from sparktui.core.recording import readings_from_recording
    from sparktui.gotchas import REGISTRY
    from sparktui.runner import judge

    rec = read_recording(Path(__file__).resolve().parents[1] / "src" / "sparktui" / "data" / "gb10-demo.jsonl")
    readings = readings_from_recording(rec)
    start, end = rec.header["started_at"], rec.samples[-1]["t"]
    assert readings["nvml"].started_at == start and end - start > 20 * 60
    v = judge(REGISTRY["G1"], readings, Config())
    assert v.measured_at is not None and v.measured_at < start + 60
