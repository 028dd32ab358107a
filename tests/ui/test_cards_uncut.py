"""Nothing in a card or a message pop-up is cut without a mark (issue 24, Seen 2 and 9).

A fix's code line wider than the card wraps at a space with a visible mark (``↩``) at the cut and
the rest on the next row, indented; there is one scrollbar (the card's), none inside the code
blocks; `c` still copies the commands whole, unwrapped. A pop-up's title wraps instead of running
past its border. Pilots at 80x24, 120x40 and 200x60 on the shipped demo recording.
"""

from __future__ import annotations

import pytest

from sparktui.ui.panels import Checklist
from sparktui.ui.screens import CardScreen, MessageScreen, fix_commands
from sparktui.ui.widgets.text import CONTINUATION_INDENT, CONTINUED, code_rows
from tests.ui.test_dashboard import replay_app
from tests.ui.waiting import loaded, says, screen_text, shows, wait_for

INDEX_URL = "--index-url https://download.pytorch.org/whl/cu130"
INSTALL = "-m pip install torch torchvision " + INDEX_URL


async def open_card(pilot, gid: str) -> CardScreen:
    app = pilot.app
    await loaded(pilot)
    table = app.query_one(Checklist)
    ids = [str(k.value) for k in table.rows]
    table.move_cursor(row=ids.index(gid))
    await pilot.press("enter")
    card = await shows(pilot, CardScreen)
    await wait_for(pilot, lambda: len(app.screen.query("MarkdownFence")) > 0, what="the card's code blocks drawn")
    return card


async def show_block(pilot, n: int) -> None:
    """Scroll the card so its code block ``n`` (1-based) is on screen."""
    screen = pilot.app.screen
    fence = list(screen.query("MarkdownFence"))[n - 1]
    screen.query_one("#card").scroll_to_widget(fence, animate=False, top=True)
    await pilot.pause()


def only_the_view_scrolls(screen, view_id: str) -> list[str]:
    """Widgets under ``screen`` other than the view that show a scrollbar or scroll sideways."""
    out = []
    for w in screen.walk_children():
        if w.id == view_id:
            continue
        if w.show_vertical_scrollbar or w.show_horizontal_scrollbar or (w.allow_horizontal_scroll and w.max_scroll_x > 0):
            out.append(f"{type(w).__name__}#{w.id}")
    return out


def test_a_code_line_wraps_at_a_space_with_a_mark_and_loses_nothing():
    line = "/home/spark/venvs/train/bin/python " + INSTALL
    for width in (20, 40, 66, 80):
        rows = code_rows(line, width)
        assert all(len(r) <= width for r in rows), (width, rows)
        assert all(r.endswith(CONTINUED) for r in rows[:-1]) and not rows[-1].endswith(CONTINUED)
        assert all(r.startswith(CONTINUATION_INDENT) for r in rows[1:])
        joined = rows[0][:-1] + "".join(r[len(CONTINUATION_INDENT):].removesuffix(CONTINUED) for r in rows[1:])
        assert joined == line  # the marks and indents are the only additions
    assert code_rows(line, 66)[1].strip() == "torchvision " + INDEX_URL  # broken at a space: flags stay whole
    assert code_rows("x" * 25, 12) == ["x" * 11 + CONTINUED, CONTINUATION_INDENT + "x" * 7 + CONTINUED,
                                       CONTINUATION_INDENT + "x" * 7]  # no space: cut mid-word, marked
    assert code_rows("short", 80) == ["short"]


async def test_g1_fix_shows_its_index_url_at_80x24_and_c_copies_it_unwrapped(monkeypatch):
    """Fails on 5e064fb: the fix line ended at `pip install torch torchvi` with nothing to say more
    was hidden, and the code block scrolled sideways behind a hidden scrollbar inside the card's."""
    monkeypatch.delenv("TMUX", raising=False)
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        card = await open_card(pilot, "G1")
        await show_block(pilot, 1)
        text = screen_text(app)
        assert INDEX_URL in text and CONTINUED in text, text
        assert only_the_view_scrolls(app.screen, "card") == []
        await pilot.press("c")
        await says(pilot, "copied G1's block 1 of 3")
        assert app.clipboard == fix_commands(card.verdict.fix) and CONTINUED not in app.clipboard
        assert any(line.endswith(INSTALL) for line in app.clipboard.splitlines())  # one line, as it pastes


async def test_g6_fix_shows_the_cap_at_120x40():
    """Fails on 5e064fb: `--gpu-memory-utilization 0.5` was past the card's right edge at 120x40."""
    app = replay_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await open_card(pilot, "G6")
        await show_block(pilot, 2)
        assert "--gpu-memory-utilization 0.5" in screen_text(app)
        assert only_the_view_scrolls(app.screen, "card") == []


async def test_a_fix_line_that_fits_is_not_wrapped_at_200x60():
    app = replay_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await open_card(pilot, "G1")
        await show_block(pilot, 1)
        lines = screen_text(app).splitlines()
        assert any(line.rstrip().endswith("/bin/python " + INSTALL) for line in lines)
        assert not any(CONTINUED in line for line in lines)


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_a_message_shows_its_whole_title_and_command_line(size):
    """Fails on 5e064fb: the title was a Label as wide as its text, cut at the pop-up's border without
    a mark, and a fenced command line (a process's pop-up) scrolled sideways out of sight."""
    title = "#88 vLLM container " + "word " * 40 + "TITLE-END"
    command = "/usr/bin/python3 -m vllm.entrypoints.openai.api_server " + "--flag value " * 20 + "--last CMD-END"
    app = replay_app()
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        app.push_screen(MessageScreen(title, f"body\n\n```\n{command}\n```\n"))
        await shows(pilot, MessageScreen)
        await wait_for(pilot, lambda: len(app.screen.query("MarkdownFence")) > 0, what="the message drawn")
        text = screen_text(app)
        assert "TITLE-END" in text and "CMD-END" in text, text
        assert only_the_view_scrolls(app.screen, "message") == []


async def test_under_no_color_a_failing_check_is_louder_than_a_warning(monkeypatch):
    """Fails on 5e064fb: under NO_COLOR Textual greys colours by brightness, and fail's red came out
    darker than warn's yellow. Now: fail inverse and bold, warn bold (issue 24, Seen 12)."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        table = app.query_one(Checklist)
        fail = table.get_cell("G1", "glyph").style  # the demo's G1 fails, G3 warns
        warn = table.get_cell("G3", "glyph").style
        assert app.no_color and "reverse" in str(fail) and "bold" in str(fail)
        assert "bold" in str(warn) and "reverse" not in str(warn)


def test_a_card_marks_what_it_leaves_out():
    """Fails on 5e064fb: an evidence value past 2000 characters stopped unmarked, and details past
    the 50th were dropped without a word."""
    from sparktui.core.verdict import Evidence, Status, Verdict
    from sparktui.gotchas import REGISTRY
    from sparktui.ui.screens import card_markdown

    v = Verdict("G8", Status.WARN, "many", evidence=[Evidence("issues", "GitHub", "word " * 600)],
                details=[f"detail {i}" for i in range(60)])
    md = card_markdown(REGISTRY["G8"], v, "1m")
    evidence = next(line for line in md.splitlines() if line.startswith("- **issues:**"))
    assert "… · *from GitHub*" in evidence
    assert "- detail 49" in md and "- detail 50" not in md and "10 more: `sparktui check -v G8`" in md
