"""Preferences survive a restart; a bad file gives defaults, never a crash."""

import json
import os

import pytest

from sparktui.ui.prefs import Prefs, load_prefs, save_prefs


def test_saved_prefs_come_back(tmp_path):
    p = tmp_path / "prefs.json"
    save_prefs(Prefs(theme="monokai", sort_column="RSS", sort_reverse=False, plot_span="1h", tree=True), p)
    got = load_prefs(p)
    assert (got.theme, got.sort_column, got.sort_reverse, got.plot_span, got.tree) == ("monokai", "RSS", False, "1h", True)


def test_default_location_is_under_xdg_state(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    save_prefs(Prefs(plot_span="session"))
    assert json.loads((tmp_path / "sparktui" / "prefs.json").read_text())["plot_span"] == "session"
    assert load_prefs().plot_span == "session"


@pytest.mark.parametrize("content", ["", "not json", "[1, 2]", "null", '{"plot_span": 5}', '{"sort_reverse": "yes"}',
                                     '{"plot_span": "forever"}', '{"theme": ""}', '{"layout": "diagonal"}'])
def test_a_bad_file_or_field_gives_the_default(tmp_path, content):
    p = tmp_path / "prefs.json"
    p.write_text(content)
    assert load_prefs(p) == Prefs()


def test_one_bad_field_does_not_lose_the_others(tmp_path):
    p = tmp_path / "prefs.json"
    p.write_text(json.dumps({"plot_span": "1h", "sort_reverse": "nope", "theme": "nord"}))
    got = load_prefs(p)
    assert (got.plot_span, got.sort_reverse, got.theme) == ("1h", True, "nord")


def test_a_fifo_or_huge_file_is_not_read(tmp_path):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert load_prefs(fifo) == Prefs()  # returns at once instead of blocking on the pipe
    big = tmp_path / "big.json"
    big.write_text('{"theme": "nord", "pad": "' + "x" * 100_000 + '"}')
    assert load_prefs(big) == Prefs()


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    """A full disk mid-write (fsync fails with ENOSPC): the old prefs stay whole, no temp file is left."""
    import errno

    d = tmp_path / "state"
    p = d / "prefs.json"
    save_prefs(Prefs(plot_span="1h"), p)

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError):
        save_prefs(Prefs(plot_span="session"), p)
    assert load_prefs(p).plot_span == "1h"
    assert [f.name for f in d.iterdir()] == ["prefs.json"]
