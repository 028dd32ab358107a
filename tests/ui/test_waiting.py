"""The UI tests' waiting helpers (tests/ui/waiting.py): a wait ends on the state, a timeout names
what was awaited and what was seen, and the screen is read whole (blanks and wide characters in
place) from Textual's public SVG export."""

from __future__ import annotations

import time

import pytest
from textual.app import App
from textual.widgets import Static

from tests.ui.waiting import screen_lines, until, wait_for


class Two(App):
    CSS = "Static { height: 1; }"

    def compose(self):
        yield Static("a  b   c", id="one")
        yield Static("寬字 x\x1b[y", id="two")  # wide characters; a raw ESC stays visible as written


async def test_screen_lines_puts_blanks_and_wide_characters_back_in_place():
    app = Two()
    async with app.run_test(size=(30, 4)) as pilot:
        lines = await wait_for(pilot, lambda: screen_lines(app)[0] and screen_lines(app), what="the first line drawn")
        assert lines[0] == "a  b   c"
        assert lines[1] == "寬字 x\x1b[y"
        assert len(lines) == 4 and lines[2:] == ["", ""]


async def test_a_wait_returns_the_value_as_soon_as_it_holds():
    app = Two()
    async with app.run_test(size=(30, 4)) as pilot:
        t0 = time.monotonic()
        ready = t0 + 0.2
        assert await wait_for(pilot, lambda: time.monotonic() >= ready and "ok", what="the clock") == "ok"
        assert time.monotonic() - t0 < 5


async def test_a_wait_that_times_out_names_what_it_waited_for_and_what_it_saw():
    app = Two()
    async with app.run_test(size=(30, 4)) as pilot:
        with pytest.raises(pytest.fail.Exception) as e:
            await wait_for(pilot, lambda: app.query_one("#one").has_class("never"), timeout=0.2,
                           what="a class that never comes", state=lambda: sorted(app.query_one("#one").classes))
    assert "timed out after 0.2 s waiting for a class that never comes; last seen: []; screen: Screen" in str(e.value)


def test_until_polls_outside_an_app_and_names_what_it_waited_for():
    seen = []
    assert until(lambda: seen.append(1) or len(seen) >= 3, step=0.01) is True
    with pytest.raises(pytest.fail.Exception, match="waiting for the file; last seen: False"):
        until(lambda: False, timeout=0.05, step=0.01, what="the file")
