"""Kept sessions against other writers and hostile files (issue 22, "Seen" 8): a second dashboard
never deletes the first's open session; a write failure mid-run is said and the dashboard keeps
watching; `history` refuses absurd values per field and never holds an over-long line; a link
planted under the next session's name never redirects the write.

Real processes (two writers in two subprocesses, a real dashboard app in a subprocess under
RLIMIT_FSIZE), real files and real symbolic links."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sparktui.core.config import SessionConfig
from sparktui.core.recording import header, read_recording
from sparktui.core.session import SUFFIX, SessionWriter, session_id
from sparktui.testing import fake_nvml

ROOT = Path(__file__).resolve().parents[2]

WRITER = textwrap.dedent("""
    import sys
    from sparktui.core.config import SessionConfig
    from sparktui.core.recording import header
    from sparktui.core.session import SessionWriter

    host = sys.argv[1]
    # every other session must go to make room: the budget left beside this one's cap is 0
    cfg = SessionConfig(max_mb=0.05, max_session_mb=0.05)
    w = SessionWriter(cfg, header(interval_s=1.0, host={"hostname": host}, static={}, version="test"), host)
    for i in range(5):
        w.sample({"t": 1.9e9 + i, "mem": {"MemAvailable": 1000 + i}})
    print(w.path, flush=True)
    sys.stdin.readline()  # the test starts the other dashboard meanwhile
    for i in range(5, 10):
        w.sample({"t": 1.9e9 + i, "mem": {"MemAvailable": 1000 + i}})
    w.close()
    print("closed", flush=True)
