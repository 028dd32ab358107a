"""Footer, help and header say what works in the focused view, whole (issue 24, Seen 9/10/12; What to
build 6): no footer key is cut mid-word at any width (`k sign`, `m peer` were), keys are dropped
whole instead (help lists them all); the issues tab's keys replace the process table's; help lists
Textual's own keys in sparktui's words; home / end go to a table's first / last row; the focused
panel is outlined and takes ↑ ↓; `L` says "side by side" / "stacked" as help does; the header cuts
only at a word, and says so with `…`."""

from __future__ import annotations

import time

import pytest
from textual.widgets import Footer

from sparktui.core.config import Config
from sparktui.ui.app import SparkApp
from sparktui.ui.panels.header import HeaderBar, fit_words
from sparktui.ui.screens import HelpScreen
from tests.ui.test_dashboard import StillSource, replay_app
from tests.ui.test_process_table import row, scan, show_and_select
from tests.ui.waiting import loaded, says, screen_lines, shows, wait_for

SIZES = [(80, 24), (200, 60)]


def still_app(**kw) -> SparkApp:
    return SparkApp(Config(), source=StillSource(), auto_checks=False, **kw)


def offered_items(app) -> list[str]:
    """Every "key description" the current view's footer could show."""
    items = []
    for _node, b, _enabled, _tooltip in app.screen.active_bindings.values():
        if b.show or b.action == "command_palette":
            items.append(f"{app.get_key_display(b)} {b.description}".strip())
    return sorted(set(items), key=len, reverse=True)  # the longest first: "R all" is not "R"


def whole_items(line: str, items: list[str]) -> list[str]:
    """The footer ``line`` read as whole items; fails on anything else (a key cut mid-word)."""
    rest, got = line.replace("▏", " ").strip(), []
    while rest:
        item = next((i for i in items if rest == i or rest.startswith(i + " ")), None)
        assert item is not None, f"not a whole key at {rest!r} (footer {line!r}; offered {items})"
        got.append(item)
        rest = rest[len(item):].strip()
    return got


async def footer_line(app, pilot) -> str:
    assert app.screen.query(Footer)
    return await wait_for(pilot, lambda: screen_lines(app)[-1].strip() and screen_lines(app)[-1], what="the footer")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_no_footer_key_is_cut_in_any_view_live_or_replay(size):
    live = still_app()
    async with live.run_test(size=size) as pilot:
        await show_and_select(live, pilot, [row(4242, "vllm", gpu=1.0), row(4243, "torchrun", gpu=2.0)], 4242)
        live.checklist.focus()
        await pilot.pause()
        got = whole_items(await footer_line(live, pilot), offered_items(live))
        assert "? help" in got and "⏎ card" in got
        if size[0] >= 200:
            assert "k signal" in got and "m peers" in got
        for key, view in (("e", "events"), ("question_mark", "help")):
            await pilot.press(key)
            await wait_for(pilot, lambda: len(live.screen_stack) == 2, what=view)
            whole_items(await footer_line(live, pilot), offered_items(live))
            await pilot.press("escape")
            await wait_for(pilot, lambda: len(live.screen_stack) == 1, what="back")
    replay = replay_app()
    async with replay.run_test(size=size) as pilot:
        await loaded(pilot)
        got = whole_items(await footer_line(replay, pilot), offered_items(replay))
        assert "? help" in got
        await pilot.press("enter")  # a card
        await wait_for(pilot, lambda: len(replay.screen_stack) == 2, what="the card")
        await wait_for(pilot, lambda: "copy fix" in screen_lines(replay)[-1], what="the card's footer")
        whole_items(await footer_line(replay, pilot), offered_items(replay))


