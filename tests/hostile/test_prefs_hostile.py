"""prefs.json never stops the dashboard and is never written through a link (issue 22, "Seen" 8):
60,000 ``[`` once ended it (exit 70, RecursionError in json); a link planted at the name sent the
atomic replace to the file it names. Real files and real symbolic links."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.ui.app import SparkApp
from sparktui.ui.prefs import MAX_BYTES, Prefs, load_prefs, prefs_path, save_prefs
from tests.ui.waiting import says

DEMO = Path(__file__).resolve().parents[2] / "src" / "sparktui" / "data" / "gb10-demo.jsonl"


def plant(text: str | bytes) -> Path:
    p = prefs_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


@pytest.mark.parametrize("text, said", [
    ("[" * 60_000, "nested too deeply"),
    ('{"a":' * 10_000 + "1" + "}" * 10_000, "nested too deeply"),
    (b"\xff\xfe{}", "not UTF-8"),
    ('{"plot_span": 5, "theme": ["x"]}', '"plot_span" is not one of 5m, 1h, session'),
    ("[1, 2]", "not a JSON object"),
], ids=["60000-brackets", "10000-objects", "not-utf8", "wrong-types", "a-list"])
async def test_a_hostile_prefs_file_never_stops_the_dashboard_and_is_said_in_one_line(text, said):
    plant(text)
    app = SparkApp(Config(), replay=str(DEMO), speed=None, auto_checks=False, keep_session=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await says(pilot, lambda n: n.title == "preferences")
        await pilot.pause()
        assert app.is_running and app.prefs == Prefs()
        notes = [str(n.message) for n in app.said if n.title == "preferences"]
        assert len(notes) == 1 and said in notes[0] and "defaults used" in notes[0] and "\n" not in notes[0], notes


def test_each_field_of_the_wrong_type_is_named_and_the_good_ones_kept(tmp_path):
    p = tmp_path / "prefs.json"
    p.write_text(json.dumps({"plot_span": "1h", "sort_reverse": "nope", "theme": 7, "layout": "diagonal"}))
    problems: list[str] = []
    got = load_prefs(p, problems)
    assert got.plot_span == "1h" and got.sort_reverse is True and got.theme is None and got.layout == "auto"
    assert len(problems) == 1
    assert all(k in problems[0] for k in ('"sort_reverse" is not true or false', '"theme"', '"layout"'))


def test_a_file_over_the_bound_is_not_parsed(tmp_path):
    p = tmp_path / "prefs.json"
    p.write_text("[" * (MAX_BYTES + 1))
    problems: list[str] = []
    assert load_prefs(p, problems) == Prefs() and "larger than" in problems[0]


@pytest.mark.parametrize("onto", ["dangling", "a file"])
def test_a_link_planted_at_prefs_json_is_replaced_never_written_through(tmp_path, onto):
    p = prefs_path()
    p.parent.mkdir(parents=True)
    target = tmp_path / "victim.txt"
    if onto == "a file":
        target.write_text("not yours\n")
    p.symlink_to(target)
    save_prefs(Prefs(plot_span="1h"))
    assert not p.is_symlink() and p.is_file()
    assert load_prefs().plot_span == "1h"
    if onto == "a file":
        assert target.read_text() == "not yours\n"
    else:
        assert not target.exists(), "the write went through the planted link"


def test_a_linked_prefs_file_is_not_read_through_the_link(tmp_path):
    elsewhere = tmp_path / "their-prefs.json"
    elsewhere.write_text(json.dumps({"plot_span": "session"}))
    p = prefs_path()
    p.parent.mkdir(parents=True)
    p.symlink_to(elsewhere)
    problems: list[str] = []
    assert load_prefs(problems=problems) == Prefs()
    assert "symbolic link" in problems[0]
