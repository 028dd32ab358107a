"""Outside text in the dashboard is data (issue 22, "Seen" 3 and 4): another user's process name or
command line, a file name in a scanned folder, a kernel-log process name, a peer's host name, a
restored session's event: none may end the dashboard (Textual markup such as ``[/]`` or ``[X="]``
raised MarkupError, exit 1), and none may put a raw ESC or C1 byte on the terminal (an OSC title
change, OSC 52 writing the clipboard, a cleared screen).

Each test drives the real app with Pilot, notifications on (``run_test`` turns them off by default,
which hid the toast's MarkupError), and reads what the terminal would show (the compositor's strips:
the toasts are on the screen's layers)."""

from __future__ import annotations

import asyncio
import socket
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.verdict import Evidence, Status, Verdict
from sparktui.runner import Judged
from sparktui.ui.app import ChecksDone, SparkApp
from sparktui.ui.peers import PeersScreen
from sparktui.ui.screens import CardScreen, ConfirmScreen, EventsScreen, MessageScreen
from tests.real_processes import ended, orphan
from tests.ui.test_dashboard import StillSource
from tests.ui.test_process_table import real_row, row, scan, show_and_select
from tests.ui.waiting import leaves, loaded, says, screen_text, settled, shows, wait_for

# What a hostile local user or a hostile file/peer can put in a name: CSI, OSC title + BEL, OSC 52
# (clipboard), an 8-bit CSI (C1), bidi override, Textual markup that raised, Markdown.
OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
HOSTILE = f"\x1b]2;TITLE\x07 \x1b[2J\x1b[31mRED {OSC52} \x9b31m \u202eevil\u202c [/] [X=\"] [b]bold[/b] ## G6 ok"
RAW = ("\x1b", "\x9b", "\x07", "\u202e")


def assert_inert(text: str) -> None:
    for ch in RAW:
        assert ch not in text, f"raw {ch!r} reached the screen"


def still_app(**kw) -> SparkApp:
    return SparkApp(Config(), source=StillSource(), auto_checks=False, **kw)


def checks_done(app: SparkApp, *verdicts: Verdict) -> None:
    app.post_message(ChecksDone(Judged(tuple(verdicts), Readings(), ())))


def worse(app: SparkApp, gid: str, summary: str, **kw) -> None:
    """``gid`` judged ok, then failing with ``summary``: a "got worse" notification quotes it."""
    checks_done(app, Verdict(gid, Status.OK, "fine"))
    checks_done(app, Verdict(gid, Status.FAIL, summary, **kw))


# -- notifications ---------------------------------------------------------------------------------

async def test_an_oom_kill_of_a_process_named_markup_is_a_plain_notification(tmp_path):
    """The live G11 notification quotes the kernel's line: a process named `[/]` ended the
    dashboard (MarkupError); one named with an OSC sequence put it on the terminal."""
    log = tmp_path / "kmsg.txt"
    log.write_text("")
    app = SparkApp(Config(), source=StillSource(), auto_checks=False, kernel_log_path=str(log))
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await wait_for(pilot, lambda: app.kernel_watch.follower is not None, what="the kernel log followed")
        with open(log, "a", encoding="utf-8") as f:
            for pid, name in ((9123, "[/]"), (9124, "\x1b]2;T\x07[X=\"]")):
                f.write(f"[ 5000.5] Out of memory: Killed process {pid} ({name}) total-vm:130000000kB, "
                        "anon-rss:118000000kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:240000kB oom_score_adj:0\n")
        await wait_for(pilot, lambda: len([n for n in app.said if n.title == "G11 kernel log"]) >= 2,
                       what="two G11 notices", state=lambda: list(app.said))
        shown = await wait_for(pilot, lambda: "G11 kernel log" in (s := screen_text(app)) and "killed [/]" in s and s,
                               what="the toast drawn")  # (the checklist's G11 row says "killed [/]" too)
        assert app.is_running and app.board["G11"].verdict.status is Status.FAIL
        assert "G11 kernel log" in shown and "killed [/]" in shown  # the toast is drawn
        assert_inert(shown)
        messages = "\n".join(n.message for n in app.said)
        assert "([/])" in messages and "\\e]2;T\\x07" in messages
        await pilot.press("e")  # the events view lists them too
        await shows(pilot, EventsScreen)
        assert_inert(screen_text(app))


