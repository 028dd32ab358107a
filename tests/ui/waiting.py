"""Waiting in UI tests: for the state a test needs next, never for a fixed time.

A fixed ``pilot.pause(0.5)`` is too long on an idle machine and too short on a loaded one (xdist,
CPUs shared with other work): two timing tests failed at ``-n 4`` and passed alone. ``wait_for``
checks the predicate, and until it holds lets the app run a short real step (``STEP_S``: messages,
timers, thread workers and a screen update) and checks again; on timeout it fails naming what it
waited for and the last state it saw. (A step is not ``pilot.pause()`` with no delay: that waits
for the process to go idle, up to a second, which an app sampling every 50 ms never does.)

What the app said is read from ``SparkApp.said`` (its own bounded record of every notification),
not from Textual's private ``App._notifications``.
"""

from __future__ import annotations

import asyncio
import html
import re
import time
from typing import Any, Callable

import pytest
from rich.cells import cell_len

TIMEOUT_S = 10.0  # generous: a wait ends as soon as its state is there, so only a failure costs this
STEP_S = 0.02  # the app's time between two checks


def _describe(value: Any, limit: int = 400) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


async def wait_for(pilot, predicate: Callable[[], Any], *, timeout: float = TIMEOUT_S, what: str = "",
                   state: Callable[[], Any] | None = None) -> Any:
    """Pump the app until ``predicate()`` is truthy and return that value.

    An exception from the predicate counts as "not yet" (a widget not mounted, a screen still
    composing) and is shown if the wait times out. ``state`` says what to show on timeout (default:
    the predicate's last value and the active screen)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value, error = predicate(), None
        except Exception as e:  # noqa: BLE001 (not there yet; reported on timeout)
            value, error = None, e
        if value:
            return value
        if time.monotonic() >= deadline:
            try:
                seen = _describe(state()) if state is not None else _describe(error if error else value)
            except Exception as e:  # noqa: BLE001
                seen = f"(state raised {e!r})"
            screen = type(pilot.app.screen).__name__
            pytest.fail(f"timed out after {timeout:g} s waiting for {what or 'the condition'}; "
                        f"last seen: {seen}; screen: {screen}", pytrace=False)
        if pilot.app.is_running:
            await pilot.pause(STEP_S)
        else:  # a test may wait for the app to end
            await asyncio.sleep(STEP_S)


def until(predicate: Callable[[], Any], *, timeout: float = TIMEOUT_S, what: str = "", step: float = 0.05) -> Any:
    """Outside an app (a real dashboard in tmux, a file another process writes): poll ``predicate``
    until it is truthy and return its value; on timeout fail naming ``what`` and the last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what or 'the condition'}; last seen: "
                        f"{_describe(value)}", pytrace=False)
        time.sleep(step)


def polled(predicate: Callable[[], Any], timeout: float = 5.0, step: float = 0.02) -> bool:
    """Whether ``predicate`` became truthy within ``timeout`` (for an ``assert`` with its own words)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


async def settled(pilot) -> None:
    """Every worker finished and what it posted handled: the state after a check or a probe ran."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(STEP_S)
    await pilot.pause(STEP_S)


async def shows(pilot, kind: type, *, timeout: float = TIMEOUT_S) -> Any:
    """The active screen is a mounted ``kind`` (a card, a dialog, a view)."""
    app = pilot.app
    return await wait_for(pilot, lambda: isinstance(app.screen, kind) and app.screen.is_mounted and app.screen,
                          timeout=timeout, what=f"a {kind.__name__} on top")


async def leaves(pilot, kind: type, *, timeout: float = TIMEOUT_S) -> None:
    """The active screen is no longer a ``kind``."""
    app = pilot.app
    await wait_for(pilot, lambda: not isinstance(app.screen, kind), timeout=timeout,
                   what=f"the {kind.__name__} to close")


async def loaded(pilot, *, timeout: float = 30.0) -> None:
    """A replay app: its recording fed to the end, judged and drawn, and the checks it started done."""
    app = pilot.app
    await wait_for(pilot, lambda: app.replay_settled, timeout=timeout, what="the replay fed, judged and drawn",
                   state=lambda: {"finished": getattr(app.source, "finished", None), "G3": app.board["G3"].verdict})
    await settled(pilot)


def said(app, title: str | None = None) -> list[str]:
    """The messages the app has notified, oldest first (only those with ``title`` if given)."""
    return [n.message for n in app.said if title is None or n.title == title]


async def says(pilot, match: Callable[[Any], bool] | str, *, timeout: float = TIMEOUT_S, what: str = "") -> Any:
    """Wait until a notification matches (a substring of its message, or a predicate on the notice);
    returns that notice."""
    app = pilot.app
    test = (lambda n: match in n.message) if isinstance(match, str) else match

    def found():
        return next((n for n in reversed(app.said) if test(n)), None)

    return await wait_for(pilot, found, timeout=timeout, what=what or f"a notification {match!r}",
                          state=lambda: [(n.title, n.message) for n in list(app.said)[-5:]])


_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)"[^>]*>(.*?)</text>', re.S)
_CELL_W, _LINE_H = 12.2, 24.4  # Rich's SVG export: 20 px characters, 0.61 wide, lines 24.4 apart


def screen_lines(app) -> list[str]:
    """The terminal's lines as drawn now (a pop-up over the dimmed screen under it, toasts included),
    one string per line, trailing blanks dropped. Read from Textual's public SVG export (each run of
    text sits at its cell column; blanks are not written, so they are put back from the positions),
    not from the screen's private compositor."""
    rows: list[list[tuple[int, str]]] = [[] for _ in range(app.size.height)]
    for x, y, text in _TEXT.findall(app.export_screenshot(simplify=True)):
        row = int(float(y) // _LINE_H)
        if 0 <= row < len(rows):
            rows[row].append((round(float(x) / _CELL_W), html.unescape(text).replace("\xa0", " ")))
    out = []
    for runs in rows:
        line = ""
        for col, text in sorted(runs):
            line += " " * max(0, col - cell_len(line)) + text
        out.append(line.rstrip())
    return out


def screen_text(app) -> str:
    """``screen_lines`` joined: what the terminal shows now, as one string."""
    return "\n".join(screen_lines(app))
