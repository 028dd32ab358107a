"""A replay is look-only, and says where it is (issue 24, Seen 1 and 12; What to build 1).

Replaying a kept session hours later is the common case, and a recorded pid can belong to any
process by then: no signal (k), bandwidth (b) or rerun (r, R) exists in a replay, not in the
footer, help, palette or a card; the key only says why. The header says where the replay is
(`REPLAY 16:05 / 16:25`, `· ended` once played to the end, never "watching ... at 1x" then);
← → step a minute through the recording and home / end jump to its start / end, and the plots,
the process scan, the telemetry-fed verdicts and the header follow the position.
"""

from __future__ import annotations

import re
import time

import psutil
import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.ui.app import SparkApp, SparkCommands
from sparktui.ui.screens import CardScreen, ConfirmScreen, HelpScreen
from tests.real_processes import ended, orphan
from tests.ui.test_dashboard import DEMO, StillSource, replay_app
from tests.ui.test_process_table import real_row, show_and_select
from tests.ui.waiting import loaded, says, screen_lines, shows, wait_for

SIZES = [(80, 24), (200, 60)]
LOOK_ONLY = {"k": "signal", "b": "G5", "r": "rerun", "R": "all"}


def hm(t: float) -> str:
    return time.strftime("%H:%M", time.localtime(t))


def header(app) -> str:
    return app.header_bar.render().plain


async def footer(app, pilot) -> str:
    return await wait_for(pilot, lambda: screen_lines(app)[-1].strip() and screen_lines(app)[-1], what="the footer")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_replay_offers_no_signal_bandwidth_or_rerun_and_the_keys_only_say_so(size):
    app = replay_app()
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        line = await footer(app, pilot)
        for key, word in LOOK_ONLY.items():
            assert f"{key} {word}" not in line, (key, line)
        assert "? help" in line and "→ +1 min" in line
        offered = [str(h.display) async for h in SparkCommands(app.screen).discover()]
        assert not [o for o in offered if re.search(r"Signal|bandwidth|Rerun", o)], offered
        assert "Replay: one minute back" in offered
        await pilot.press("question_mark")
        keys = dict((await shows(pilot, HelpScreen)).keys)
        assert not set(LOOK_ONLY) & set(keys), keys
        assert "replay: one minute back" == keys["←"] and "look-only" in app.screen.note
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(app.screen_stack) == 1, what="back on the main screen")
        runs = {gid: st.runs for gid, st in app.board.states.items()}
        app.query_one("#proc-table").focus()
        for key in LOOK_ONLY:
            await pilot.press(key)
            await says(pilot, lambda n: n.message.startswith("replay, look-only"), what=f"{key}'s note")
            assert len(app.screen_stack) == 1, (key, app.screen)  # no dialog, no measurement, nothing asked
        assert {gid: st.runs for gid, st in app.board.states.items()} == runs
        assert app.bandwidth_worker is None
        # a card of a replay copies its fix but does not rerun
        app.checklist.focus()
        await pilot.press("enter")
        await shows(pilot, CardScreen)
        line = await wait_for(pilot, lambda: "copy fix" in screen_lines(app)[-1] and screen_lines(app)[-1], what="the card's footer")
        assert "rerun" not in line
        await pilot.press("r")
        await pilot.pause()
        assert not [n for n in app.said if n.message.startswith("rerunning")]


async def test_k_in_a_replay_never_reaches_the_local_process_that_holds_a_recorded_pid():
    """Seen 1: the demo's `vllm serve` row with its pid edited to a local `sleep` offered
    "Send SIGTERM to pid ...?" and showed the local sleep. Here the row is the local sleep itself
    (even its start time matches): a replay still signals nothing."""
    app = replay_app()
    with orphan(["sleep", "81"]) as pid:
        async with app.run_test(size=(120, 36)) as pilot:
            await loaded(pilot)
            me = dict(real_row(pid), started=psutil.Process(pid).create_time())
            await show_and_select(app, pilot, [me], pid)
            await pilot.press("k", "y")
            await says(pilot, "replay, look-only: no process is signalled")
            await pilot.pause()
            assert len(app.screen_stack) == 1 and not ended(pid)


async def test_k_refuses_a_row_whose_pid_now_belongs_to_another_process():
    """Live: the row was read when another process held the pid (its start time says so)."""
    app = SparkApp(Config(), source=StillSource(), auto_checks=False)
    with orphan(["sleep", "82"]) as pid:
        async with app.run_test(size=(120, 36)) as pilot:
            then = psutil.Process(pid).create_time() - 3600  # the row's process started an hour earlier
            await show_and_select(app, pilot, [dict(real_row(pid), started=then)], pid)
            await pilot.press("k")
            await says(pilot, lambda n: n.message.startswith(f"not signalled: pid {pid} is now another process"))
            assert not isinstance(app.screen, ConfirmScreen) and not ended(pid)


