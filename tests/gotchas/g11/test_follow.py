"""G11's live follower: a real FIFO and a growing file, lines split across writes, a 10,000-line
burst, prompt stop, the journal fallback, and a permission failure."""

from __future__ import annotations

import errno
import os
import stat
import threading
import time
import tracemalloc

import pytest

from sparktui.probes import kernel_log as kl
from tests.gotchas.builders import LOCKUP, OOM_KILLED, XID79

OOM_SUMMARY = ("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
               "task_memcg=/user.slice,task=python3,pid=4242,uid=1000")
NOISE = "usb 1-1: new high-speed USB device number 2 using xhci_hcd"


class Sink:
    def __init__(self) -> None:
        self.events: list[dict] = []
        self.cond = threading.Condition()

    def __call__(self, ev: dict) -> None:
        with self.cond:
            self.events.append(ev)
            self.cond.notify_all()

    def wait_for(self, n: int, timeout: float = 10.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.events) >= n, timeout)


@pytest.fixture
def fifo(tmp_path):
    p = tmp_path / "kmsg.fifo"
    os.mkfifo(p)
    return str(p)


def test_fifo_events_and_partial_lines_split_across_writes(fifo):
    sink = Sink()
    f = kl.KernelLogFollower(sink, fifo).start()
    try:
        w = os.open(fifo, os.O_WRONLY)
        rec = f"2,100,5000000,-;{XID79}\n".encode()
        os.write(w, rec[:17])  # cut inside the kmsg prefix
        time.sleep(0.05)
        os.write(w, rec[17:40])
        time.sleep(0.05)
        os.write(w, rec[40:] + f"[ 10.0] {NOISE}\n[ 11.0] {LOCKUP[:20]}".encode())
        time.sleep(0.05)
        os.write(w, f"{LOCKUP[20:]}\n".encode())
        assert sink.wait_for(2)
        os.close(w)  # the writer going away is not an end for the follower (FIFO opened read-write)
        time.sleep(0.1)
        assert f.alive and f.error is None
    finally:
        f.stop()
    xid, lock = sink.events
    assert (xid["kind"], xid["xid"], xid["pid"], xid["text"]) == ("xid", 79, 4242, XID79)
    assert xid["t"] == pytest.approx(f.parser.boot_epoch + 5.0)
    assert (lock["kind"], lock["cpu"]) == ("soft_lockup", 3)
    assert f.lines == 3


def test_oom_pair_is_one_event_in_the_follower(fifo):
    sink = Sink()
    f = kl.KernelLogFollower(sink, fifo).start()
    try:
        w = os.open(fifo, os.O_WRONLY)
        os.write(w, f"{OOM_SUMMARY}\n".encode())
        time.sleep(0.05)
        os.write(w, f"{OOM_KILLED}\n".encode())
        assert sink.wait_for(1)
        time.sleep(0.1)
        os.close(w)
    finally:
        f.stop()
    assert len(sink.events) == 1 and sink.events[0]["rss_kb"] == 104857600 + 2048 + 1024


def test_growing_file_followed_from_its_current_end(tmp_path):
    p = tmp_path / "kern.log"
    p.write_text(f"[ 1.0] {XID79}\n")  # already there before the follower starts: not reported
    sink = Sink()
    f = kl.KernelLogFollower(sink, str(p)).start()
    try:
        with open(p, "a") as out:
            out.write(f"[ 2.0] {LOCKUP[:30]}")
            out.flush()
            time.sleep(0.1)
            out.write(f"{LOCKUP[30:]}\n[ 3.0] {XID79}\n")
            out.flush()
        assert sink.wait_for(2)
    finally:
        f.stop()
    assert [e["kind"] for e in sink.events] == ["soft_lockup", "xid"]


def test_from_start_reads_what_is_already_there(tmp_path):
    p = tmp_path / "kern.log"
    p.write_text(f"{XID79}\n")
    sink = Sink()
    f = kl.KernelLogFollower(sink, str(p), from_start=True).start()
    try:
        assert sink.wait_for(1)
    finally:
        f.stop()


def test_burst_of_10000_lines_all_delivered_memory_flat(fifo):
    n = 10_000
    count = [0]
    done = threading.Event()

    def cb(ev):
        count[0] += 1
        if count[0] == n:
            done.set()

    payload = "".join(f"3,{i},{i * 1000},-;{XID79 if i % 2 else LOCKUP}\n" for i in range(n)).encode()  # ~1 MB
    f = kl.KernelLogFollower(cb, fifo).start()
    tracemalloc.start()
    try:
        w = os.open(fifo, os.O_WRONLY)
        # writes of odd sizes, so lines are split everywhere
        for i in range(0, len(payload), 4093):
            os.write(w, payload[i:i + 4093])
        assert done.wait(30), f"only {count[0]} of {n} events"
        _, peak = tracemalloc.get_traced_memory()
        os.close(w)
    finally:
        tracemalloc.stop()
        f.stop()
    assert count[0] == n and f.lines == n
    assert peak < 500_000, f"peak {peak} bytes traced during the burst"


def test_giant_unterminated_line_is_cut_not_buffered(fifo):
    sink = Sink()
    f = kl.KernelLogFollower(sink, fifo).start()
    try:
        w = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        big = (XID79 + " " + "A" * 300_000).encode()
        view = memoryview(big)
        while view:
            try:
                k = os.write(w, view[:65536])
            except BlockingIOError:
                time.sleep(0.01)
                continue
            view = view[k:]
        os.set_blocking(w, True)
        os.write(w, f"\n{LOCKUP}\n".encode())
        assert sink.wait_for(2)
        os.close(w)
    finally:
        f.stop()
    assert [e["kind"] for e in sink.events] == ["xid", "soft_lockup"]
    assert f.cut_lines == 1 and len(sink.events[0]["text"]) == kl.MAX_TEXT


