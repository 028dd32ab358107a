"""The peers view (m), driven by Pilot. Peers are real: the loopback sshd of test_fleet_peers.py
and the real sparktui run over it, fetched by the app's own PeerFetcher; this machine's readings
reach the app the way a check run delivers them (a ChecksDone message)."""

from __future__ import annotations

import asyncio
import re

from rich.text import Text
from textual.widgets import DataTable

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.fleet.peers import PeerState, judge_peer
from sparktui.gotchas import IDS
from sparktui.runner import Judged
from sparktui.ui.app import ChecksDone, SparkApp, SparkCommands
from sparktui.ui.peers import PeersScreen
from sparktui.ui.screens import HelpScreen
from sparktui.ui.panels import Checklist
from tests import test_fleet_peers
from tests.test_fleet_peers import _peer_command
from tests.ui import waiting
from tests.ui.test_dashboard import DEMO, StillSource
from tests.ui.waiting import leaves, says, shows, wait_for

sshd = test_fleet_peers.sshd  # the loopback sshd fixture, for this module's tests

LOCAL_TORCH = "2.9.0+cu130"


def peers_cfg(sshd, *hosts: str, command: str | None = None, timeout_s: float | None = None) -> Config:
    d, peer_home = sshd
    return Config().with_overrides(fleet={"peers": list(hosts), "ssh_config": str(d / "ssh_config"),
                                          "peer_command": command or _peer_command(peer_home),
                                          "connect_timeout_s": 5.0, "peer_timeout_s": timeout_s})


def live_app(cfg: Config) -> SparkApp:
    return SparkApp(cfg, source=StillSource(), auto_checks=False)


def screen_text(app) -> str:
    """What the terminal shows now, as text."""
    return waiting.screen_text(app)


def cell(app, table: str, row: str, col: str) -> Text:
    c = app.screen.query_one(f"#{table}", DataTable).get_cell(row, col)
    return c if isinstance(c, Text) else Text(str(c))


def static_text(app, wid: str) -> str:
    c = app.screen.query_one(f"#{wid}").content
    return c.plain if isinstance(c, Text) else str(c)


async def peers_answered(app, pilot, timeout: float = 90.0) -> None:
    """Every peer fetched, and its result handled on the app's thread."""
    w = app.peer_watch
    assert await asyncio.to_thread(w.fetcher.wait, timeout)
    await wait_for(pilot, lambda: all(s.host in w.results and w.fetching_s(s.host) is None for s in w.specs),
                   what="every peer's answer handled", state=lambda: dict(w.results))
    await pilot.pause()


def local_readings_like(peer_readings: Readings, torch: str) -> Readings:
    """This machine: the peer's real snapshot readings, with another torch build."""
    r = Readings(dict(peer_readings))
    t = dict(r.data("target"))
    t["torch"] = {**(t.get("torch") or {}), "version": torch}
    t["packages"] = {**(t.get("packages") or {}), "torch": torch}
    r.add(Reading("target", t, source="test"))
    return r


# -- (a) no peers ----------------------------------------------------------------------------------

async def test_no_peers_m_says_how_to_configure_them():
    app = live_app(Config())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("m")
        await shows(pilot, PeersScreen)
        notice = await wait_for(pilot, lambda: "sparktui --peer" in (s := static_text(app, "peers-notice")) and s,
                                what="the how-to notice")
        assert "sparktui --peer" in notice and "[fleet] peers = [" in notice
        assert "replay" not in notice
        shown = screen_text(app)
        assert "No peers are configured" in shown and "[fleet] peers" in shown
        assert app.peer_watch.fetcher is None  # nothing to fetch, no thread started
        assert not app.screen.query_one("#peers-compare").display
        # this machine's column is there: its state and one row per check
        checks = app.screen.query_one("#peers-checks", DataTable)
        assert [rk.value for rk in checks.rows] == ["state"] + list(IDS)
        assert cell(app, "peers-checks", "state", "m0").plain == "● here"