async def test_the_footer_keeps_help_and_drops_whole_keys_as_the_terminal_narrows():
    app = still_app()
    async with app.run_test(size=(200, 30)) as pilot:
        await show_and_select(app, pilot, [row(4242, "vllm", gpu=1.0)], 4242)
        app.checklist.focus()
        wide = whole_items(await footer_line(app, pilot), offered_items(app))
        for width in (100, 60, 40):
            await pilot.resize_terminal(width, 30)
            await wait_for(pilot, lambda w=width: len(screen_lines(app)[-1]) <= w and app.footer.size.width == w,
                           what=f"the footer at {width}")
            await pilot.pause()
            got = whole_items(await footer_line(app, pilot), offered_items(app))
            assert "? help" in got and set(got) <= set(wide) and len(got) < len(wide), (width, got)


async def test_the_issues_tab_shows_its_keys_not_the_process_tables():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        line = await footer_line(app, pilot)
        assert "s sort" in line and "open URL" not in line
        app.query_one("#tabs").active = "tab-playbooks"
        table = app.query_one("#pb-table")
        await wait_for(pilot, lambda: table.display and table.row_count, what="the issues listed")
        table.focus()
        line = await wait_for(pilot, lambda: "o open URL" in screen_lines(app)[-1] and screen_lines(app)[-1],
                              what="the issue keys in the footer", state=lambda: screen_lines(app)[-1])
        assert "y copy URL" in line and "s sort" not in line
        await pilot.press("question_mark")
        keys = dict((await shows(pilot, HelpScreen)).keys)
        assert {"o", "y"} <= set(keys) and not {"s", "S", "t", "k"} & set(keys), keys


async def test_help_lists_textual_keys_in_sparktuis_words():
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        keys = dict((await shows(pilot, HelpScreen)).keys)
        assert keys["^q"] == "quit at once, without asking" and "palette" in keys["^p"]
        for key, text in keys.items():  # one style: lower case, no full stop (a check id may lead)
            assert (text[0].islower() or text.startswith("G")) and not text.endswith("."), (key, text)


async def test_home_and_end_go_to_the_first_and_last_row_of_the_focused_table():
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("end")
        await wait_for(pilot, lambda: app.checklist.cursor_row == app.checklist.row_count - 1, what="the last check")
        await pilot.press("home")
        await wait_for(pilot, lambda: app.checklist.cursor_row == 0, what="the first check")
        rows = [row(4240 + i, f"p{i}", gpu=float(i)) for i in range(1, 4)]
        await show_and_select(app, pilot, rows, 4242)
        table = app.query_one("#proc-table")
        await pilot.press("end")
        await wait_for(pilot, lambda: table.cursor_row == table.row_count - 1, what="the last process")
        await pilot.press("home")
        await wait_for(pilot, lambda: table.cursor_row == 0, what="the first process")
        assert app.checklist.cursor_row == 0
        span = app.telemetry.span
        await pilot.press("G")  # as in less and vim
        await wait_for(pilot, lambda: table.cursor_row == table.row_count - 1, what="the last process (G)")
        await pilot.press("g")
        await wait_for(pilot, lambda: table.cursor_row == 0, what="the first process (g)")
        assert app.telemetry.span == span  # g is no longer the plots' span (w is)
        await pilot.press("w")
        await wait_for(pilot, lambda: app.telemetry.span != span, what="w: the plots' next span")


async def test_in_a_replay_g_and_G_move_the_checklist_while_home_and_end_belong_to_the_recording():
    app = replay_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        end = app.source.position
        await pilot.press("G")
        await wait_for(pilot, lambda: app.checklist.cursor_row == app.checklist.row_count - 1, what="the last check")
        await pilot.press("g")
        await wait_for(pilot, lambda: app.checklist.cursor_row == 0, what="the first check")
        assert app.source.position == end  # the recording did not move
        await pilot.press("home")
        await wait_for(pilot, lambda: app.source.position == 1, what="the recording's start")


def left_edge(app, widget) -> set[str]:
    """The characters drawn in the widget's first column."""
    lines = screen_lines(app)
    r = widget.region
    return {lines[y][r.x] for y in range(r.y, min(r.y + r.height, len(lines) - 1)) if r.x < len(lines[y])}  # not the footer


