"""Navigation, footers and help that tell the truth: q / escape go back from every pushed view
(only the main screen quits, ctrl+c asks), each view's footer and `?` list exactly the keys that
work there, and what a card or pop-up shows is whole (evidence values, issue URLs)."""

from __future__ import annotations

import re
import time

import pytest
from textual.geometry import Region
from textual.widgets import Footer, Markdown

from sparktui.core.config import Config
from sparktui.core.verdict import Evidence, Status, Verdict
from sparktui.ui.app import SparkApp
from sparktui.ui.panels import Checklist
from sparktui.ui.peers import PeersScreen
from sparktui.ui.screens import CardScreen, ConfirmScreen, EventsScreen, HelpScreen, MessageScreen, slash_lines
from tests.ui.test_dashboard import StillSource, replay_app, replay_app_catching_urls
from tests.ui.waiting import leaves, loaded, says, screen_lines, shows, wait_for

ISSUE_URL = "https://github.com/NVIDIA/dgx-spark-playbooks/issues/88"
SIZES = [(80, 24), (200, 60)]


def still_app() -> SparkApp:
    """A live-like app that never samples or checks by itself: the test drives what changes."""
    return SparkApp(Config(), source=StillSource(), auto_checks=False)


def screen_text(app) -> list[str]:
    """The terminal's lines as drawn now (a pop-up over the dimmed screen under it)."""
    return screen_lines(app)


async def footer(app, pilot) -> str:
    """The current view's footer, as rendered: its own Footer, on the terminal's last line (once
    drawn: a footer recomposed for the terminal's width is blank for a moment)."""
    assert app.screen.query(Footer), f"{type(app.screen).__name__} has no footer of its own"
    return await wait_for(pilot, lambda: screen_text(app)[-1].strip() and screen_text(app)[-1], what="the footer drawn")


def widget_lines(widget) -> list[str]:
    return [s.text.rstrip() for s in widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))]


async def opens(app, pilot, key: str, kind: type) -> None:
    await pilot.press(key)
    await shows(pilot, kind)


async def open_issue(app, pilot) -> None:
    app.query_one("#tabs").active = "tab-playbooks"
    table = app.query_one("#pb-table")
    await wait_for(pilot, lambda: table.display and table.region.height, what="the playbook table shown")
    table.focus()
    await opens(app, pilot, "enter", MessageScreen)
    assert app.screen.url == ISSUE_URL


async def open_process(app, pilot) -> None:
    app.query_one("#proc-table").focus()
    await opens(app, pilot, "enter", MessageScreen)
    assert app.screen.url is None


async def back_to_main(app, pilot, key: str = "escape") -> None:
    await pilot.press(key)
    await wait_for(pilot, lambda: len(app.screen_stack) == 1, what="the main screen alone",
                   state=lambda: [type(s).__name__ for s in app.screen_stack])


VIEWS = {  # view -> (the key that opens it from the main screen, its type)
    "card": ("enter", CardScreen),
    "events": ("e", EventsScreen),
    "peers": ("m", PeersScreen),
    "help": ("question_mark", HelpScreen),
    "quit confirmation": ("ctrl+c", ConfirmScreen),
}


async def open_view(app, pilot, view: str) -> None:
    if view == "issue pop-up":
        await open_issue(app, pilot)
    elif view == "process pop-up":
        await open_process(app, pilot)
    else:
        await opens(app, pilot, *VIEWS[view])


ALL_VIEWS = [*VIEWS, "issue pop-up", "process pop-up"]


@pytest.mark.parametrize("key", ["q", "escape"])
async def test_q_and_escape_go_back_from_every_view_and_keep_the_session(key):
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        history, events = app.source.history, len(app.events)
        appended = history.appended
        for view in ALL_VIEWS:
            app.checklist.focus()
            await open_view(app, pilot, view)
            await back_to_main(app, pilot, key)
            assert app.is_running and app.return_code is None, view
            assert app.source.history is history and history.appended == appended and len(app.events) >= events, view
        # a help opened from a card goes back to the card, not further
        app.checklist.focus()
        await open_view(app, pilot, "card")
        await opens(app, pilot, "question_mark", HelpScreen)
        await pilot.press(key)
        await leaves(pilot, HelpScreen)
        assert isinstance(app.screen, CardScreen)
        assert len(app.screen_stack) == 2 and app.is_running


async def test_q_on_the_main_screen_quits():
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, what="the app ended")
        assert app.return_code == 0 and not app.is_running