async def test_replay_does_not_fetch_peers_and_says_so():
    app = SparkApp(Config().with_overrides(fleet={"peers": ["spark-2"]}), replay=str(DEMO), speed=None)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("m")
        await shows(pilot, PeersScreen)
        notice = await wait_for(pilot, lambda: "replay" in (s := static_text(app, "peers-notice")) and s,
                                what="the replay notice")
        assert "replay" in notice and "not fetched" in notice and "spark-2" in notice
        assert "No peers are configured" not in notice
        assert app.peer_watch.fetcher is None
        await pilot.press("r")
        await says(pilot, "live machine only")


# -- (b) a reachable peer --------------------------------------------------------------------------

async def test_reachable_peer_shows_its_glyphs_and_a_different_torch_is_highlighted(sshd):
    app = live_app(peers_cfg(sshd, "peer-ok"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("m")
        await shows(pilot, PeersScreen)
        await peers_answered(app, pilot)
        res = app.peer_watch.results["peer-ok"]
        assert res.state is PeerState.OK, res.reason
        # this machine's column arrives as a check run would deliver it
        local = local_readings_like(res.readings, LOCAL_TORCH)
        verdicts = judge_peer(local, app.cfg)
        app.post_message(ChecksDone(Judged(tuple(verdicts), local, tuple(local))))
        await wait_for(pilot, lambda: cell(app, "peers-compare", "torch", "m0").plain == LOCAL_TORCH,
                       what="this machine's torch in the comparison")

        assert cell(app, "peers-checks", "state", "m1").plain == "✔ reachable"
        for v in res.verdicts:  # the peer's G1-G10, judged here, with the main checklist's glyphs
            c = cell(app, "peers-checks", v.id, "m1")
            assert c.plain == f"{v.status.glyph} {v.status.value}", v.id
        mine = {v.id: v for v in verdicts}
        assert cell(app, "peers-checks", "G1", "m0").plain.startswith(mine["G1"].status.glyph)

        torch_local, torch_peer = cell(app, "peers-compare", "torch", "m0"), cell(app, "peers-compare", "torch", "m1")
        assert torch_local.plain == LOCAL_TORCH and "reverse" not in str(torch_local.style)
        assert torch_peer.plain != LOCAL_TORCH and "reverse" in str(torch_peer.style) and "red" in str(torch_peer.style)
        assert cell(app, "peers-compare", "torch", "match").plain == "✘ DIFFERS"
        # the same Python on both ends of the loopback: equal, not highlighted
        py = cell(app, "peers-compare", "python", "m1")
        assert py.plain == cell(app, "peers-compare", "python", "m0").plain and "reverse" not in str(py.style)
        summary = static_text(app, "peers-summary")
        assert "differ: " in summary and "torch" in summary.split("differ: ", 1)[1].splitlines()[0]
        # and the main screen's header says so without opening this view
        await wait_for(pilot, lambda: "peers differ: torch" in app.header_bar.render().plain, what="the header's badge")
        assert "bold red" in str([sp.style for sp in app.header_bar.render().spans])
        shown = screen_text(app)
        assert "peer-ok" in shown and "reachable" in shown

        # r fetches again: a new answer replaces the first
        first = res.fetched_at
        await pilot.press("r")
        await peers_answered(app, pilot)
        assert app.peer_watch.results["peer-ok"].fetched_at > first
        assert cell(app, "peers-checks", "state", "m1").plain == "✔ reachable"


# -- (c) an unreachable peer, and one that times out ------------------------------------------------

async def test_unreachable_peer_says_why_and_the_local_column_still_shows(sshd):
    app = live_app(peers_cfg(sshd, "peer-down"))
    async with app.run_test(size=(120, 40)) as pilot:
        app.post_message(ChecksDone(Judged(tuple(judge_peer(Readings(), app.cfg, ["G7"])), Readings(), ())))
        await pilot.press("m")
        await peers_answered(app, pilot, 20)
        state = await wait_for(pilot, lambda: (s := cell(app, "peers-checks", "state", "m1").plain).startswith("✘") and s,
                               what="the peer's state drawn")
        assert state.startswith("✘ unreachable: ") and "connection refused" in state.lower()
        machines = static_text(app, "peers-machines")
        assert "peer-down: unreachable: connection refused" in machines
        # its checks are not judged: no glyph, and its comparison cells are unknown with the reason
        assert cell(app, "peers-checks", "G1", "m1").plain == "·"
        drv = cell(app, "peers-compare", "driver", "m1").plain
        assert drv.startswith("? ") and "connection refused" in drv.lower()
        assert "✔" not in cell(app, "peers-compare", "torch", "match").plain  # never "same" by omission
        # the local column still shows: its state and the verdict the app holds
        assert cell(app, "peers-checks", "state", "m0").plain == "● here"
        g7 = app.board["G7"].verdict
        assert cell(app, "peers-checks", "G7", "m0").plain == f"{g7.status.glyph} {g7.status.value}"
        assert "unreachable" in screen_text(app)
        await wait_for(pilot, lambda: "peer peer-down: unreachable" in app.header_bar.render().plain,
                       what="the header's badge")


async def test_a_slow_peer_counts_up_while_fetching_then_says_timeout_and_r_fetches_again(sshd):
    app = live_app(peers_cfg(sshd, "peer-ok", command="sleep 30; true", timeout_s=6))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("m")
        # inside the 6-s timeout: a loaded machine draws late
        await wait_for(pilot, lambda: (m := re.fullmatch(r". fetching… (\d+)s", cell(app, "peers-checks", "state", "m1").plain))
                       and int(m.group(1)) >= 1, timeout=5.5, what="the fetch counting up",
                       state=lambda: cell(app, "peers-checks", "state", "m1").plain)
        assert re.search(r"^peer-ok: fetching… \d+s \(ssh peer-ok\)", static_text(app, "peers-machines"), re.M)
        assert cell(app, "peers-compare", "torch", "m1").plain == "? fetching…"  # unknown, not equal
        await peers_answered(app, pilot, 20)
        assert cell(app, "peers-checks", "state", "m1").plain.startswith("✘ timeout: no complete answer within 6 s")
        assert "timeout: no complete answer" in static_text(app, "peers-machines")
        await pilot.press("r")
        state = await wait_for(pilot, lambda: re.search(r"fetching… \d+s$", s := cell(app, "peers-checks", "state", "m1").plain)
                               and s, what="the fetch started again")
        assert re.search(r"fetching… [01]s$", state), state
        assert "last answer: timeout" in static_text(app, "peers-machines")
        await peers_answered(app, pilot, 20)
        assert cell(app, "peers-checks", "state", "m1").plain.startswith("✘ timeout")


# -- (d) escape, help, palette ----------------------------------------------------------------------

async def test_escape_returns_to_the_main_screen():
    app = live_app(Config())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("m")
        await shows(pilot, PeersScreen)
        await pilot.press("escape")
        await leaves(pilot, PeersScreen)
        assert app.screen.query_one(Checklist) is app.checklist
        assert "Machines side by side" not in screen_text(app)
        await pilot.press("m", "m")  # m again closes it too
        await pilot.pause()
        await wait_for(pilot, lambda: not isinstance(app.screen, PeersScreen) and len(app.screen_stack) == 1,
                       what="the main screen alone", state=lambda: app.screen_stack)


async def test_narrow_terminal_still_shows_the_columns():
    app = live_app(Config())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("m")
        await shows(pilot, PeersScreen)
        shown = await wait_for(pilot, lambda: "No peers are configured" in (s := screen_text(app)) and s,
                               what="the notice drawn")
        assert "No peers are configured" in shown and "sparktui --peer" in shown


async def test_help_and_palette_offer_the_machines_view():
    app = live_app(Config())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("question_mark")
        await shows(pilot, HelpScreen)
        assert dict(app.screen.keys)["m"].startswith("peers: this machine beside")
        await pilot.press("escape")
        hits = [h async for h in SparkCommands(app.screen).search("machines")]
        assert hits
        await hits[0].command()
        await shows(pilot, PeersScreen)