async def test_tab_moves_the_focus_ring_and_the_arrows_go_to_the_focused_panel():
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.process_table.show(scan(*(row(4240 + i, f"p{i}", gpu=float(i)) for i in range(1, 4))), time.time())
        table = app.query_one("#proc-table")
        await wait_for(pilot, lambda: table.row_count == 3, what="the processes listed")
        await pilot.pause()
        assert app.focused is app.checklist and left_edge(app, app.checklist) == {"█"}  # the ring: a bar
        assert left_edge(app, table) == {" "}
        await pilot.press("tab")
        await wait_for(pilot, lambda: app.focused is not app.checklist, what="the tab bar focused")
        await pilot.press("down")  # from the tab bar into its table
        await wait_for(pilot, lambda: app.focused is table, what="the process table focused",
                       state=lambda: app.focused)
        assert table.cursor_row == 0
        await pilot.pause()
        assert left_edge(app, table) == {"█"} and "█" not in left_edge(app, app.checklist)
        before = app.checklist.cursor_row
        await pilot.press("down")
        await wait_for(pilot, lambda: table.cursor_row == 1, what="down in the process table")
        assert app.checklist.cursor_row == before


async def test_the_side_by_side_checklist_is_outlined_only_while_focused():
    app = still_app()
    async with app.run_test(size=(200, 60)) as pilot:
        focused = app.checklist.styles.border_left[1]
        await pilot.press("tab")
        await wait_for(pilot, lambda: app.focused is not app.checklist, what="focus moved on")
        await pilot.pause()
        assert app.checklist.styles.border_left[1] != focused


async def test_L_says_side_by_side_and_stacked_as_help_does():
    app = still_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("L")
        await says(pilot, "layout: side by side")
        await pilot.press("L")
        await says(pilot, "layout: stacked")
        await pilot.press("L")
        await says(pilot, lambda n: n.message.startswith("layout: auto (side by side from 120 columns, stacked below)"))
        await pilot.press("question_mark")
        text = dict((await shows(pilot, HelpScreen)).keys)["L"]
        assert "side by side" in text and "stacked" in text and "wide" not in text and "narrow" not in text


class LongLabel(StillSource):
    label = "this machine, recording to qwen3-8b-lora-finetune-overnight-run-number-seven.jsonl"


@pytest.mark.parametrize("width", [60, 80, 100, 120, 200])
async def test_the_header_never_cuts_a_word(width):
    app = SparkApp(Config(), source=LongLabel(static={"devices": [{"name": {"value": "NVIDIA GB10"}}],
                                                      "driver_version": {"value": "580.95.05"},
                                                      "cuda_driver_version": {"value": "13.0"}}), auto_checks=False)
    async with app.run_test(size=(width, 24)) as pilot:
        app.source.pause()
        app.refresh_header()
        line = await wait_for(pilot, lambda: screen_lines(app)[0].rstrip(), what="the header drawn")
        args = app.header_bar._args
        allowed = set(" ".join(a for a in args if isinstance(a, str)).split()) | {
            "·", "driver", "CUDA", "watching", "sparktui", "⏸", "PAUSED", "GB10"}
        words = line.removesuffix("…").split()
        assert set(words) <= allowed, (line, set(words) - allowed)
        assert "PAUSED" in line and app.host_name in line
        assert line.endswith("…") or line.endswith("run-number-seven.jsonl"), line


def test_fit_words_cuts_at_a_space_and_marks_it():
    from rich.text import Text

    t = Text(" host · GB10 · SYNTHETIC · replay of gb10-demo.jsonl")
    assert fit_words(t, 200).plain == t.plain
    assert fit_words(t, 40).plain == " host · GB10 · SYNTHETIC · replay of…"
    assert fit_words(t, 20).plain == " host · GB10…"
    assert isinstance(HeaderBar(), HeaderBar)
