"""kill -9 and SIGTERM while sparktui writes: what is on disk afterwards is the old file or the whole
new one (`snapshot -o`, `report -o`: core/atomic.py), and a recording is whole up to its last line
(`record`: one write() per line on an O_APPEND descriptor). Real subprocesses, killed at spread
moments from a fixed schedule (the same every run); NVML is faked at its boundary, so no GPU is
needed and a machine with one gives the same result."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from sparktui.core.recording import read_recording
from sparktui.testing import fake_nvml

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "h200" / "snapshot.json"
OLD = "the earlier file, whole\n" * 400
SPARKTUI = [sys.executable, "-m", "sparktui"]


def _env(tmp_path: Path) -> dict:
    return fake_nvml.subprocess_env(tmp_path, "gb10_loaded()", {**os.environ, "NO_COLOR": "1"})


def _killed_after(argv: list[str], env: dict, delay_s: float, sig: int = signal.SIGKILL) -> int:
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        p.wait(timeout=delay_s)
    except subprocess.TimeoutExpired:
        p.send_signal(sig)
    return p.wait(timeout=90)


def _spread(n: int, lo: float, hi: float) -> list[float]:
    """``n`` delays covering lo..hi in an interleaved order (not rising), the same every run."""
    step = (hi - lo) / (n - 1)
    return [lo + step * ((i * 7) % n) for i in range(n)]


def _timed(argv: list[str], env: dict) -> float:
    """How long one whole run takes on this machine now: the kills are spread from before Python has
    started (nothing written: the old file) to well past the end (the new one), whatever the load."""
    started = time.monotonic()
    r = subprocess.run(argv, env=env, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    return time.monotonic() - started


def _masked(report: str) -> str:
    return re.sub(r"^Generated [^\n]* by ", "Generated (time) by ", report, count=1, flags=re.MULTILINE)


def _signalled_over_an_old_file(tmp_path: Path, name: str, command: list[str], kills: int, span: float,
                                sig: int = signal.SIGKILL) -> tuple[list[tuple[float, str, int]], str]:
    """Run ``sparktui COMMAND -o name`` once whole, then ``kills`` times over an old file, each sent
    ``sig`` at a delay from 0.01 s to ``span`` times the whole run's duration. Returns (delay, what the
    file holds then, exit code) for each, and the whole run's output. A temp file that kill -9 left is
    checked for its name (``.name.XXXX.tmp``) and removed: never a fragment under the real name."""
    out = tmp_path / "out" / name
    out.parent.mkdir()
    argv = SPARKTUI + command + ["-o", str(out)]
    env = _env(tmp_path)
    took = _timed(argv, env)
    whole = out.read_text()
    outcomes = []
    for delay in _spread(kills, 0.01, span * took):
        out.write_text(OLD)
        code = _killed_after(argv, env, delay, sig)
        outcomes.append((delay, out.read_text(), code))
        for left in (f for f in out.parent.iterdir() if f.name != name):
            assert left.name.startswith(f".{name}.") and left.name.endswith(".tmp")
            left.unlink()
    return outcomes, whole


def test_report_killed_at_any_moment_leaves_the_old_report_or_the_whole_new_one(tmp_path):
    outcomes, whole = _signalled_over_an_old_file(tmp_path, "report.md", ["report", "--snapshot", str(SNAPSHOT)], 12, 2)
    for delay, text, _ in outcomes:
        assert text == OLD or _masked(text) == _masked(whole), f"a fragment after a kill at {delay:.2f} s: {len(text)} bytes"
    kinds = {"old" if text == OLD else "new" for _, text, _ in outcomes}
    assert kinds == {"old", "new"}, f"the kills all landed on one side of the write: {kinds}"


def test_report_sigterm_leaves_the_old_report_or_the_whole_new_one(tmp_path):
    outcomes, whole = _signalled_over_an_old_file(tmp_path, "report.md", ["report", "--snapshot", str(SNAPSHOT)], 6, 1.5,
                                                  signal.SIGTERM)
    for delay, text, code in outcomes:
        assert text == OLD or _masked(text) == _masked(whole), f"a fragment after SIGTERM at {delay:.2f} s"
        assert code in (0, -signal.SIGTERM, 128 + signal.SIGTERM)


def test_snapshot_killed_while_probing_or_writing_leaves_the_old_file_or_a_whole_snapshot(tmp_path):
    outcomes, _ = _signalled_over_an_old_file(tmp_path, "spark-1.json", ["snapshot"], 3, 1.6)
    for delay, text, _ in outcomes:
        if text != OLD:
            assert json.loads(text)["kind"] == "sparktui-snapshot", f"a fragment after a kill at {delay:.2f} s"
    assert {"old" if text == OLD else "new" for _, text, _ in outcomes} == {"old", "new"}


def _lines(path: Path) -> list[dict]:
    raw = path.read_bytes()
    assert raw.endswith(b"\n"), "a torn last line"
    return [json.loads(line) for line in raw.decode("utf-8").splitlines()]


def _until_samples(argv: list[str], env: dict, rec: Path, n: int, timeout_s: float = 90) -> tuple[subprocess.Popen, float]:
    """Start ``record`` and wait until ``rec`` holds ``n`` samples (how long that takes depends on
    the machine's load: a fixed delay sent the signal before Python had started, on two suites
    side by side on 2 CPUs). Returns the running process and the seconds it took."""
    started = time.monotonic()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while time.monotonic() - started < timeout_s:
        if rec.exists() and rec.read_bytes().count(b'{"type":"sample"') >= n:
            return p, time.monotonic() - started
        if p.poll() is not None:
            raise AssertionError(f"record exited {p.returncode} before {n} samples")
        time.sleep(0.02)
    p.kill()
    raise AssertionError(f"record wrote fewer than {n} samples in {timeout_s:g} s")


def test_record_killed_20_times_at_spread_moments_is_whole_up_to_its_last_line(tmp_path):
    """`record -o` continues the same file each time, so a torn line from one kill would sit in the
    middle of the next run's lines; none does, and the reader finds no problem at all. The kills
    are spread around the moment the first sample is written, measured on this machine now."""
    rec = tmp_path / "run.jsonl"
    argv = SPARKTUI + ["record", "-o", str(rec), "--interval", "0.01", "--processes-every", "0.05"]
    env = _env(tmp_path)
    probe_rec = tmp_path / "probe.jsonl"
    p, first = _until_samples(SPARKTUI + ["record", "-o", str(probe_rec), "--interval", "0.01"], env, probe_rec, 1)
    p.kill()
    p.wait(timeout=90)
    counts = []
    for delay in _spread(20, 0.6 * first, first + 0.9):
        _killed_after(argv, env, delay)
        if rec.exists():
            counts.append(sum(1 for line in _lines(rec) if line["type"] == "sample"))
    assert counts and counts[-1] > 20 and counts == sorted(counts), counts
    loaded = read_recording(rec)
    assert loaded.problems == [] and len(loaded.samples) == counts[-1]


def test_record_sigterm_stops_it_cleanly_with_every_line_whole(tmp_path):
    """SIGTERM is how a service manager stops `record`: it finishes as Ctrl-C does (the check
    readings, the kernel log read again), exit 0 as `record --help` documents, every line whole."""
    rec = tmp_path / "run.jsonl"
    argv = SPARKTUI + ["record", "-o", str(rec), "--interval", "0.01"]
    p, _ = _until_samples(argv, _env(tmp_path), rec, 11)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=90) == 0
    lines = _lines(rec)
    assert lines[0]["type"] == "header" and sum(1 for line in lines if line["type"] == "sample") > 10
    assert read_recording(rec).problems == []