async def test_ctrl_c_asks_first_n_keeps_running_y_quits():
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await opens(app, pilot, "ctrl+c", ConfirmScreen)
        assert app.screen.title_text == "Quit sparktui?"
        line = await footer(app, pilot)
        assert "y yes" in line and "n no" in line
        await back_to_main(app, pilot, "n")
        assert app.is_running and app.return_code is None
        await pilot.press("ctrl+c", "y")
        await wait_for(pilot, lambda: not app.is_running, what="the app ended")


class KeptSession(StillSource):
    """A live-like source whose session is kept (core/session.SessionWriter stands open)."""

    def kept(self) -> list[str]:
        from sparktui.live.sources import LiveSource

        src = LiveSource.__new__(LiveSource)  # LiveSource's own words, with a session standing open
        src.session, src.keep_session, src.session_error, src.writer, src.record_path = object(), True, None, None, None
        return LiveSource.kept(src)


@pytest.mark.parametrize("source, says_kept", [(KeptSession, True), (StillSource, False)])
async def test_ctrl_c_says_truly_whether_the_session_is_kept(source, says_kept):
    """Seen 5: it said the session was not kept "(unless --record)", then `sparktui history` listed it."""
    app = SparkApp(Config(), source=source(), auto_checks=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await opens(app, pilot, "ctrl+c", ConfirmScreen)
        body = str(app.screen.body)
        assert ("`sparktui history` lists it" in body) is says_kept, body
        assert ("not kept (--no-session or [session] keep = false)" in body) is not says_kept, body
        assert "unless --record" not in body


# What each view's footer must offer, and main-screen keys it must not (they do nothing there).
FOOTER = {
    "card": (["esc back", "c copy fix", "? help", "p pause"], ["quit", "card", "events", "G5", "rerun"]),  # a replay's
    "events": (["esc back", "? help", "p pause"], ["quit", "card", "rerun", "G5"]),
    "peers": (["esc back", "r refetch peers", "? help"], ["quit", "card", "events", "G5"]),
    "help": (["esc back"], ["quit", "pause", "help", "card", "rerun"]),
    "quit confirmation": (["y yes", "n no"], ["quit", "pause", "help", "card", "rerun"]),
    "issue pop-up": (["esc back", "o open URL", "y copy URL"], ["quit", "pause", "card", "rerun", "G5"]),
    "process pop-up": (["esc back"], ["URL", "quit", "pause", "card", "rerun", "G5"]),
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_each_view_has_a_footer_offering_only_its_keys(size):
    app = replay_app()
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        main = await footer(app, pilot)
        for shown in ("⏎ card", "q quit", "? help", "p pause"):
            assert shown in main, (shown, main)
        for view, (offered, absent) in FOOTER.items():
            app.checklist.focus()
            await open_view(app, pilot, view)
            line = await footer(app, pilot)
            for shown in offered:
                assert shown in line, (view, shown, line)
            for word in absent:
                assert not re.search(rf"\b{re.escape(word)}\b", line), (view, word, line)
            await back_to_main(app, pilot)


async def test_p_says_pause_or_resume_in_the_footer_and_help():
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        line = await footer(app, pilot)
        assert "p pause" in line and "resume" not in line
        await pilot.press("p")
        await wait_for(pilot, lambda: "p resume" in screen_text(app)[-1], what="the footer saying p resume",
                       state=lambda: screen_text(app)[-1])
        line = await footer(app, pilot)
        assert app.source.paused and "p resume" in line and "p pause" not in line
        await pilot.press("question_mark")
        assert ("p", "resume sampling (paused now)") in (await shows(pilot, HelpScreen)).keys
        assert not [k for k in app.screen.keys if k[1] == "pause sampling"]
        await pilot.press("escape", "p")
        await wait_for(pilot, lambda: "p pause" in screen_text(app)[-1], what="the footer saying p pause",
                       state=lambda: screen_text(app)[-1])
        assert not app.source.paused and "p pause" in await footer(app, pilot)


def help_keys(app) -> dict[str, str]:
    assert isinstance(app.screen, HelpScreen)
    return dict(app.screen.keys)


async def help_of(pilot, view: str) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen) and app.screen.title_text == f"sparktui keys: {view}",
                   what=f"the help of the {view} view", state=lambda: getattr(app.screen, "title_text", app.screen))


