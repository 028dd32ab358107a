"""G11 live in the dashboard: the follower's events become events-view rows, notifications at once,
the bell with --bell, and G11 re-judged to fail; a follower that cannot read says so once."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Status
from sparktui import runner
from sparktui.ui.app import ChecksDone, KernelFollowFailed, SparkApp
from sparktui.live.kernel import merged_reading, status_of
from sparktui.ui.screens import EventsScreen
from tests.ui.test_dashboard import DEMO, StillSource
from tests.ui.waiting import loaded, says, shows, wait_for

XID_LINE = ("[ 4242.123456] NVRM: Xid (PCI:000f:01:00): 13, pid=7781, name=python3, "
            "Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Illegal Address\n")
OOM_LINE = ("[ 5000.5] Out of memory: Killed process 9123 (python3) total-vm:130000000kB, "
            "anon-rss:118000000kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:240000kB oom_score_adj:0\n")
AER_NONFATAL = ("[ 60.0] mlx5_core 0000:01:00.0: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), "
                "type=Transaction Layer, (Requester ID)\n")


def boot_reading(events=(), lines=1200, t=None) -> Reading:
    counts = {k: 0 for k in ("xid", "nv_no_memory", "oom_kill", "aer", "soft_lockup")}
    for e in events:
        counts[e["kind"]] += 1
    return Reading("kernel_log", {"source": "kmsg", "boot_id": "abc", "lines_read": lines, "events": list(events),
                                  "truncated": False, "counts": counts, "note": None}, source="/dev/kmsg",
                   started_at=time.time() if t is None else t)


def live_app(log_path, **kw) -> SparkApp:
    return SparkApp(Config(), source=StillSource(), auto_checks=False, kernel_log_path=str(log_path), **kw)


def append(path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_an_xid_line_in_a_growing_log_is_a_row_a_notification_and_g11_fail(tmp_path, size):
    log = tmp_path / "kmsg.txt"
    log.write_text(XID_LINE.replace("4242", "10"))  # already there before the dashboard: not news
    app = live_app(log, bell=True)
    rings: list[int] = []
    app.bell = lambda: rings.append(1)
    async with app.run_test(size=size) as pilot:
        readings = Readings({"kernel_log": boot_reading(t=time.time() - 60)})  # the boot-time check, as it lands
        app.post_message(ChecksDone(runner.judge_readings(["G11"], readings, app.cfg, {"kernel_log": app.kernel_watch})))
        await wait_for(pilot, lambda: app.board["G11"].verdict, what="the boot-time G11 verdict")
        assert app.board["G11"].verdict.status is Status.OK
        await wait_for(pilot, lambda: app.kernel_watch.follower is not None)
        append(log, XID_LINE)
        await wait_for(pilot, lambda: app.board["G11"].verdict.status is Status.FAIL)
        v = app.board["G11"].verdict
        assert "Xid 13" in v.summary and "pid 7781" in v.summary
        rows = [c for c in app.events if c.kind == "kernel"]
        assert len(rows) == 1 and rows[0].new is Status.FAIL and "Xid 13 on 000f:01:00" in rows[0].summary
        assert any(n.title == "G11 kernel log" and n.severity == "error" and "Xid 13" in n.message
                   for n in app.said)
        assert rings  # --bell
        await pilot.press("e")
        await shows(pilot, EventsScreen)
        table = app.screen.query_one("#events-table")
        cells = [str(c) for r in range(table.row_count) for c in table.get_row_at(r)]
        assert any("kernel log: Xid 13" in c for c in cells)


async def test_a_fifo_log_oom_kill_fails_g11_without_a_boot_reading(tmp_path):
    fifo = tmp_path / "kmsg.fifo"
    os.mkfifo(fifo)
    app = live_app(fifo)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.kernel_watch.follower is not None)
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        try:
            os.write(fd, OOM_LINE.encode())
            await wait_for(pilot, lambda: app.board["G11"].verdict is not None
                           and app.board["G11"].verdict.status is Status.FAIL)
        finally:
            os.close(fd)
        v = app.board["G11"].verdict
        assert "OOM killer killed python3 (pid 9123" in v.summary
        assert any("no boot-time reading yet" in str(e.value) for e in v.evidence)


async def test_a_non_fatal_aer_warns_and_a_plain_line_changes_nothing(tmp_path):
    log = tmp_path / "kmsg.txt"
    log.write_text("")
    app = live_app(log)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.kernel_watch.follower is not None)
        append(log, "[ 61.0] usb 1-1: new high-speed USB device number 3 using xhci_hcd\n")
        append(log, AER_NONFATAL)  # read after the plain line: once it is judged, the plain line was read too
        await wait_for(pilot, lambda: app.board["G11"].verdict is not None, what="G11 judged from the AER line")
        assert app.board["G11"].verdict.status is Status.WARN
        kernel_rows = [c for c in app.events if c.kind == "kernel"]
        assert len(kernel_rows) <= 1 and not [c for c in kernel_rows if "usb" in c.summary.lower()], kernel_rows
        assert any(n.title == "G11 kernel log" and n.severity == "warning" for n in app.said)


async def test_a_follower_that_cannot_open_says_so_once_and_g11_stays(tmp_path):
    app = live_app(tmp_path / "missing" / "kmsg")
    async with app.run_test(size=(80, 24)) as pilot:
        await says(pilot, lambda n: n.title == "G11 kernel log")
        app.post_message(KernelFollowFailed("again"))
        await pilot.pause()
        await pilot.pause()  # handled (a pause lasts until the app is idle); said nothing more
        said = [n for n in app.said if n.title == "G11 kernel log"]
        assert len(said) == 1 and "not followed live" in said[0].message and "missing" in said[0].message
        assert app.board["G11"].verdict is None  # as judged: not yet, not turned into anything


async def test_no_follower_in_a_replay(tmp_path):
    log = tmp_path / "kmsg.txt"
    log.write_text("")
    app = SparkApp(Config(), replay=str(DEMO), speed=None, kernel_log_path=str(log))
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        assert app.kernel_watch.follower is None


async def test_stopped_on_unmount(tmp_path):
    log = tmp_path / "kmsg.txt"
    log.write_text("")
    app = live_app(log)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.kernel_watch.follower is not None)
        follower = app.kernel_watch.follower
        assert follower.alive
    await asyncio.sleep(0)
    assert not follower.alive


def test_merged_reading_adds_live_events_to_the_boot_reading():
    from sparktui.probes.kernel_log import parse_line

    boot = boot_reading([parse_line(AER_NONFATAL)], lines=800)
    live = [parse_line(XID_LINE)]
    d = merged_reading(boot, live, 3).data
    assert d["lines_read"] == 803 and d["counts"]["aer"] == 1 and d["counts"]["xid"] == 1
    assert [e["kind"] for e in d["events"]] == ["aer", "xid"]
    failed = merged_reading(Reading("kernel_log", None, error="/dev/kmsg: permission denied"), live, 0).data
    assert failed["lines_read"] == 1 and "permission denied" in failed["note"]


def test_a_fresh_boot_reading_drops_the_live_events_it_already_holds():
    from sparktui.probes.kernel_log import parse_line
    from sparktui.live.kernel import KernelWatch

    kw = KernelWatch(enabled=False)
    old, new = parse_line(XID_LINE), parse_line(OOM_LINE)
    old["t"], new["t"] = 100.0, 300.0
    kw.add(old)
    kw.add(new)
    assert kw.saw_boot_reading(boot_reading(t=200.0))
    assert kw.live == [new]
    assert not kw.saw_boot_reading(boot_reading(t=400.0))


def test_status_of_each_kind():
    from sparktui.probes.kernel_log import parse_line

    assert status_of(parse_line(XID_LINE)) is Status.FAIL
    assert status_of(parse_line(OOM_LINE)) is Status.FAIL
    assert status_of(parse_line(AER_NONFATAL)) is Status.WARN
    corrected = parse_line("[ 1.0] pcieport 0000:00:01.0: PCIe Bus Error: severity=Corrected, type=Physical Layer\n")
    assert status_of(corrected) is Status.OK


async def test_a_boot_check_landing_after_a_live_event_keeps_it_and_does_not_flap(tmp_path):
    """The boot-time reading was taken before the Xid: G11 stays fail, no fail -> ok row in between."""
    log = tmp_path / "kmsg.txt"
    log.write_text("")
    app = live_app(log)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.kernel_watch.follower is not None)
        taken = time.time() - 1
        # its printk time (seconds since boot) is now, as a new record's is
        append(log, XID_LINE.replace("4242.123456", f"{time.clock_gettime(time.CLOCK_MONOTONIC):.6f}"))
        await wait_for(pilot, lambda: app.board["G11"].verdict is not None)
        readings = Readings({"kernel_log": boot_reading(t=taken)})
        runs = app.board["G11"].runs
        app.post_message(ChecksDone(runner.judge_readings(["G11"], readings, app.cfg, {"kernel_log": app.kernel_watch})))
        await wait_for(pilot, lambda: app.board["G11"].runs > runs, what="the boot check handled")
        assert app.board["G11"].verdict.status is Status.FAIL and "Xid 13" in app.board["G11"].verdict.summary
        assert [c.new for c in app.events if c.id == "G11" and c.kind == "verdict"] == [Status.FAIL]
        # a later boot reading that holds the Xid itself: counted once, not twice
        again = Readings({"kernel_log": boot_reading([dict(app.kernel_watch.live[0])], t=time.time() + 1)})
        runs = app.board["G11"].runs
        app.post_message(ChecksDone(runner.judge_readings(["G11"], again, app.cfg, {"kernel_log": app.kernel_watch})))
        await wait_for(pilot, lambda: app.board["G11"].runs > runs, what="the later boot check handled")
        assert app.kernel_watch.live == []
        assert any(e.value == 1 for e in app.board["G11"].verdict.evidence if e.what == "xid events")


async def test_a_live_kernel_event_is_kept_in_the_session(tmp_path):
    """The source keeps each live kernel event (the kept session and --record): a crash of the
    dashboard after an OOM kill still leaves the kill on disk."""
    log = tmp_path / "kmsg.txt"
    log.write_text("")
    kept: list[tuple[str, float]] = []
    source = StillSource()
    source.keep_event = lambda text, t: kept.append((text, t))
    app = SparkApp(Config(), source=source, auto_checks=False, kernel_log_path=str(log))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.kernel_watch.follower is not None)
        append(log, OOM_LINE)
        await wait_for(pilot, lambda: bool(kept))
    assert kept[0][0].startswith("kernel log: ") and "9123" in kept[0][0]


def test_live_source_writes_a_kept_event_as_an_event_line(tmp_path):
    """A LiveSource recording to a file (--record, no kept session) writes the event as a line."""
    from sparktui.core.recording import read_recording
    from sparktui.live.sources import LiveSource

    path = tmp_path / "s.jsonl"
    src = LiveSource(Config(), lambda s: None, lambda d: None, record_path=str(path), keep_session=False)
    src.start()
    try:
        src.keep_event("kernel log: OOM killer killed python3 (pid 9123)", 12.0)
    finally:
        src.stop()
    assert "pid 9123" in path.read_text() and read_recording(path).problems == []


async def test_an_oom_kill_names_the_training_job_g6_saw_before_the_kill(tmp_path):
    """The victim is gone from any scan after the kill: the last scan before it says it was the
    training job, and G11's finding says so."""
    log = tmp_path / "kmsg.txt"
    log.write_text("")
    app = live_app(log)
    async with app.run_test(size=(80, 24)) as pilot:
        app.latest_processes = {"rows": [{"pid": 9123, "kind": "training", "name": "python3",
                                          "command": "torchrun --nproc-per-node 1 train_lora.py"}]}
        await wait_for(pilot, lambda: app.kernel_watch.follower is not None)
        append(log, OOM_LINE)
        await wait_for(pilot, lambda: app.board["G11"].verdict is not None and app.board["G11"].verdict.status is Status.FAIL)
        assert "the training job G6 saw (torchrun --nproc-per-node 1 train_lora.py)" in app.board["G11"].verdict.summary


def test_victim_seen_only_from_a_scan_that_holds_the_pid():
    from sparktui.live.kernel import victim_seen

    scan = {"rows": [{"pid": 5120, "kind": "server", "server": "vllm", "command": "vllm serve m"}]}
    assert victim_seen(scan, 5120) == {"kind": "server", "server": "vllm", "command": "vllm serve m"}
    assert victim_seen(scan, 9999) is None and victim_seen(None, 5120) is None
    assert victim_seen({"rows": None, "scan_error": "denied"}, 5120) is None
