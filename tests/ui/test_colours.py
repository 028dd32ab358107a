"""ok / warn / fail / unknown / skip stay distinct: in truecolor, 256 and 16 colours, on dark and
light themes, and under NO_COLOR by their symbols alone. A machine without a GPU must not look like
a wall of failures."""

from itertools import combinations

import pytest
from rich.color import Color, ColorSystem
from rich.style import Style

from sparktui.core.config import Config
from sparktui.core.verdict import Status, Verdict
from sparktui.ui.format import STATUS_RGB, status_styles
from tests.ui.test_dashboard import StillSource
from tests.ui.waiting import says, wait_for

SHOWN = [Status.OK, Status.WARN, Status.FAIL, Status.UNKNOWN, Status.SKIP]


@pytest.mark.parametrize("dark", [True, False])
@pytest.mark.parametrize("system", [ColorSystem.TRUECOLOR, ColorSystem.EIGHT_BIT, ColorSystem.STANDARD])
def test_every_status_has_its_own_colour_after_the_terminal_downgrades_it(dark, system):
    colours = {st: Color.parse(STATUS_RGB[dark][st]).downgrade(system) for st in SHOWN}
    shown = {st: (c.number if c.number is not None else c.triplet) for st, c in colours.items()}
    assert len(set(shown.values())) == len(SHOWN), shown


@pytest.mark.parametrize("dark", [True, False])
def test_fail_and_unknown_are_far_apart_in_truecolour(dark):
    """Not just different numbers: fail is red and unknown is blue (the old red/magenta pair
    rendered almost the same in the default theme)."""
    def rgb(st):
        return Color.parse(STATUS_RGB[dark][st]).get_truecolor()

    for a, b in combinations(SHOWN, 2):
        dist = sum((x - y) ** 2 for x, y in zip(rgb(a), rgb(b))) ** 0.5
        assert dist > 90, (a, b, dist)
    r, g, bl = rgb(Status.FAIL)
    assert r > 2 * bl and r > 1.5 * g
    r, g, bl = rgb(Status.UNKNOWN)
    assert bl > 2 * r


def test_the_16_colour_fallback_is_the_expected_ansi_hue():
    names = {st: Color.parse(STATUS_RGB[True][st]).downgrade(ColorSystem.STANDARD).number for st in SHOWN}
    assert names[Status.OK] in (2, 10) and names[Status.WARN] in (3, 11) and names[Status.FAIL] in (1, 9)
    assert names[Status.UNKNOWN] in (4, 12, 6, 14)


def test_symbols_alone_tell_the_statuses_apart():
    assert len({st.glyph for st in SHOWN}) == len(SHOWN)


def _verdicts():
    return {"G1": Verdict("G1", Status.FAIL, "cuda 12 wheel"), "G2": Verdict("G2", Status.UNKNOWN, "no torch"),
            "G3": Verdict("G3", Status.OK, "fine"), "G4": Verdict("G4", Status.WARN, "power capping"),
            "G5": Verdict("G5", Status.SKIP, "not measured")}


async def _shown_glyphs(app):
    from sparktui.ui.panels import Checklist

    async with app.run_test(size=(100, 30)) as pilot:
        for v in _verdicts().values():
            app.board.finish(v, 0.0)
        app.refresh_checklist()
        t = app.query_one(Checklist)
        await wait_for(pilot, lambda: t.get_cell("G5", "glyph"), what="the verdicts' glyphs")
        cells = {gid: t.get_cell(gid, "glyph") for gid in _verdicts()}
        return cells, app


async def test_the_checklist_draws_fail_and_unknown_in_different_colours():
    cells, _ = await _shown_glyphs(SparkApp_(Config()))
    fail, unknown = Style.parse(str(cells["G1"].style)), Style.parse(str(cells["G2"].style))
    assert cells["G1"].plain == "✘" and cells["G2"].plain == "?"
    assert fail.color != unknown.color


async def test_a_light_theme_gets_the_light_shades():
    app = SparkApp_(Config())
    app.prefs = app.prefs.with_(theme="textual-light")
    cells, app = await _shown_glyphs(app)
    assert app.theme == "textual-light"
    assert str(cells["G1"].style) == status_styles(False)[Status.FAIL]


async def test_no_color_keeps_the_symbols_distinct(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    cells, app = await _shown_glyphs(SparkApp_(Config()))
    assert app.no_color
    assert len({c.plain for c in cells.values()}) == len(cells)


def SparkApp_(cfg):
    from sparktui.ui.app import SparkApp

    return SparkApp(cfg, source=StillSource(), auto_checks=False)


async def test_theme_and_layout_are_kept_for_the_next_run():
    from sparktui.ui.prefs import load_prefs

    app = SparkApp_(Config())
    async with app.run_test(size=(140, 40)) as pilot:
        app.theme = "nord"
        await pilot.press("L")  # auto -> wide
        await pilot.press("L")  # wide -> narrow: stacked even at 140 columns
        await wait_for(pilot, lambda: app.has_class("narrow"), what="the narrow layout")
    kept = load_prefs()
    assert (kept.theme, kept.layout) == ("nord", "narrow")
    again = SparkApp_(Config())
    async with again.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: again.has_class("narrow"), what="the kept narrow layout")
        assert again.theme == "nord" and again.has_class("narrow")


async def test_an_unwritable_prefs_folder_is_said_not_fatal(tmp_path, monkeypatch):
    blocker = tmp_path / "state-is-a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))  # sparktui/ cannot be made under a file
    app = SparkApp_(Config())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("L")
        await says(pilot, "preferences not kept")
        assert app.prefs.layout == "wide"  # still applied for this run
