"""probes/run_log.py (issue 25, item 1): finding the run and its log, following it, its tmux pane.

Real parts throughout: real files (grown, rotated with os.rename, truncated, deleted while open),
real processes (a ``python -c CODE train.py`` child writing progress lines in a format of the
corpus, tests/data/run_logs/a-tqdm-avr-loss-nan.log) found through /proc, and a real tmux server on
a socket of its own in a folder of its own (only that server is ever asked anything, and it is
killed at the end) whose pane runs such a child: it is read with capture-pane and never sent a key.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from sparktui.core import shapes
from sparktui.core.config import Config, RunConfig
from sparktui.core.validate import shape_problems
from sparktui.probes import processes, run_log
from sparktui.probes.run_log import LogFollower, TmuxPane, added_lines, find_run, log_of

TICK = os.sysconf("SC_CLK_TCK")


def bar(step: int, total: int = 3280, loss: str = "0.5") -> str:
    """A tqdm line in the shape of the corpus's (a-tqdm-avr-loss-nan.log), with our numbers."""
    return f"steps:   1%|▋                                  | {step}/{total} [00:50<1:06:54,  1.24s/it, avr_loss={loss}]"


# A training stand-in, run as `python DIR/train.py N PAUSE` (the process scan calls it training): prints
# N progress lines (flushed), then "waiting", then echoes whatever reaches its stdin (nothing must).
CHILD = r"""
import sys, time, select
n, pause = int(sys.argv[1]), float(sys.argv[2])
for i in range(1, n + 1):
    print(f"steps:   1%|▋                                  | {i}/3280 [00:50<1:06:54,  1.24s/it, avr_loss=0.5]", flush=True)
    time.sleep(pause)
print("waiting", flush=True)
while True:
    r, _, _ = select.select([sys.stdin], [], [], 0.2) if not sys.stdin.closed else ([], [], [])
    if r:
        data = sys.stdin.readline()
        print("TYPED:" + repr(data), flush=True)
        if not data:
            time.sleep(3600)
"""


