"""Regenerate screenshots/*.svg from the shipped synthetic GB10 demo recording (no GPU, no network).

    python tools/make_screenshots.py [OUT_DIR]

Each picture is the real app under Textual's headless driver, replaying
src/sparktui/data/gb10-demo.jsonl to its end: the main screen, the card of the failing G1 check,
and the process table (G6). The replay clock drives every age and the header, so the same code
draws the same pictures; tests/ui/test_snapshots.py compares them with what is committed.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Awaitable, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

DEMO = ROOT / "src" / "sparktui" / "data" / "gb10-demo.jsonl"
SIZE = (132, 42)


def demo_app():
    from sparktui.core.config import Config
    from sparktui.ui.app import SparkApp

    return SparkApp(Config(), replay=str(DEMO), speed=None)


async def until_loaded(app, pilot) -> None:
    """The whole recording fed and drawn, the telemetry checks judged, every other check done."""
    for _ in range(400):
        done = all(st.verdict is not None and st.running_since is None for st in app.board.states.values())
        if app.replay_settled and done:
            break
        await pilot.pause(0.05)
    else:
        raise TimeoutError("the replay did not settle in 20 s")
    await app.workers.wait_for_complete()
    await pilot.pause(0.3)


async def main_screen(app, pilot) -> None:
    await until_loaded(app, pilot)


async def failing_card(app, pilot) -> None:
    from sparktui.ui.panels import Checklist

    await until_loaded(app, pilot)
    app.query_one(Checklist).move_cursor(row=0)  # G1: the cu128 torch on a GB10
    await pilot.press("enter")
    await pilot.pause(0.5)


async def process_table(app, pilot) -> None:
    await until_loaded(app, pilot)
    await pilot.press("t")  # the process tab comes forward as a tree: launchers over their workers
    await pilot.pause(0.3)


async def help_screen(app, pilot) -> None:
    await until_loaded(app, pilot)
    await pilot.press("question_mark")
    await pilot.pause(0.5)


SHOTS: dict[str, Callable[[object, object], Awaitable[None]]] = {
    "main": main_screen,
    "card-g1-failing": failing_card,
    "processes": process_table,
    "main-80x24": main_screen,  # a tmux pane: stacked, every key in the footer
    "main-200x60": main_screen,  # a big terminal: taller plots and tables use the room
    "help": help_screen,
}
SIZES = {"main-80x24": (80, 24), "main-200x60": (200, 60)}  # the others: SIZE


def size_of(name: str) -> tuple[int, int]:
    return SIZES.get(name, SIZE)


async def render(name: str, size: tuple[int, int] | None = None) -> str:
    """One screenshot as SVG text, from the default preferences: each shot gets its own empty
    state folder (a sort or span chosen in one shot must not show in the next, nor in the
    user's own ~/.local/state)."""
    import os
    import tempfile

    size = size or size_of(name)
    with tempfile.TemporaryDirectory() as state:
        old = os.environ.get("XDG_STATE_HOME")
        os.environ["XDG_STATE_HOME"] = state
        try:
            return await _render(name, size)
        finally:
            if old is None:
                os.environ.pop("XDG_STATE_HOME", None)
            else:
                os.environ["XDG_STATE_HOME"] = old


async def _render(name: str, size: tuple[int, int]) -> str:
    app = demo_app()
    title = f"sparktui: {name.replace('-', ' ')}"
    async with app.run_test(size=size) as pilot:
        await SHOTS[name](app, pilot)
        # A widget updated just now is laid out on the next refresh: take the picture once two in
        # a row agree, so a busy machine (tests in parallel) draws the same as an idle one.
        svg = app.export_screenshot(title=title)
        for _ in range(40):
            await pilot.pause(0.15)
            again = app.export_screenshot(title=title)
            if again == svg:
                return svg
            svg = again
        raise TimeoutError(f"{name}: the screen kept changing")


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for name in SHOTS:
        svg = asyncio.run(render(name))
        (out / f"{name}.svg").write_text(svg, encoding="utf-8")
        print(f"wrote {out / (name + '.svg')} ({len(svg) // 1024} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "screenshots"))