async def test_help_lists_the_keys_of_the_view_it_was_opened_in():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        await pilot.press("question_mark")
        await shows(pilot, HelpScreen)
        main = help_keys(app)
        for key in ("q", "?", "⏎", "←", "→", "home", "end", "/", "s", "p", "e", "m", "^c"):
            assert key in main, (key, main)
        assert not {"r", "R", "b", "k"} & set(main)  # a replay is look-only
        assert "quit" in main["q"] and "asking" in main["^c"]
        assert "o" not in main and "y" not in main  # the issues tab is not showing: o / y do nothing
        assert "c" not in main  # nothing is running: nothing to cancel
        assert "Playbook issues" in app.screen.note
        await pilot.press("escape", "enter", "question_mark")  # from a card
        await help_of(pilot, "card")
        card = help_keys(app)
        assert "esc q" in card and "back" in card["esc q"]
        assert "copy" in card["c"] and "r" not in card  # a replay's card does not rerun
        assert not {"e", "m", "b", "R", "/", "⏎"} & set(card)
        # only the digits of blocks this fix has (G1's fix: three)
        blocks = [k for k in card if re.fullmatch(r"[\d ]+", k)]
        assert blocks == ["1 2 3"], card
        await pilot.press("escape", "escape", "e", "question_mark")  # from the events view
        await help_of(pilot, "events")
        events = help_keys(app)
        assert "esc q" in events
        assert not {"r", "c", "e", "⏎"} & set(events)
        await pilot.press("escape", "escape", "m", "question_mark")  # from the peers view
        await help_of(pilot, "peers")
        peers = help_keys(app)
        assert "fetch every peer again" in peers["r"]
        assert "back" in peers["esc q m"]


async def test_o_and_y_open_and_copy_the_url_inside_the_issue_popup(monkeypatch):
    app, opened, copied = replay_app_catching_urls(monkeypatch)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        await open_issue(app, pilot)
        await pilot.press("o", "y")
        await wait_for(pilot, lambda: opened and copied, what="the URL opened and copied")
        assert opened == [ISSUE_URL] and copied == [ISSUE_URL]
        assert isinstance(app.screen, MessageScreen)  # still reading the issue
        await says(pilot, lambda n: n.message == f"opened {ISSUE_URL}")


def shown_seconds(app, gid: str, text: str, pattern: str, since_start: float) -> int:
    """The seconds ``text`` says ``gid`` has run: counted from the check's start (``since_start``
    seconds before the test's first look), never more than the board's clock says now."""
    m = re.search(pattern, text)
    assert m, (pattern, text[:300])
    elapsed = time.monotonic() - app.board[gid].running_since
    assert since_start <= int(m.group(1)) <= elapsed, (m.group(0), elapsed)
    return int(m.group(1))


async def test_r_on_a_running_check_says_it_runs_and_for_how_long_on_the_main_screen_and_its_card():
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app._set_verdict(Verdict("G1", Status.FAIL, "torch 2.9.0+cu128 is built for CUDA 12.8"), time.monotonic())
        app.board.start(["G1"], time.monotonic() - 12)
        runs = app.board["G1"].runs
        app.query_one(Checklist).move_cursor(row=0)
        await pilot.press("r")
        note = await says(pilot, lambda n: n.message.startswith("already running: G1"))
        assert shown_seconds(app, "G1", note.message, r"^already running: G1 for (\d+) s \(c cancels\)$", 12)
        await pilot.press("enter")
        await shows(pilot, CardScreen)
        md = await wait_for(pilot, lambda: "Status: running" in (s := app.screen.query_one("#card-md", Markdown).source) and s,
                            what="the card saying G1 runs")
        first = shown_seconds(app, "G1", md, r"\*\*Status: running for (\d+) s\*\*", 12)
        assert "not checked yet" not in md
        assert "**Previous verdict: FAIL** · torch 2.9.0+cu128 is built for CUDA 12.8" in md
        await pilot.press("r")
        note = await says(pilot, lambda n: n.message.startswith("G1 is already running"))
        shown_seconds(app, "G1", note.message, r"^G1 is already running \((\d+) s\)", 12)
        assert app.board["G1"].runs == runs  # nothing started
        card = app.screen.query_one("#card-md", Markdown)
        await wait_for(pilot, lambda: f"running for {first} s" not in card.source,  # counts up, once a second
                       what="the card's seconds counting up", state=lambda: card.source[:200])
        shown_seconds(app, "G1", card.source, r"\*\*Status: running for (\d+) s\*\*", first + 1)
        app._set_verdict(Verdict("G1", Status.OK, "torch 2.9.0+cu130"), time.monotonic())
        md = await wait_for(pilot, lambda: "**Status: OK**" in card.source and card.source, what="the card showing the verdict",
                            state=lambda: card.source[:200])
        assert "**Status: OK** · torch 2.9.0+cu130" in md and "running" not in md