class Lines:
    """An on_lines that keeps what it is handed; ``wait(pred)`` waits for it."""

    def __init__(self) -> None:
        self.got: list[tuple[str, float | None]] = []
        self.errors: list[str] = []
        self.cond = threading.Condition()

    def __call__(self, lines: list[tuple[str, float | None]]) -> None:
        with self.cond:
            self.got.extend(lines)
            self.cond.notify_all()

    def error(self, why: str) -> None:
        with self.cond:
            self.errors.append(why)
            self.cond.notify_all()

    @property
    def texts(self) -> list[str]:
        return [t for t, _ in self.got]

    def wait(self, pred: Callable[[list[str]], bool], timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        with self.cond:
            while not pred(self.texts):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
        return True


@pytest.fixture
def follow():
    started: list[LogFollower] = []

    def make(path: Path | str, **kw: Any) -> tuple[LogFollower, Lines]:
        sink = Lines()
        f = LogFollower(str(path), sink, sink.error, coalesce_s=kw.pop("coalesce_s", 0.01), **kw).start()
        started.append(f)
        return f, sink

    yield make
    for f in started:
        f.stop()


def _write(path: Path, text: str, mode: str = "a") -> None:
    with open(path, mode, encoding="utf-8") as fh:
        fh.write(text)


# ----------------------------------------------------------------------------------- the follower


def test_the_follower_reads_the_recent_history_then_each_new_line_as_it_is_written(tmp_path, follow):
    log = tmp_path / "train.log"
    _write(log, "".join(bar(i) + "\n" for i in range(1, 101)))
    f, sink = follow(log)
    assert sink.wait(lambda t: len(t) == 100)
    assert all(t is None for _, t in sink.got)  # history: when it was written is not known
    before = time.time()
    _write(log, bar(101) + "\n" + bar(102) + "\n")
    assert sink.wait(lambda t: len(t) == 102)
    assert sink.texts[-2:] == [bar(101), bar(102)]
    assert all(t is not None and t >= before for _, t in sink.got[100:])  # seen now
    assert f.lines == 102 and f.error is None and f.inotify


def test_the_history_is_bounded_and_starts_at_a_whole_line(tmp_path, follow):
    log = tmp_path / "train.log"
    _write(log, "".join(bar(i) + "\n" for i in range(1, 2001)))  # ~220 KB
    f, sink = follow(log, tail_bytes=10_000)
    assert sink.wait(lambda t: t[-1:] == [bar(2000)])
    assert all(t.startswith("steps:") for t in sink.texts)  # the cut first line was dropped
    assert len(sink.texts) < 100
    f2, sink2 = follow(log, offset=log.stat().st_size)  # from a given offset: only what comes
    _write(log, "after\n")
    assert sink2.wait(lambda t: t == ["after"])


def test_an_unterminated_line_waits_for_its_end_but_a_bars_updates_are_handed_on(tmp_path, follow):
    log = tmp_path / "train.log"
    log.write_bytes(b"")
    f, sink = follow(log)
    _write(log, "half a li")
    time.sleep(0.3)
    assert sink.texts == []
    _write(log, "ne\n")
    assert sink.wait(lambda t: t == ["half a line"])
    # tqdm writing to a file: "\r"-separated updates, the line ending only when the loop ends
    _write(log, "\r" + bar(1) + "\r" + bar(2) + "\r" + bar(3)[:20])
    assert sink.wait(lambda t: len(t) == 2)
    assert sink.texts[1] == "\r" + bar(1) + "\r" + bar(2)  # whole updates, split by the parser, not here
    _write(log, bar(3)[20:] + "\n")
    assert sink.wait(lambda t: len(t) == 3)
    assert sink.texts[2] == bar(3)


def test_rotation_finishes_the_old_file_then_reads_the_new_one_from_its_start(tmp_path, follow):
    log = tmp_path / "train.log"
    writer = open(log, "a", encoding="utf-8", buffering=1)
    writer.write("old 1\n")
    f, sink = follow(log)
    assert sink.wait(lambda t: t == ["old 1"])
    os.rename(log, tmp_path / "train.log.1")
    writer.write("old 2 (written after the rename, before the writer reopened)\n")
    writer.close()
    _write(log, "new 1\nnew 2\n", "w")
    assert sink.wait(lambda t: len(t) == 4)
    assert sink.texts == ["old 1", "old 2 (written after the rename, before the writer reopened)", "new 1", "new 2"]
    assert f.rotations == 1
    _write(log, "new 3\n")
    assert sink.wait(lambda t: t[-1] == "new 3")


def test_truncation_reads_again_from_the_start_and_says_so_once(tmp_path, follow):
    log = tmp_path / "train.log"
    _write(log, "".join(f"line {i}\n" for i in range(50)))
    f, sink = follow(log)
    assert sink.wait(lambda t: len(t) == 50)
    os.truncate(log, 0)
    time.sleep(0.2)
    _write(log, "after truncate\n")
    assert sink.wait(lambda t: t[-1] == "after truncate")
    assert f.truncations == 1 and len(sink.errors) == 1 and "truncated" in sink.errors[0]
    os.truncate(log, 0)
    time.sleep(0.2)
    _write(log, "again\n")
    assert sink.wait(lambda t: t[-1] == "again")
    assert f.truncations == 2 and len(sink.errors) == 1  # said once
    assert f.alive


def test_a_file_deleted_while_open_is_read_on_until_a_new_file_takes_its_name(tmp_path, follow):
    log = tmp_path / "train.log"
    writer = open(log, "a", encoding="utf-8", buffering=1)
    writer.write("before\n")
    f, sink = follow(log)
    assert sink.wait(lambda t: t == ["before"])
    os.unlink(log)
    writer.write("after the unlink\n")
    assert sink.wait(lambda t: t == ["before", "after the unlink"])
    writer.close()
    _write(log, "a new file\n", "w")
    assert sink.wait(lambda t: t[-1] == "a new file")
    assert f.rotations == 1 and f.error is None


def test_a_giant_line_is_cut_its_head_kept_and_the_next_line_read(tmp_path, follow):
    log = tmp_path / "train.log"
    log.write_bytes(b"")
    f, sink = follow(log)
    with open(log, "ab") as fh:
        fh.write(b"start " + b"x" * 3_000_000)
        fh.flush()
        time.sleep(0.1)
        fh.write(b"y" * 1_000_000 + b"\nnext\n")
    assert sink.wait(lambda t: t[-1:] == ["next"])
    assert len(sink.texts) == 2 and sink.texts[0].startswith("start xxx")
    assert len(sink.texts[0]) == run_log.CUT_KEEP and f.cut_lines == 1


GIANT = r"""
import os, resource, sys, time
sys.path.insert(0, sys.argv[2])
from sparktui.probes.run_log import LogFollower
path = sys.argv[1]
got = []
f = LogFollower(path, lambda lines: got.extend(t for t, _ in lines), offset=0)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
f.start()
deadline = time.monotonic() + 120
while not (got and got[-1] == "after") and time.monotonic() < deadline:
    time.sleep(0.05)
f.stop()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(len(got), f.cut_lines, f.bytes_read, (peak - base) // 1024, got[-1] if got else None)
"""


def test_a_50_mb_line_is_followed_in_bounded_memory(tmp_path):
    """Measured in a process of its own (ru_maxrss is a process's peak)."""
    log = tmp_path / "giant.log"
    with open(log, "wb") as fh:
        fh.write(b"".join(bar(i).encode() + b"\n" for i in range(1, 11)))
        fh.truncate(fh.tell() + 50 * 1024 * 1024)  # a 50 MB line of NUL bytes, sparse: written at once
        fh.seek(0, os.SEEK_END)
        fh.write(b"\nafter\n")
    src = str(Path(run_log.__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-c", GIANT, str(log), src], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    lines, cut, read, grew_mb, last = out.stdout.split()
    assert (int(lines), int(cut), last) == (12, 1, "after")
    assert int(read) == log.stat().st_size
    assert int(grew_mb) < 16, f"the follower's peak RSS grew {grew_mb} MB reading a 50 MB line"


def test_the_one_shot_read_of_a_bar_written_to_a_file_starts_at_a_whole_update(tmp_path):
    """tqdm writing to a file: one line of "\\r" updates, ~1 MB; the last 100 KB are read."""
    log = tmp_path / "bar.log"
    log.write_text("".join("\r" + bar(i, 10000) for i in range(1, 10001)))
    from sparktui.probes.run_progress import RunLog

    got = RunLog()
    lines = run_log.read_tail(str(log), got, tail_bytes=100_000)
    got.flush()
    d = got.data()
    assert 1 <= lines <= 3 and d["lines_read"] == lines  # handed on at each 64 KiB read: a bar is seen as it grows
    assert d["progress"][-1]["step"] == 10000 and d["progress"][-1]["total"] == 10000


def test_stop_is_prompt_and_a_quiet_file_costs_no_cpu(tmp_path, follow):
    log = tmp_path / "quiet.log"
    _write(log, "one\n")
    f, sink = follow(log)
    assert sink.wait(lambda t: t == ["one"])
    time.sleep(0.2)
    tid = f._thread.native_id  # type: ignore[union-attr]

    def ticks() -> int:
        with open(f"/proc/self/task/{tid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])

    t0 = ticks()
    time.sleep(1.5)
    assert ticks() - t0 <= 1  # blocked in select: no polling loop
    began = time.monotonic()
    f.stop()
    assert time.monotonic() - began < 1.0 and not f.alive  # woken through the self-pipe (its join waits up to 2 s)


def test_a_consumer_that_raises_does_not_end_the_follower_and_a_missing_file_fails_at_start(tmp_path):
    log = tmp_path / "train.log"
    _write(log, "one\n")
    seen: list[str] = []

    def bad(lines: list[tuple[str, float | None]]) -> None:
        seen.extend(t for t, _ in lines)
        raise RuntimeError("consumer bug")

    f = LogFollower(str(log), bad, coalesce_s=0.01).start()
    try:
        deadline = time.monotonic() + 5
        while seen != ["one"] and time.monotonic() < deadline:
            time.sleep(0.02)
        _write(log, "two\n")
        deadline = time.monotonic() + 5
        while seen != ["one", "two"] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert seen == ["one", "two"] and f.callback_errors == 2 and f.alive
    finally:
        f.stop()
    with pytest.raises(OSError):
        LogFollower(str(tmp_path / "missing.log"), bad).start()
    with pytest.raises(OSError):
        LogFollower(str(tmp_path), bad).start()  # a folder is no log


def test_without_inotify_the_file_is_looked_at_on_a_slow_timer_only(tmp_path, monkeypatch):
    def no_inotify() -> None:
        raise OSError(24, "inotify_init1 failed")

    monkeypatch.setattr(run_log, "_Inotify", no_inotify)
    monkeypatch.setattr(run_log, "SAFETY_S", 0.2)  # 30 s in use; shortened here to see it work
    log = tmp_path / "train.log"
    _write(log, "one\n")
    sink = Lines()
    f = LogFollower(str(log), sink, sink.error, coalesce_s=0.0).start()
    try:
        assert not f.inotify and sink.wait(lambda t: t == ["one"])
        _write(log, "two\n")
        assert sink.wait(lambda t: t == ["one", "two"])
        os.rename(log, tmp_path / "train.log.1")
        _write(log, "three\n", "w")
        assert sink.wait(lambda t: t == ["one", "two", "three"]) and f.rotations == 1
    finally:
        f.stop()


def test_stop_from_a_consumer_or_while_one_blocks_never_closes_a_descriptor_in_use(tmp_path):
    log = tmp_path / "train.log"
    _write(log, "one\ntwo\n")
    holder: list[LogFollower] = []

    def stops(lines: list[tuple[str, float | None]]) -> None:
        holder[0].stop()  # from the follower's own thread

    f = LogFollower(str(log), stops, coalesce_s=0.0)
    holder.append(f)
    f.start()
    deadline = time.monotonic() + 5
    while f.alive and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not f.alive and f._fd == -1 and f._notify is None

    release = threading.Event()
    g = LogFollower(str(log), lambda lines: release.wait(10), coalesce_s=0.0).start()
    time.sleep(0.2)
    g.stop(timeout=0.1)  # the consumer still blocks: nothing is closed under it
    assert g.alive and g._fd >= 0
    release.set()
    g._thread.join(5)  # type: ignore[union-attr]
    assert not g.alive and g._fd == -1


# ----------------------------------------------------------------------------------- the run


def _row(pid: int, group: int, age: float, command: str = "python train.py", kind: str = "training") -> dict[str, Any]:
    return {"pid": pid, "ppid": 1, "kind": kind, "group": group, "age_s": age, "command": command}


def test_find_run_groups_a_launcher_and_its_ranks_and_takes_the_latest_started():
    procs = {"t": 1000.0, "rows": [
        _row(30, 10, 500.0, "torchrun --nproc-per-node 2 train.py"), _row(12, 10, 499.0), _row(11, 10, 499.0),
        _row(40, 40, 60.0, "accelerate launch sft.py"), _row(41, 40, 59.0),
        _row(50, 50, 5.0, "vllm serve x", kind="server"),
    ]}
    procs["rows"][0]["pid"] = 10  # the launcher is the group's top process
    run = find_run(procs)
    assert run == {"found": True, "why": None, "pids": [40, 41], "command": "accelerate launch sft.py", "alive": True,
                   "started_at": 940.0}
    older = find_run(procs, pid=12)
    assert older["pids"] == [10, 11, 12] and older["command"].startswith("torchrun") and older["started_at"] == 500.0
    assert not shape_problems(run, shapes.RunData)


def test_find_run_says_no_run_only_on_a_scan_that_was_read():
    none = find_run({"t": 1.0, "rows": [_row(5, 5, 1.0, kind="server")]})
    assert none["found"] is False and none["why"].startswith("no torchrun, accelerate launch") and "--run-log" in none["why"]
    for unseen in (None, {"scan_error": "process scan failed: PermissionError()", "t": 1.0}):
        run = find_run(unseen)
        assert run["found"] is True and run["alive"] is None and run["pids"] == []  # unknown, not skipped
        assert "cannot be seen" in run["why"]
        src = log_of(run)
        assert "cannot be seen" in (src["error"] or "") and "--run-log" in (src["error"] or "")


def train_script(folder: Path | str) -> str:
    script = Path(folder) / "train.py"
    script.write_text(CHILD)
    return str(script)


@pytest.fixture
def child(tmp_path):
    """Start a training stand-in; every one is killed at the end."""
    started: list[subprocess.Popen] = []
    script = train_script(tmp_path)

    def start(n: int = 5, pause: float = 0.01, **popen: Any) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, script, str(n), str(pause)], **popen)
        started.append(p)
        return p

    yield start
    for p in started:
        p.kill()
        p.wait()


def _wait_file(path: Path, text: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never reached {path}")


def _scan() -> dict[str, Any]:
    return processes.scan(None, None, exclude_own=False)  # our children stand in for the user's run


def test_a_run_writing_to_a_file_is_found_through_its_stdout_and_read(tmp_path, child, monkeypatch):
    log = tmp_path / "train.log"
    with open(log, "w") as out:
        p = child(20, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.PIPE)
    _wait_file(log, "waiting")
    run = find_run(_scan(), pid=p.pid)
    assert run["found"] and run["pids"][0] == p.pid and "train.py" in (run["command"] or "")
    src = log_of(run, Config())
    assert src["kind"] == "fd" and src["path"] == str(log) and src["error"] is None and src["size"] == log.stat().st_size
    monkeypatch.setattr(run_log, "_scan", lambda cfg: {**_scan(), "rows": [r for r in _scan()["rows"] if r["pid"] == p.pid]})
    r = run_log.read(Config())
    assert r.error is None and not shape_problems(r.data, shapes.RunData)
    d = r.data
    assert d["found"] and d["alive"] is True and d["pids"] == [p.pid] and d["log"]["path"] == str(log)
    assert d["lines_read"] == 21 and d["progress"][-1]["step"] == 20 and d["progress"][-1]["total"] == 3280
    assert d["last_line_t"] == pytest.approx(log.stat().st_mtime)  # no time in the lines: the file's
    # deleted while the run writes on: still read through /proc/PID/fd/1
    os.unlink(log)
    src = log_of([p.pid])
    assert src["kind"] == "fd" and src["path"] == f"/proc/{p.pid}/fd/1" and src["error"] is None
    f = LogFollower(src["path"], Lines())
    f.start()
    try:
        assert isinstance(f.on_lines, Lines) and f.on_lines.wait(lambda t: t[-1:] == ["waiting"])
    finally:
        f.stop()


def test_rank_0s_file_is_preferred_to_another_ranks_and_to_a_quieter_launchers(tmp_path, child):
    """torchrun --redirects: the launcher's output and each rank's in files of their own."""
    files = {name: tmp_path / f"{name}.log" for name in ("launcher", "rank0", "rank1")}
    procs = {}
    for name, path in files.items():
        env = {**os.environ, **({"RANK": name[-1]} if name.startswith("rank") else {})}
        with open(path, "w") as out:
            procs[name] = child(2 if name == "launcher" else 5, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.PIPE, env=env)
        _wait_file(path, "waiting")
    os.utime(files["launcher"], (time.time() - 60, time.time() - 60))  # the launcher's last line is older
    os.utime(files["rank1"], (time.time() + 5, time.time() + 5))  # rank 1 wrote last, but is not rank 0
    src = log_of([procs["launcher"].pid, procs["rank1"].pid, procs["rank0"].pid])
    assert src["path"] == str(files["rank0"])


def test_a_run_piped_into_tee_is_read_from_tees_file(tmp_path, child):
    log = tmp_path / "tee.log"
    p = child(5, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.PIPE)  # 2>&1 | tee FILE
    tee = subprocess.Popen(["tee", str(log)], stdin=p.stdout, stdout=subprocess.DEVNULL)
    try:
        assert p.stdout is not None
        p.stdout.close()  # tee alone reads the pipe now
        _wait_file(log, "waiting")
        src = log_of([p.pid])
        assert src["kind"] == "fd" and src["path"] == str(log) and src["error"] is None
    finally:
        tee.kill()
        tee.wait()


def test_a_run_whose_output_no_one_can_read_says_why_and_how_to_name_its_log(child):
    piped = child(1, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.PIPE)  # we hold the read end
    dropped = child(1, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.PIPE)
    time.sleep(0.5)
    src = log_of([piped.pid])
    assert src["kind"] == "fd" and src["path"] is None and "a pipe" in (src["error"] or "")
    assert "--run-log FILE" in (src["error"] or "") and '[run] log = "FILE"' in (src["error"] or "")
    src = log_of([dropped.pid])
    assert "/dev/null" in (src["error"] or "") and "--run-log" in (src["error"] or "")
    gone = log_of([2 ** 22 + 7])
    assert "cannot be read" in (gone["error"] or "")


def test_a_named_log_wins_and_is_alive_while_a_process_writes_it_else_a_post_mortem(tmp_path, child, monkeypatch):
    log = tmp_path / "named.log"
    cfg = Config(run=RunConfig(log=str(log)))
    monkeypatch.setattr(run_log, "_scan", lambda cfg: {"t": time.time(), "rows": []})
    with open(log, "w") as out:
        p = child(3, stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.PIPE)
    _wait_file(log, "waiting")
    r = run_log.read(cfg)
    assert not shape_problems(r.data, shapes.RunData)
    assert r.data["found"] and r.data["alive"] is True and r.data["pids"] == [p.pid] and "open for writing" in r.data["why"]
    assert r.data["log"]["kind"] == "named" and r.data["lines_read"] == 4 and r.data["progress"][-1]["step"] == 3
    p.kill()
    p.wait()
    r = run_log.read(cfg)
    assert r.data["found"] and r.data["alive"] is False and "post-mortem" in r.data["why"] and r.data["pids"] == []
    missing = run_log.read(Config(run=RunConfig(log=str(tmp_path / "nope.log"))))
    assert missing.data["found"] and "cannot read" in missing.data["log"]["error"]


def test_no_run_and_no_named_log_is_not_found(monkeypatch):
    monkeypatch.setattr(run_log, "_scan", lambda cfg: {"t": time.time(), "rows": []})
    r = run_log.read(Config())
    assert r.error is None and r.data["found"] is False and r.data["log"] is None and "--run-log" in r.data["why"]
    assert not shape_problems(r.data, shapes.RunData)
    monkeypatch.setattr(run_log, "_scan", lambda cfg: {"scan_error": "process scan failed: OSError()", "t": 1.0})
    r = run_log.read(Config())
    assert r.data["found"] is True and r.data["alive"] is None and "cannot be seen" in r.data["log"]["error"]


# ----------------------------------------------------------------------------------- tmux


def test_added_lines_finds_what_a_scrolled_pane_added():
    prev = [f"l{i}" for i in range(100)]
    assert added_lines([], prev) == prev
    assert added_lines(prev, prev) == []
    assert added_lines(prev, prev[30:] + ["n1", "n2"]) == ["n1", "n2"]  # scrolled: the top fell off
    assert added_lines(prev, prev[:-1] + ["l99 rewritten", "n1"]) == ["l99 rewritten", "n1"]  # a bar redrawn in place
    pane = TmuxPane("%0")
    assert added_lines(prev, ["cleared", "n1"], pane) == ["cleared", "n1"] and pane.gaps == 1


@pytest.fixture
def tmux_server(monkeypatch):
    """A tmux server of our own: its socket in a fresh folder that tmux_sockets() alone is shown."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    folder = tempfile.mkdtemp(prefix="st-")
    monkeypatch.setenv("TMUX_TMPDIR", folder)
    monkeypatch.delenv("TMUX", raising=False)
    name = f"sparktui-test-{os.getpid()}"
    env = {**os.environ, "TMUX_TMPDIR": folder}
    env.pop("TMUX", None)
    base = ["tmux", "-L", name]
    yield base, env, os.path.join(folder, f"tmux-{os.getuid()}", name)
    subprocess.run([*base, "kill-server"], env=env, capture_output=True, timeout=10)
    shutil.rmtree(folder, ignore_errors=True)


def test_the_run_in_a_tmux_pane_is_found_and_read_without_a_key_sent(tmux_server, tmp_path, monkeypatch):
    base, env, socket = tmux_server
    cmd = f"{sys.executable} {train_script(tmp_path)} 30 0.01"
    subprocess.run([*base, "-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50", cmd], env=env, check=True,
                   timeout=10)
    out = subprocess.run([*base, "list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"], env=env, capture_output=True,
                         text=True, timeout=10).stdout.split()
    pane, pid = out[0], int(out[1])
    run = find_run(_scan(), pid=pid)
    assert run["found"] and pid in run["pids"]
    src = None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the child's first lines
        src = log_of(run, Config())
        if src.get("pane"):
            break
        time.sleep(0.1)
    assert src is not None and src["kind"] == "tmux" and src["pane"] == pane and src["path"] == socket, src
    reader = TmuxPane(pane, socket)
    lines: list[str] = []
    while time.monotonic() < deadline and "waiting" not in lines:
        lines += reader.new_lines()
        time.sleep(0.1)
    steps = [int(m.group(1)) for ln in lines if (m := re.search(r"\| (\d+)/3280 \[", ln))]
    assert steps == list(range(1, 31)), lines
    assert reader.new_lines() == []  # nothing new
    monkeypatch.setattr(run_log, "_scan", lambda cfg: {**_scan(), "rows": [r for r in _scan()["rows"] if r["pid"] == pid]})
    r = run_log.read(Config())
    assert not shape_problems(r.data, shapes.RunData)
    assert r.data["log"]["kind"] == "tmux" and r.data["progress"][-1]["step"] == 30 and r.source == f"tmux pane {pane}"
    # read only: the child, which prints whatever reaches its stdin, saw nothing and still runs
    time.sleep(0.5)
    text = "\n".join(reader.lines())
    assert "TYPED" not in text
    state = subprocess.run([*base, "display-message", "-p", "-t", pane, "#{pane_dead} #{pane_pid}"], env=env,
                           capture_output=True, text=True, timeout=10).stdout.split()
    assert state == ["0", str(pid)]
    os.kill(pid, 0)
    off = log_of(run, Config(run=RunConfig(tmux=False)))
    assert off["error"] and "tmux = false" in off["error"]
    nowhere = log_of(run, Config(), sockets=[])
    assert "no tmux server" in (nowhere["error"] or "") and "--run-log" in (nowhere["error"] or "")


def test_a_pane_that_is_gone_is_an_error_not_a_crash(tmux_server):
    base, env, socket = tmux_server
    reader = TmuxPane("%999", socket)
    assert reader.capture() == [] and reader.error
    with pytest.raises(OSError):
        reader.new_lines()