async def test_the_header_says_where_the_replay_is_and_that_it_ended():
    app = replay_app()
    samples = app.source.recording.samples
    first, last = samples[0]["t"], samples[-1]["t"]
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        assert f"REPLAY {hm(last)} / {hm(last)} · ended" in header(app)
        assert "watching" not in header(app) and " at " not in app.source.label
        assert screen_lines(app)[0].rstrip().endswith("gb10-demo.jsonl")  # whole words, nothing cut
        await pilot.press("home")
        await wait_for(pilot, lambda: f"REPLAY {hm(first)} / {hm(last)}" in header(app), what="the header at the start",
                       state=lambda: header(app))
        assert "ended" not in header(app) and "PAUSED" in header(app)


async def test_arrows_and_home_end_move_the_plots_processes_and_verdicts_through_the_recording():
    app = replay_app()
    samples = app.source.recording.samples
    step = max(1, round(60 / app.source.interval_s))  # one minute of samples
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        at_end = {gid: (st.verdict.status, st.verdict.summary) for gid, st in app.board.states.items() if st.verdict}
        assert app.board["G4"].verdict.status in (Status.WARN, Status.FAIL)  # the demo throttles
        await pilot.press("home")
        await wait_for(pilot, lambda: app.source.position == 1 and "0.0 s of 10 min" in app.board["G4"].verdict.summary,
                       what="G4 judged at the first sample", state=lambda: (app.source.position, app.board["G4"].verdict))
        assert app.board["G4"].verdict.status is Status.UNKNOWN
        assert len(app.source.history) == 1 and app.source.history.latest is samples[0]
        temp = samples[0]["gpus"][0]["temp_c"]
        assert app.telemetry.temp.text.startswith(f"{temp:.0f} °C"), app.telemetry.temp.text
        await pilot.press("right", "right")
        await wait_for(pilot, lambda: app.source.position == 1 + 2 * step, what="two minutes on",
                       state=lambda: app.source.position)
        t = samples[app.source.position - 1]["t"]
        await wait_for(pilot, lambda: f"REPLAY {hm(t)} /" in header(app), what="the header two minutes on",
                       state=lambda: header(app))
        snap = app.source.replay.processes_at(t)
        assert snap is not None and app.latest_processes is snap  # the scan of that moment
        await pilot.press("left")
        await wait_for(pilot, lambda: app.source.position == 1 + step, what="one minute back",
                       state=lambda: app.source.position)
        await pilot.press("end")
        await wait_for(pilot, lambda: app.source.finished and "· ended" in header(app), what="the end again",
                       state=lambda: (app.source.position, header(app)))
        await pilot.pause()
        again = {gid: (st.verdict.status, st.verdict.summary) for gid, st in app.board.states.items() if st.verdict}
        assert {g: again[g] for g in at_end} == at_end  # the end judges as `check --replay` does


async def test_p_plays_on_from_where_a_seek_left_the_replay():
    app = SparkApp(Config(), replay=str(DEMO), speed=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await pilot.press("home", "right")
        await wait_for(pilot, lambda: app.source.paused and not app.source.finished, what="held after a seek")
        await pilot.press("p")
        await wait_for(pilot, lambda: app.source.finished and "· ended" in header(app), what="played to the end",
                       state=lambda: (app.source.position, header(app)))
        assert app.source.position == len(app.source.recording.samples)
        assert len(app.source.history) == min(len(app.source.recording.samples), app.source.history.maxlen)


async def test_the_filter_box_and_the_tab_bar_keep_their_own_arrows_in_a_replay():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        at = app.source.position
        await pilot.press("slash", "v", "l", "home", "left", "end")
        box = app.query_one("#proc-filter")
        assert app.focused is box and box.cursor_position == 2 and app.source.position == at
        await pilot.press("escape")
        app.query_one("#tabs").query_one("ContentTabs").focus()
        await pilot.press("right")
        await wait_for(pilot, lambda: app.query_one("#tabs").active == "tab-playbooks", what="the next tab")
        assert app.source.position == at


def test_replay_source_seek_holds_the_recording_up_to_a_position():
    import threading

    from sparktui.live.sources import ReplaySource

    cfg = Config().with_overrides(telemetry={"history": 50})
    got, done = [], threading.Event()
    src = ReplaySource(str(DEMO), cfg, got.append, lambda p: None, speed=None, on_finished=done.set)
    samples = src.recording.samples
    src.start()
    assert done.wait(10) and src.finished and src.position == len(samples)
    done.clear()
    snap = src.seek(120)
    assert not done.is_set() and not src.finished and src.paused  # held there, not "finished"
    assert src.position == 120 and src.now() == samples[119]["t"] and len(src.history) == 50
    assert src.history.latest is samples[119] and snap is src.replay.processes_at(samples[119]["t"])
    assert src.index_at(samples[119]["t"] + 0.1) == 120 and src.index_at(0) == 1
    assert src.seek(10**9) is not None and src.finished and src.position == len(samples)  # clamped: the end
    src.seek(-5)
    assert src.position == 1 and len(src.history) == 1
    got.clear()
    src.resume()  # plays on from the position
    assert done.wait(10) and src.finished and got and got[0] is samples[1] and got[-1] is samples[-1]
    src.stop()