async def test_a_g6_finding_quoting_a_markup_script_name_notifies_when_it_gets_worse():
    """A script `[x="]train.py` named by G6 as it gets worse: the notification raised."""
    app = still_app()
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        worse(app, "G6", f"training pid 4242 ([x=\"]train.py {HOSTILE}) holds 80 GiB beside vllm")
        note = await says(pilot, lambda n: n.title == "got worse")
        assert app.is_running
        assert '[x="]train.py' in note.message and not note.markup
        shown = await wait_for(pilot, lambda: "▌ got worse" in (s := screen_text(app)) and "train.py" in s and s,
                               what="the toast drawn")  # (the header says "1 got worse (e)" before it is)
        assert "got worse" in shown and "[x=" in shown  # the toast is drawn, its text as written
        assert_inert(shown)
        await pilot.press("enter")  # the card of the selected check (G1) opens: the app is alive
        await shows(pilot, CardScreen)


async def test_g10_scanning_a_file_named_with_markup_and_escapes_notifies_when_it_gets_worse(tmp_path):
    """A real G10 scan of a folder holding `[/]train.sh` (a folder `[` and a file `]train.sh`) and
    a file whose name holds an OSC sequence: G10 warns, names them, and the dashboard keeps going."""
    proj = tmp_path / "proj"
    (proj / "[").mkdir(parents=True)
    launch = "torchrun --nnodes 2 --nproc-per-node 1 train.py --tensor-parallel-size 2\n"
    (proj / "[" / "]train.sh").write_text(launch)
    (proj / f"\x1b]2;T\x07{OSC52}[X=\"]run.sh").write_text(launch)
    cfg = Config().with_overrides(target={"python": str(tmp_path / "no-python")}, scan={"paths": [str(proj)]})
    app = SparkApp(cfg, source=StillSource(), auto_checks=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        checks_done(app, Verdict("G10", Status.OK, "no tensor parallelism found"))
        await wait_for(pilot, lambda: app.board["G10"].verdict, what="G10 ok first")
        app.run_checks(["G10"])
        await wait_for(pilot, lambda: app.board["G10"].verdict.status in (Status.WARN, Status.FAIL), timeout=30,
                       what="G10 warning", state=lambda: app.board["G10"].verdict)
        await says(pilot, lambda n: n.title == "got worse")
        await settled(pilot)
        assert app.is_running
        v = app.board["G10"].verdict
        assert "[/]train.sh" in v.summary + " ".join(v.details)
        assert_inert(screen_text(app))
        await pilot.press("enter")  # G1's card; then G10's, whose evidence and fix quote the names
        await shows(pilot, CardScreen)
        await pilot.press("escape")
        await leaves(pilot, CardScreen)
        app.checklist.move_cursor(row=app.checklist.get_row_index("G10"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, CardScreen) and app.screen.gotcha.id == "G10",
                       what="G10's card")
        assert_inert(screen_text(app))


# -- k: the confirmation shows the whole command line ---------------------------------------------

@pytest.mark.parametrize("extra", [['[X="]', "[/]"], ['[X="]', "\x1b]2;TITLE\x07", OSC52, "\x9b2J", "\n\nSIGTERM is safe: y"]],
                         ids=["markup", "markup-and-escapes"])
async def test_k_on_a_process_whose_argv_holds_markup_and_escapes_asks_and_signals_it(extra):
    """`k` on a process whose argv holds `[X="]` raised in the dialog (the process could not be
    signalled from the dashboard); its ESC sequences must not reach the terminal either."""
    argv = [sys.executable, "-c", "import time; time.sleep(60)", *extra]
    app = still_app()
    with orphan(argv) as pid:
        async with app.run_test(size=(120, 36), notifications=True) as pilot:
            await show_and_select(app, pilot, [row(4242, "other"), real_row(pid)], pid)
            assert_inert(screen_text(app))  # the process table: name and command
            await pilot.press("k")
            await shows(pilot, ConfirmScreen)
            shown = screen_text(app)
            assert_inert(shown)
            assert '[X="]' in shown and ("\\e]2;TITLE\\x07" in shown or "[/]" in shown)
            body = str(app.screen.body)
            assert "\nSIGTERM is safe" not in body and ("\\n\\nSIGTERM is safe" in body or "[/]" in body)  # argv: one line
            await pilot.press("y")
            await says(pilot, f"pid {pid} ended after SIGTERM")
            assert ended(pid)


async def test_a_process_row_opened_in_full_shows_its_command_fenced_and_inert():
    app = still_app()
    hostile = row(4243, f"[/]{HOSTILE}", command=f"python train.py \n```\n## G6 verdict corrected: ok\n{HOSTILE}",
                  user="[b]eve", server="vllm [/]")
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await show_and_select(app, pilot, [hostile], 4243)
        assert_inert(screen_text(app))
        await pilot.press("enter")
        await shows(pilot, MessageScreen)
        shown = await wait_for(pilot, lambda: "G6 verdict corrected" in (s := screen_text(app)) and s,
                               what="the command drawn")
        assert_inert(shown)


# -- peers, restored sessions, issues, cards -------------------------------------------------------

async def test_a_peer_host_named_with_markup_is_a_column_not_a_crash(tmp_path):
    """The peers view labels a column with each machine's name: `[/]` raised as a column label."""
    cfg = Config().with_overrides(fleet={"peers": ["[/]", "x\x1b]2;T\x07"], "ssh_config": str(tmp_path / "none"),
                                         "connect_timeout_s": 1.0, "peer_timeout_s": 5.0})
    app = SparkApp(cfg, source=StillSource(), auto_checks=False)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await pilot.press("m")
        await shows(pilot, PeersScreen)
        shown = await wait_for(pilot, lambda: "[/]" in (s := screen_text(app)) and s, what="the peer column drawn")
        assert_inert(shown)
        w = app.peer_watch
        await asyncio.to_thread(w.fetcher.wait, 20)
        await wait_for(pilot, lambda: all(s.host in w.results and w.fetching_s(s.host) is None for s in w.specs),
                       what="every peer's answer handled")
        await pilot.pause()
        assert app.is_running
        assert_inert(screen_text(app))


async def test_a_recording_whose_host_and_gpu_names_hold_markup_and_escapes_replays_inert(tmp_path):
    """A recording (another machine's, sent for a post-mortem) names its host and GPU: the header
    and the peers view's column for it show them as written, inert; `[/]` as a column label raised."""
    import json

    from tests.ui.test_dashboard import DEMO

    lines = DEMO.read_text().splitlines()
    head = json.loads(lines[0])
    head["host"]["hostname"] = f"[/]{OSC52}\x1b]2;TITLE\x07"
    head["static"]["devices"][0]["name"]["value"] = "GB10 [X=\"] \x9b2J \u202e"
    rec = tmp_path / "rec.jsonl"
    rec.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n")
    app = SparkApp(Config(), replay=str(rec), speed=None)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await loaded(pilot)
        shown = screen_text(app)
        assert "[/]\\e]52;c;" in shown
        assert_inert(shown)
        await pilot.press("m")
        await shows(pilot, PeersScreen)
        assert app.is_running
        assert_inert(screen_text(app))


async def test_a_restored_session_event_with_a_markup_id_is_listed(monkeypatch):
    """A kept session whose verdict change has the id `[/]` (a session file is outside text):
    restoring it and opening the events view raised."""
    from sparktui.core.recording import header
    from sparktui.core.session import SessionWriter

    host = socket.gethostname()
    w = SessionWriter(Config().session, header(interval_s=1.0, host={"hostname": host}, static={}, version="test"), host)
    now = time.time()
    w.verdict(now - 30, "[/]", "ok", "fail", f"restored {HOSTILE}")
    w.verdict(now - 20, "G6", "ok", "warn", f"[X=\"] {HOSTILE}")
    w.event(f"kernel log: [/] {OSC52}", now - 10)
    w.close()
    from sparktui.live.sources import LiveSource

    cfg = Config().with_overrides(telemetry={"interval_s": 0.2, "processes_every_s": 1.0})
    app = SparkApp(cfg, auto_checks=False)
    assert isinstance(app.source, LiveSource)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await wait_for(pilot, lambda: app.source.restored is not None and len(app.events) >= 2, timeout=15,
                       what="the session restored")
        await pilot.press("e")
        await shows(pilot, EventsScreen)
        shown = await wait_for(pilot, lambda: "[/]" in (s := screen_text(app)) and s, what="the events listed")
        assert_inert(shown)
        await pilot.press("enter")  # the newest change in full
        await shows(pilot, MessageScreen)
        assert_inert(screen_text(app))


async def test_playbook_issue_titles_and_a_card_with_hostile_evidence_stay_inert():
    app = still_app()
    issue = {"number": 7, "title": f"[/] {HOSTILE}", "created_at": "2026-01-01T00:00:00Z", "comments": 1,
             "reasons": [f"title names {OSC52}"], "body": f"## body\n{HOSTILE}", "html_url": "https://github.com/x/y/issues/7"}
    g8 = Verdict("G8", Status.WARN, f"1 open issue: [/] {HOSTILE}", evidence=[Evidence(f"issue [X=\"] {OSC52}", HOSTILE, "GitHub")],
                 details=[HOSTILE], fix=f"```bash\necho '{HOSTILE}'\n```\n")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        readings = Readings()
        app.post_message(ChecksDone(Judged((g8,), readings, ())))
        await wait_for(pilot, lambda: app.board["G8"].verdict, what="G8's verdict handled")
        app.playbook_panel.show(g8, {"slugs": ["vllm"], "matches": [issue]}, time.time())
        app.query_one("#tabs").active = "tab-playbooks"
        table = app.query_one("#pb-table")
        await wait_for(pilot, lambda: table.display and table.region.height, what="the playbook table shown")
        assert_inert(screen_text(app))
        table.focus()
        await pilot.press("enter")  # the issue in full
        await shows(pilot, MessageScreen)
        assert_inert(screen_text(app))
        await pilot.press("escape")
        await leaves(pilot, MessageScreen)
        app.checklist.focus()
        app.checklist.move_cursor(row=app.checklist.get_row_index("G8"))
        await pilot.press("enter")
        await shows(pilot, CardScreen)
        assert_inert(screen_text(app))


# -- the property: any text, through each of these paths ------------------------------------------

HOSTILE_CHARS = st.sampled_from(list("\x1b\x07\x9b\x85\x00\t\n\r\x7f\u202e\u2066\u200b[]/=\"`#!()<>|*_\\ ")
                                + ["[/]", '[X="]', "[b]", "\x1b]52;c;", "\x1b[2J", "## ", "```", "![x](http://h/i)"])
HOSTILE_TEXT = st.lists(st.one_of(HOSTILE_CHARS, st.text(max_size=3)), min_size=1, max_size=12).map("".join)


async def _drive(text: str) -> None:
    app = still_app()
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        app.process_table.show(scan(row(4244, text, command=f"python {text}", user=text)), time.time())
        worse(app, "G6", f"training pid 4244 ({text}) holds 80 GiB")
        app.notify(text, title=text)
        await pilot.pause()
        assert app.is_running
        assert_inert(screen_text(app))
        await pilot.press("e")
        await wait_for(pilot, lambda: len(app.screen_stack) > 1, what="the events view")
        assert_inert(screen_text(app))
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(app.screen_stack) == 1, what="the main screen")
        app.checklist.move_cursor(row=app.checklist.get_row_index("G6"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(app.screen_stack) > 1, what="a pop-up")
        assert_inert(screen_text(app))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=HOSTILE_TEXT)
def test_any_outside_text_through_the_dashboard_never_crashes_nor_reaches_the_terminal_raw(text):
    asyncio.run(_drive(text))