async def test_a_card_of_a_check_running_for_the_first_time_says_so():
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.board.start(["G2"], time.monotonic() - 3)
        app.query_one(Checklist).move_cursor(row=1)
        await pilot.press("enter")
        await shows(pilot, CardScreen)
        md = await wait_for(pilot, lambda: "Status: running" in (s := app.screen.query_one("#card-md", Markdown).source) and s,
                            what="the card saying G2 runs")
        shown_seconds(app, "G2", md, r"\*\*Status: running for (\d+) s\*\* · no previous verdict", 3)
        assert "not checked yet" not in md


async def test_telemetry_behind_a_card_is_redrawn_as_soon_as_the_card_closes():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        app.auto_checks = False
        await pilot.press("enter")
        await shows(pilot, CardScreen)
        h = app.source.history
        newer = dict(h.latest, t=h.latest["t"] + 1, gpus=[dict(h.latest["gpus"][0], temp_c=97.0)])
        h.append(newer)
        app._on_sample_thread(newer)  # arrives while the card is up: not drawn behind it
        await pilot.pause()
        await pilot.press("escape")
        await leaves(pilot, CardScreen)
        await pilot.pause()  # one refresh: well before the next sample or tick would draw it
        assert any("97 °C" in line for line in screen_text(app))


LONG_PATH = "/usr/local/cuda-13.0/targets/sbsa-linux/lib/" + "nested-directory-of-a-real-install/" * 6 + "libcudart.so.13"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_card_shows_evidence_values_whole_wrapped_not_cut(size):
    app = still_app()
    ev = [Evidence("torch.version.cuda (authoritative signal)", "target interpreter torch.version.cuda", "12.8"),
          Evidence("ctypes load libcudart.so.13", "target interpreter ctypes.CDLL", LONG_PATH),
          Evidence("a huge value", "test", "x" * 2500)]
    async with app.run_test(size=size) as pilot:
        app._set_verdict(Verdict("G1", Status.FAIL, "cu128", evidence=ev), time.monotonic())
        app.query_one(Checklist).move_cursor(row=0)
        await pilot.press("enter")
        await shows(pilot, CardScreen)
        paragraphs = "#card-md MarkdownBulletList MarkdownParagraph"
        await wait_for(pilot, lambda: any(" ".join(widget_lines(p)).startswith("a huge value:")
                                          for p in app.screen.query(paragraphs)), what="the evidence drawn")
        items = [widget_lines(p) for p in app.screen.query(paragraphs)]
        shown = {"".join(lines): lines for lines in items}  # each item's lines, joined as drawn
        texts = [" ".join(lines) for lines in items]
        assert "torch.version.cuda (authoritative signal): 12.8 · from target interpreter torch.version.cuda" in texts
        path_item = next(joined for joined in shown if joined.startswith("ctypes load libcudart.so.13:"))
        assert LONG_PATH in path_item and len(shown[path_item]) > 2  # whole, over several lines
        assert all(len(line) <= size[0] for line in shown[path_item])
        huge = next(joined for joined in shown if joined.startswith("a huge value:"))
        assert "x" * 1999 + "…" in huge and "x" * 2000 not in huge  # whole up to a sane bound, the cut marked
        assert not any("…" in line for joined, lines in shown.items() if joined != huge for line in lines)


def test_a_url_breaks_only_after_a_slash():
    assert slash_lines(ISSUE_URL, 30) == ["https://github.com/NVIDIA/", "dgx-spark-playbooks/issues/88"]
    assert slash_lines(ISSUE_URL, 200) == [ISSUE_URL]
    assert slash_lines("https://h/" + "a" * 12, 5) == ["https", "://h/", "aaaaa", "aaaaa", "aa"]  # last resort: fold


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_issue_popup_draws_its_url_broken_only_at_slashes(size):
    url = "https://github.com/NVIDIA/dgx-spark-playbooks/issues/88" + "/comments" * 12 + "#issuecomment-2718281828"
    app = still_app()
    async with app.run_test(size=size) as pilot:
        app.push_screen(MessageScreen("#88 vLLM container", "body", url=url))
        await shows(pilot, MessageScreen)
        lines = await wait_for(pilot, lambda: [ln for ln in widget_lines(app.screen.query_one("#message-url")) if ln],
                               what="the URL drawn")
        assert "".join(lines) == url
        assert all(ln.endswith("/") for ln in lines[:-1]) and len(lines) > 1, lines
