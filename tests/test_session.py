"""The kept session (core/session.py): format, bounds, listing, `sparktui history`, `--replay ID`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from sparktui.cli.main import EXIT_OK, main
from sparktui.core.config import SessionConfig
from sparktui.core.events import EventLog
from sparktui.core.recording import header, read_recording
from sparktui.core.session import (
    MB,
    SessionWriter,
    _start_order,
    list_sessions,
    load_restore,
    newest_for_host,
    prune,
    resolve,
    restore_events,
    session_id,
    sessions_dir,
)
from sparktui.core.verdict import Status

DEMO = Path(__file__).resolve().parents[1] / "src" / "sparktui" / "data" / "gb10-demo.jsonl"


def demo_samples() -> list[dict]:
    return read_recording(DEMO).samples


def head() -> dict:
    rec = read_recording(DEMO)
    return header(interval_s=1.0, host={"hostname": "spark-1"}, static=rec.header.get("static"), version="test")


def write_session(cfg: SessionConfig | None = None, samples: list[dict] | None = None) -> SessionWriter:
    w = SessionWriter(cfg or SessionConfig(), head(), "spark-1")
    for s in samples if samples is not None else demo_samples():
        w.sample(s)
    return w


def test_a_session_keeps_samples_verdict_changes_and_events_and_check_replay_judges_it(capsys):
    w = write_session()
    t0 = demo_samples()[0]["t"]
    w.verdict(t0 + 5, "G4", "ok", "warn", "throttled for 3 min")
    w.event("sampling paused", t0 + 6)
    w.close()
    assert w.path.parent == sessions_dir() and w.path.name.endswith("-spark-1.jsonl")
    rec = read_recording(w.path)
    assert rec.problems == [] and len(rec.samples) == len(demo_samples())
    assert rec.verdicts == [{"type": "verdict", "t": t0 + 5, "id": "G4", "old": "ok", "status": "warn",
                             "summary": "throttled for 3 min"}]
    assert rec.events[0]["text"] == "sampling paused"
    assert main(["check", "--replay", str(w.path), "--json"]) in (0, 1, 2, 3)
    out = json.loads(capsys.readouterr().out)
    assert {"G3", "G4", "G6"} <= {c["id"] for c in out["checks"]}


def test_line_types_a_reader_does_not_know_are_skipped_not_problems(tmp_path):
    p = tmp_path / "future.jsonl"
    lines = [json.dumps(head()), json.dumps({"type": "sample", **demo_samples()[0]}),
             json.dumps({"type": "annotation", "t": 1.0, "text": "from a newer sparktui"}),
             json.dumps({"type": "verdict", "t": "soon", "id": "G4", "status": "warn"})]
    p.write_text("\n".join(lines) + "\n")
    rec = read_recording(p)
    assert len(rec.samples) == 1 and rec.skipped_types == {"annotation": 1}
    assert rec.problems == ['line 4: verdict without a finite numeric "t"; skipped']


def test_a_file_at_its_cap_is_rotated_and_the_new_one_carries_the_readings():
    cfg = SessionConfig(max_session_mb=0.05, max_mb=10)
    w = write_session(cfg, samples=[])
    w.readings({"tpscan": {"probe": "tpscan", "data": {"hits": []}}})
    first = w.path
    for s in demo_samples() * 2:
        w.sample(s)
    w.close()
    files = sorted(sessions_dir().iterdir(), key=_start_order)
    assert len(files) >= 3 and all(f.stat().st_size < 0.05 * MB + 2048 for f in files)
    second = read_recording(files[1])
    assert second.header["session"]["continues"] == first.stem
    assert "tpscan" in second.header["readings"]
    assert "rotated at" in read_recording(first).events[-1]["text"]


def test_bounds_delete_the_oldest_sessions_first_and_those_past_max_days(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    now = time.time()
    names = [session_id(now - 3600 * (5 - i), "spark-1") + ".jsonl" for i in range(5)]  # oldest first
    for n in names:
        (folder / n).write_bytes(b"x" * MB)
    os.utime(folder / names[1], (now - 40 * 86400, now - 40 * 86400))
    deleted = prune(SessionConfig(max_mb=3.5, max_days=30), folder, reserve_bytes=MB)
    assert [p.name for p in deleted] == [names[1], names[0], names[2]]  # too old, then the oldest two over budget
    assert sorted(p.name for p in folder.iterdir()) == names[3:]


def test_the_total_stays_under_max_mb_however_long_the_dashboard_runs():
    cfg = SessionConfig(max_session_mb=0.03, max_mb=0.1)
    w = write_session(cfg, samples=demo_samples() * 6)
    w.close()
    total = sum(p.stat().st_size for p in sessions_dir().iterdir())
    assert total <= 0.1 * MB + 2048 and w.deleted > 0


def test_history_lists_sessions_newest_first_with_what_they_saw(capsys):
    older = write_session(samples=demo_samples()[:10])
    older.verdict(1.0, "G3", None, "ok", "plenty free")
    older.close()
    time.sleep(1.1)  # the names are per second
    newer = write_session(samples=demo_samples()[:20])
    newer.verdict(2.0, "G4", "ok", "fail", "power-delivery fault")
    newer.close()
    assert [s.id for s in list_sessions()] == [newer.path.stem, older.path.stem]
    assert main(["history"]) == EXIT_OK
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["ID", "START", "DURATION", "SIZE", "HOST", "SAMPLES", "WORST"]
    assert out[1].startswith(newer.path.stem) and out[1].split()[-2:] == ["20", "fail"]
    assert out[2].startswith(older.path.stem) and out[2].split()[-2:] == ["10", "ok"]
    assert main(["history", "--json"]) == EXIT_OK
    doc = json.loads(capsys.readouterr().out)
    first = doc["sessions"][0]
    assert first["id"] == newer.path.stem and first["host"] == "spark-1" and first["samples"] == 20
    assert first["duration_s"] == round(demo_samples()[19]["t"] - demo_samples()[0]["t"], 3) > 0


def test_replay_takes_a_session_id_or_a_unique_prefix(capsys):
    w = write_session(samples=demo_samples()[:30])
    w.close()
    assert resolve(w.path.stem) == str(w.path)
    assert resolve(w.path.stem[:12]) == str(w.path)
    assert resolve("no-such-session") == "no-such-session"
    assert main(["check", "--replay", w.path.stem, "--json"]) in (0, 1, 2, 3)
    assert "30 samples" in json.loads(capsys.readouterr().out)["source"]


def test_restore_reads_only_the_tail_and_marks_the_gap_in_the_events():
    w = write_session(samples=demo_samples() * 3)
    t_last = demo_samples()[-1]["t"]
    w.verdict(t_last, "G4", None, "ok", "fine")
    w.verdict(t_last + 1, "G4", "ok", "warn", "hot")
    w.close()
    assert newest_for_host("spark-1", 60) == w.path
    assert newest_for_host("spark-2", 60) is None
    os.utime(w.path, (time.time() - 7200, time.time() - 7200))
    assert newest_for_host("spark-1", 3600) is None  # ended too long ago
    r = load_restore(w.path, history_len=10)
    assert len(r.samples) == 10 and r.ended_at == t_last + 1
    log = EventLog()
    restore_events(log, r, now=t_last + 601)
    rows = list(log)
    assert [(c.id, c.new) for c in rows] == [("G4", Status.OK), ("G4", Status.WARN), ("—", Status.SKIP)]
    assert "not watching for 10 min" in rows[-1].summary and r.session in rows[-1].summary


def test_no_session_is_a_dashboard_option(capsys):
    assert main(["history", "--no-session"]) == 64
    assert "--no-session" in capsys.readouterr().err


def test_a_kept_session_with_an_unhashable_verdict_status_is_still_listed(tmp_path):
    """`sparktui history` read `{"status": ["fail"]}` with `in STATUS_NAMES`: TypeError, unhashable."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    name = session_id(1_796_400_000.0, "spark-1") + ".jsonl"
    sample = demo_samples()[0]
    lines = [head(), sample, {"type": "verdict", "t": sample["t"], "id": "G3", "status": ["fail"], "summary": "x"},
             {"type": "verdict", "t": sample["t"], "id": "G4", "status": "warn", "summary": "y"}]
    (folder / name).write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))  # as the writer does
    (info,) = list_sessions(folder)
    assert info.worst == "warn"