""")


def writer_process(host: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, host], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)


def test_a_second_dashboard_never_deletes_the_first_ones_open_session():
    first = writer_process("spark-a")
    try:
        first_path = Path(first.stdout.readline().strip())
        assert first_path.is_file(), first.stderr.read()
        second = writer_process("spark-b")  # its pruning makes room: everything closed may go
        second_path = Path(second.stdout.readline().strip())
        second.communicate("\n", timeout=60)
        assert second.returncode == 0, second.stderr
        out, err = first.communicate("\n", timeout=60)
        assert first.returncode == 0 and "closed" in out, err
    finally:
        for p in (first,):
            if p.poll() is None:
                p.kill()
    assert first_path.is_file(), "the second dashboard deleted the first one's open session"
    rec = read_recording(first_path)
    assert [s["mem"]["MemAvailable"] for s in rec.samples] == list(range(1000, 1010)) and rec.problems == []
    assert second_path.is_file() and len(read_recording(second_path).samples) == 10


def test_a_closed_session_is_still_pruned_while_an_open_one_is_kept(tmp_path):
    cfg = SessionConfig(max_mb=0.05, max_session_mb=0.05)
    head = header(interval_s=1.0, host={"hostname": "h"}, static={}, version="test")
    done = SessionWriter(cfg, head, "old", folder=tmp_path)
    done.sample({"t": 1.0})
    done.close()
    time.sleep(1.1)  # a later start stamp: the first is the oldest
    open_one = SessionWriter(cfg, head, "open", folder=tmp_path)
    open_one.sample({"t": 2.0})
    time.sleep(1.1)
    third = SessionWriter(cfg, head, "new", folder=tmp_path)
    assert not done.path.exists()  # closed: the bounds still hold
    assert open_one.path.is_file()  # open in a writer: never deleted under it
    open_one.close()
    third.close()


def test_links_planted_under_the_next_session_names_never_redirect_the_write(tmp_path):
    folder = tmp_path / "sessions"
    folder.mkdir()
    victim = tmp_path / "elsewhere"
    victim.mkdir()
    precious = tmp_path / "precious.txt"
    precious.write_text("not yours\n")
    now = time.time()
    planted = []
    for second in range(-1, 6):  # whatever second the writer starts in
        name = session_id(now + second, "spark")
        for n in range(1, 5):
            link = folder / (f"{name}{SUFFIX}" if n == 1 else f"{name}+{n}{SUFFIX}")
            target = victim / f"{second}-{n}.jsonl" if n % 2 else precious  # dangling, or onto a file
            link.symlink_to(target)
            planted.append(link)
    w = SessionWriter(SessionConfig(), header(interval_s=1.0, host={"hostname": "spark"}, static={}, version="test"),
                      "spark", folder=folder)
    w.sample({"t": now})
    w.close()
    assert list(victim.iterdir()) == [], "a planted link redirected the session's write"
    assert precious.read_text() == "not yours\n"
    assert not w.path.is_symlink() and w.path.parent == folder and w.path not in planted
    assert len(read_recording(w.path).samples) == 1
    assert all(p.is_symlink() for p in planted)  # left as they were: not ours to delete


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_sessions_folder_linked_to_another_users_folder_is_refused(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 12345, 12345)
    link = tmp_path / "sessions"
    link.symlink_to(theirs)
    from sparktui.core.recording import RecordingError

    with pytest.raises(RecordingError, match="belongs to user id 12345"):
        SessionWriter(SessionConfig(), header(interval_s=1.0, host={}, static={}, version="test"), "h", folder=link)
    assert list(theirs.iterdir()) == []


def sessions_folder(state: Path) -> Path:
    d = state / "sparktui" / "sessions"
    d.mkdir(parents=True)
    return d


def run_history(state: Path, *args: str) -> subprocess.CompletedProcess:
    """`sparktui history` in a real process; its peak RSS (VmHWM, kB: this program's own, where
    ru_maxrss would carry the forking test process's) is printed on stderr's last line."""
    code = ("import re, sys\nfrom sparktui.cli.main import main\n"
            "try:\n    rc = main(['history', *sys.argv[1:]])\n"
            "finally:\n    sys.stdout.flush()\n"
            "    hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
            "    print('MAXRSS', hwm, file=sys.stderr)\n"
            "sys.exit(rc)\n")
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          env=env, cwd=ROOT)


def peak_rss_mb(r: subprocess.CompletedProcess) -> float:
    return int(r.stderr.strip().splitlines()[-1].split()[1]) / 1024


HEAD = {"type": "header", "kind": "sparktui-recording", "schema": 1, "interval_s": 1.0, "host": {"hostname": "spark"}}


@pytest.mark.parametrize("bad", ["1e308", "-1e308", "NaN", "Infinity", "1e20", "true", '"yesterday"', "[1]"])
def test_history_refuses_an_absurd_start_time_per_field_and_lists_the_rest(tmp_path, bad):
    folder = sessions_folder(tmp_path)
    head = json.dumps(HEAD)[:-1] + f', "started_at": {bad}}}'
    lines = [head] + [json.dumps({"type": "sample", "t": 1.9e9 + i}, separators=(",", ":")) for i in range(3)]
    lines.append('{"type":"sample","t":1e308}')  # the last sample's time is absurd too
    (folder / "20300101T000000Z-spark.jsonl").write_text("\n".join(lines) + "\n")
    good = folder / "20300102T000000Z-spark.jsonl"
    good.write_text(json.dumps({**HEAD, "started_at": 1.9e9}) + "\n" + json.dumps({"type": "sample", "t": 1.9e9}) + "\n")
    r = run_history(tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert "20300101T000000Z-spark" in r.stdout and "20300102T000000Z-spark" in r.stdout
    assert "\"started_at\" is" in r.stderr and "not a time" in r.stderr
    j = run_history(tmp_path, "--json")
    assert j.returncode == 0, j.stderr
    doc = json.loads(j.stdout, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))  # strict JSON
    bad_one = next(s for s in doc["sessions"] if s["id"] == "20300101T000000Z-spark")
    assert bad_one["started_at"] is None and bad_one["ended_at"] is None and bad_one["samples"] == 4
    assert any("started_at" in p for p in bad_one["problems"])


def test_history_never_holds_an_over_long_line_and_counts_it(tmp_path):
    folder = sessions_folder(tmp_path)
    path = folder / "20300101T000000Z-spark.jsonl"
    with open(path, "wb") as f:
        f.write(json.dumps({**HEAD, "started_at": 1.9e9}).encode() + b"\n")
        f.write(b'{"type":"sample","t":1900000000}\n')
        f.write(b'{"type":"sample","t":1900000001,"pad":"')
        chunk = b"x" * (1024 * 1024)
        for _ in range(160):  # a 160 MB line, written without holding it here
            f.write(chunk)
        f.write(b'"}\n')
        f.write(b'{"type":"sample","t":1900000002}\n')
    r = run_history(tmp_path, "--json")
    assert r.returncode == 0, r.stderr
    assert peak_rss_mb(r) < 120, f"history held the line: {peak_rss_mb(r):.0f} MB peak"
    s = json.loads(r.stdout)["sessions"][0]
    assert s["samples"] == 2 and s["lines_skipped"] == 1 and s["ended_at"] == 1900000002
    assert "1 line longer than" in r.stderr


DASHBOARD = textwrap.dedent("""
    import asyncio, json, resource, sys
    from sparktui.core.config import Config
    from sparktui.ui.app import SparkApp

    async def main():
        cfg = Config().with_overrides(telemetry={"interval_s": 0.05, "processes_every_s": 0.2})
        app = SparkApp(cfg, auto_checks=False, record=sys.argv[1])
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(400):  # the disk "fills" once the files reach the limit
                await pilot.pause(0.05)
                if app.source.session is None and app.source.writer is None:
                    break
            stopped_at = len(app.source.history)
            for _ in range(40):
                await pilot.pause(0.05)
            await pilot.pause(1.2)  # a tick
            print(json.dumps({"notes": [[n.title, str(n.message)] for n in app.said],
                              "session_error": app.source.session_error, "record_error": app.source.record_error,
                              "stopped_at": stopped_at, "samples_after": len(app.source.history),
                              "running": app.is_running}), flush=True)

    asyncio.run(main())
""")


def test_a_write_failure_mid_session_is_said_and_the_dashboard_keeps_watching(tmp_path):
    limit = 40_000  # a real EFBIG past this size, as a full disk gives (RLIMIT_FSIZE), without root
    env = fake_nvml.subprocess_env(tmp_path, "gb10_loaded()", env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")})
    rec_path = tmp_path / "run.jsonl"
    r = subprocess.run([sys.executable, "-c", DASHBOARD, str(rec_path)], capture_output=True, text=True, timeout=120,
                       env=env, cwd=tmp_path,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["session_error"] and out["record_error"], out
    notes = {title: msg for title, msg in out["notes"]}
    assert "session stopped" in notes.get("session", "") and "File too large" in notes["session"], out["notes"]
    assert "recording stopped" in notes.get("recording", "") and "File too large" in notes["recording"], out["notes"]
    assert "keeps watching" in notes["session"]
    assert out["samples_after"] > out["stopped_at"] and out["running"]  # telemetry keeps flowing, in memory
    session = next((tmp_path / "state" / "sparktui" / "sessions").glob("*.jsonl"))
    for path in (session, rec_path):  # what was written before is whole lines
        got = read_recording(path)
        assert got.samples and got.problems == [] and path.stat().st_size <= limit


def test_record_ends_with_74_when_a_check_readings_line_is_refused(tmp_path):
    """A readings line the disk refuses (one large line that no longer fits while the small sample
    lines still do) once cost the readings silently: `record` went on and exited 0. Now it stops
    there with 74 and the message, and the file is whole. The refusal is the kernel's EFBIG, raised
    at the write of a readings line (sitecustomize), so it is the same on every run."""
    out = tmp_path / "run.jsonl"
    env = fake_nvml.subprocess_env(tmp_path, "gb10_loaded()")
    site = tmp_path / "fake-nvml-site" / "sitecustomize.py"
    site.write_text(site.read_text() + textwrap.dedent("""
        import errno, os
        from sparktui.core import recording

        def refused(self, readings, t=None):
            raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))

        recording.RecordingWriter.readings = refused
    """))
    r = subprocess.run([sys.executable, "-m", "sparktui", "record", "-o", str(out), "--interval", "0.05",
                        "--duration", "10", "--processes-every", "0"],
                       capture_output=True, text=True, timeout=90, env=env, cwd=tmp_path)
    assert r.returncode == 74, r.stderr
    assert f"sparktui: cannot write {out}: File too large; the recording stopped there" in r.stderr
    assert "Traceback" not in r.stderr
    rec = read_recording(out)
    assert rec.problems == []


def test_record_never_appends_through_a_link_planted_at_its_file(tmp_path):
    out = tmp_path / "run.jsonl"
    elsewhere = tmp_path / "elsewhere.jsonl"
    out.symlink_to(elsewhere)  # dangling: O_CREAT would make the file it names
    env = fake_nvml.subprocess_env(tmp_path, "gb10_loaded()")
    r = subprocess.run([sys.executable, "-m", "sparktui", "record", "-o", str(out), "--interval", "0.05",
                        "--duration", "1", "--processes-every", "0"],
                       capture_output=True, text=True, timeout=90, env=env, cwd=tmp_path)
    assert r.returncode == 64 and "is a symbolic link" in r.stderr, r.stderr
    assert not elsewhere.exists() and out.is_symlink()


def test_a_second_dashboard_does_not_restore_the_session_another_is_writing_now(tmp_path):
    from sparktui.core.session import newest_for_host

    head = header(interval_s=1.0, host={"hostname": "spark"}, static={}, version="test")
    before = SessionWriter(SessionConfig(), head, "spark", folder=tmp_path)
    before.sample({"t": time.time()})
    before.close()  # the previous run: ended
    time.sleep(1.1)
    running = SessionWriter(SessionConfig(), head, "spark", folder=tmp_path)  # another dashboard, still watching
    running.sample({"t": time.time()})
    try:
        assert newest_for_host("spark", 3600, folder=tmp_path) == before.path
    finally:
        running.close()
    assert newest_for_host("spark", 3600, folder=tmp_path) == running.path
