"""cli/render.py: the check table follows the sys.stdout of the moment, not the one at import time."""

from __future__ import annotations

import inspect
import io
import sys

import pytest

from sparktui.cli import render
from sparktui.core.verdict import Status, Verdict

ESC = "\x1b["


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _verdicts() -> list[Verdict]:
    return [Verdict("G1", Status.FAIL, "torch is built for CUDA 12.8; GB10 needs CUDA 13.x"),
            Verdict("G7", Status.OK, "sm_121 in the arch list")]


@pytest.fixture(autouse=True)
def colour_allowed(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)


def test_no_output_stream_is_bound_as_a_default_at_import():
    for name, fn in inspect.getmembers(render, inspect.isfunction):
        for p in inspect.signature(fn).parameters.values():
            assert p.default not in (sys.__stdout__, sys.__stderr__) and not hasattr(p.default, "write"), \
                f"render.{name}({p.name}=...) binds a stream at import time; default to None and use sys.stdout"


def test_table_colours_for_a_terminal_stdout_set_after_import(monkeypatch):
    monkeypatch.setattr(sys, "stdout", FakeTerminal())
    text = render.table(_verdicts())
    assert ESC in text
    assert "G1" in text and "G7" in text


def test_table_is_plain_for_a_redirected_stdout_set_after_import(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    text = render.table(_verdicts())
    assert ESC not in text
    assert "fail" in text


def test_capsys_sees_the_table_without_escape_codes(capsys):
    sys.stdout.write(render.table(_verdicts()))
    out = capsys.readouterr().out
    assert "G1" in out and "CUDA 13.x" in out
    assert ESC not in out


def test_an_explicit_stream_still_decides(monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert ESC in render.table(_verdicts(), stream=FakeTerminal())
    monkeypatch.setattr(sys, "stdout", FakeTerminal())
    assert ESC not in render.table(_verdicts(), stream=io.StringIO())


def test_no_color_wins_over_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stdout", FakeTerminal())
    monkeypatch.setenv("NO_COLOR", "1")
    text = render.table(_verdicts())  # no colour; bold / inverse by severity only (issue 24)
    assert "38;" not in text and not any(f"{ESC}{c}m" in text for c in range(30, 38))