def test_stop_is_prompt_while_blocked(fifo):
    f = kl.KernelLogFollower(lambda ev: None, fifo).start()
    time.sleep(0.2)
    assert f.alive
    t0 = time.perf_counter()
    f.stop()
    assert not f.alive and time.perf_counter() - t0 < 0.5


def test_callback_errors_do_not_end_the_follower(fifo):
    seen = []

    def cb(ev):
        seen.append(ev)
        raise RuntimeError("ui bug")

    f = kl.KernelLogFollower(cb, fifo).start()
    try:
        w = os.open(fifo, os.O_WRONLY)
        os.write(w, f"{XID79}\n{LOCKUP}\n".encode())
        deadline = time.time() + 5
        while len(seen) < 2 and time.time() < deadline:
            time.sleep(0.01)
        os.close(w)
    finally:
        f.stop()
    assert len(seen) == 2 and f.callback_errors == 2


def test_real_kmsg_starts_at_the_end_and_stops(tmp_path):
    if not os.access("/dev/kmsg", os.R_OK):
        with pytest.raises(PermissionError):
            kl.KernelLogFollower(lambda ev: None).start()
        return
    f = kl.KernelLogFollower(lambda ev: None).start()
    time.sleep(0.2)
    assert f.alive and f.error is None and f.lines == 0  # nothing old replayed (the ring holds hundreds)
    t0 = time.perf_counter()
    f.stop()
    assert not f.alive and time.perf_counter() - t0 < 0.5


def test_permission_denied_raises_at_start_and_follow_falls_back_to_the_journal(tmp_path, monkeypatch):
    real = os.open

    def deny(p, flags, *a, **k):
        if str(p) == "/dev/kmsg":
            raise PermissionError(errno.EACCES, "Permission denied", p)
        return real(p, flags, *a, **k)

    monkeypatch.setattr(kl.os, "open", deny)
    with pytest.raises(PermissionError):
        kl.KernelLogFollower(lambda ev: None).start()
    script = tmp_path / "journalctl"
    script.write_text('#!/bin/sh\necho \'{"MESSAGE": "' + XID79 + '", "__REALTIME_TIMESTAMP": "1764870000000000"}\'\n'
                      "exec sleep 30\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    sink = Sink()
    f = kl.follow(sink)
    try:
        assert isinstance(f, kl.JournalFollower)
        assert sink.wait_for(1)
        assert sink.events[0]["xid"] == 79 and sink.events[0]["t"] == pytest.approx(1764870000.0)
    finally:
        t0 = time.perf_counter()
        f.stop()
    assert not f.alive and time.perf_counter() - t0 < 2.5


def test_journal_follower_reports_a_dead_journalctl(tmp_path):
    script = tmp_path / "journalctl"
    script.write_text("#!/bin/sh\necho 'Failed to get journal access: Permission denied' >&2\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    errors: list[str] = []
    f = kl.JournalFollower(lambda ev: None, on_error=errors.append, cmd=(str(script),)).start()
    deadline = time.time() + 5
    while not errors and time.time() < deadline:
        time.sleep(0.02)
    f.stop()
    assert errors and "exited 1" in errors[0] and "Permission denied" in errors[0]


def test_follow_with_neither_source_says_how_to_grant(monkeypatch):
    real = os.open

    def deny(p, flags, *a, **k):
        if str(p) == "/dev/kmsg":
            raise PermissionError(errno.EPERM, "Operation not permitted", p)
        return real(p, flags, *a, **k)

    monkeypatch.setattr(kl.os, "open", deny)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(PermissionError) as e:
        kl.follow(lambda ev: None)
    assert "dmesg_restrict=0" in str(e.value) and "systemd-journal" in str(e.value)


AER_HEADER = "pcieport 0000:00:00.0: AER: Uncorrectable (Fatal) error message received from 0000:01:00.0"


def test_an_aer_report_waiting_for_detail_lines_is_delivered_once_the_log_is_quiet(fifo):
    """A 6.x AER header whose device dropped off prints no detail line: it must not wait for the next
    kernel message, which may never come."""
    sink = Sink()
    f = kl.KernelLogFollower(sink, fifo).start()
    try:
        w = os.open(fifo, os.O_WRONLY)
        t0 = time.monotonic()
        os.write(w, f"3,7,9000000,-;{AER_HEADER}\n".encode())
        assert sink.wait_for(1, timeout=5.0)
        assert time.monotonic() - t0 < 3.0
        assert [(e["kind"], e["severity"], e["pci"]) for e in sink.events] == [("aer", "fatal", "0000:01:00.0")]
        os.close(w)
    finally:
        f.stop()


def test_the_journal_fallback_delivers_a_waiting_incident_once_journalctl_is_quiet(tmp_path):
    import json

    rec = json.dumps({"MESSAGE": AER_HEADER, "__REALTIME_TIMESTAMP": "1764870000000000"})
    fake = tmp_path / "journalctl"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' '{rec}'\nsleep 30\n")
    fake.chmod(0o755)
    sink = Sink()
    f = kl.JournalFollower(sink, cmd=(str(fake),)).start()
    try:
        assert sink.wait_for(1, timeout=5.0)
        assert [(e["kind"], e["severity"]) for e in sink.events] == [("aer", "fatal")]
    finally:
        f.stop()
