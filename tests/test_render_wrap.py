"""Headless text is whole: summaries wrap at word boundaries to the output's width, a cut line
ends with "…" (never mid-word without a mark), and ``-v`` prints every word of evidence and fix."""

from __future__ import annotations

import fcntl
import io
import os
import struct
import sys
import termios

import pytest

from sparktui.cli import render
from sparktui.cli.fleet import _fitted
from sparktui.core.verdict import Evidence, Status, Verdict

SUMMARY = ("the GitHub issues of the playbooks you follow could not be fetched from api.github.com "
           "because the request timed out after 10 s; the last cached answer is 3 h old and names "
           "two open issues about nvidia/vllm, so what you follow may be stale")
VALUE = " ".join(f"word{i:02d}" for i in range(60))
FIX = ("Install a torch built for CUDA 13, from PyTorch's cu130 index (never a plain `pip install torch`, "
       "which resolves to a CUDA 12 wheel):\n\n```bash\n"
       "/home/spark/venvs/train/bin/python -m pip install torch torchvision --index-url "
       "https://download.pytorch.org/whl/cu130\n```\n\n"
       "- a list item long enough that it has to wrap onto a second line under its own text at eighty columns")


def _verdict(**kw) -> Verdict:
    return Verdict("G8", kw.pop("status", Status.WARN), kw.pop("summary", SUMMARY),
                   evidence=[Evidence("issues matched", "GitHub REST API", VALUE)], fix=FIX, **kw)


@pytest.fixture(autouse=True)
def plain(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("COLUMNS", raising=False)


def _summary_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = 1  # after the head line
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("       · "))
    return lines[start:end]


@pytest.mark.parametrize("columns", [80, 120])
def test_a_long_summary_wraps_at_word_boundaries_under_the_finding_column(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    text = render.table([_verdict()], stream=io.StringIO())
    lines = _summary_lines(text)
    assert len(lines) >= 2, text
    assert all(len(line) <= columns for line in text.splitlines()), text
    assert all(line.startswith("     ") and line[5] != " " for line in lines)
    # every word whole and in order: the wrapped lines give back the summary exactly
    assert " ".join(line.strip() for line in lines) == SUMMARY
    assert not any(line.rstrip().endswith("…") for line in lines)


def test_without_verbose_long_evidence_takes_two_lines_the_second_cut_after_a_whole_word(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    text = render.table([_verdict()], stream=io.StringIO())
    lines = text.splitlines()
    at = next(i for i, li in enumerate(lines) if "issues matched" in li)
    first, second = lines[at], lines[at + 1]
    assert first.startswith("       · issues matched: word00") and second.startswith("         word")
    assert len(first) <= 80 and len(second) <= 80 and second.endswith("…")
    shown = (first.split("issues matched: ", 1)[1] + " " + second.rstrip("…")).split()
    assert shown == VALUE.split()[: len(shown)] and len(shown) < 60  # whole words in order, then the mark
    assert lines[at + 2].startswith("     fix:")


def test_aligned_details_that_fit_keep_their_spacing(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    table = ["              total        used        free", "Mem:            121         115           2"]
    text = render.table([_verdict(details=table)], stream=io.StringIO())
    assert "       " + table[0] in text.splitlines() and "       " + table[1] in text.splitlines()


def test_verbose_prints_every_word_of_evidence_and_fix(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    text = render.table([_verdict()], verbose=True, stream=io.StringIO())
    assert "…" not in text
    words = text.split()
    for word in VALUE.split() + SUMMARY.split():
        assert word in words
    assert "[GitHub REST API]" in text
    for line in text.splitlines():
        if len(line) > 80:  # only a fenced command is left long: wrapped, it would no longer paste
            assert line.strip().startswith("/home/spark/venvs/train/bin/python -m pip install torch"), line
    item = [li for li in text.splitlines() if "list item" in li or "columns" in li]
    assert item[0].lstrip().startswith("- a list item") and item[-1].startswith(" " * 9) and len(item) == 2


def test_a_pipe_gets_100_columns_when_columns_is_not_set():
    text = render.table([_verdict()], stream=io.StringIO())
    widths = [len(line) for line in _summary_lines(text)]
    assert max(widths) <= 100 and max(widths) > 90, text  # filled to 100, not to a default 80
    assert render.output_width(io.StringIO()) == 100


def test_a_real_terminal_is_measured_and_columns_wins(monkeypatch):
    master, slave = os.openpty()
    try:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 64, 0, 0))
        with os.fdopen(slave, "w", closefd=False) as tty:
            assert render.output_width(tty) == 64
            text = render.table([_verdict()], stream=tty)
            assert max(len(line) for line in text.splitlines()) <= 64
            monkeypatch.setenv("COLUMNS", "132")
            assert render.output_width(tty) == 132
    finally:
        os.close(master)
        os.close(slave)


def test_a_word_longer_than_the_line_is_kept_whole(monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    path = "/home/spark/" + "very-long-folder-name/" * 4 + "launch.sh"
    text = render.table([_verdict(summary=f"tensor parallel set in {path} line 12")], stream=io.StringIO())
    assert path in text.splitlines()[2] or path in text.splitlines()[1]


def test_preflight_lines_are_whole_in_a_pipe_and_wrapped_on_a_terminal(monkeypatch):
    pairs = [("G8   ▲ warn    ", SUMMARY), ("", "not checked: G1 (blocks): " + VALUE)]
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert _fitted(pairs) == ["G8   ▲ warn    " + SUMMARY, "not checked: G1 (blocks): " + VALUE]
    master, slave = os.openpty()
    try:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        with os.fdopen(slave, "w", closefd=False) as tty:
            monkeypatch.setattr(sys, "stdout", tty)
            lines = _fitted(pairs)
    finally:
        os.close(master)
        os.close(slave)
    assert all(len(line) <= 80 for line in lines) and len(lines) > 2
    assert lines[1].startswith(" " * 15) and lines[0].startswith("G8   ▲ warn    the GitHub")
    assert " ".join(" ".join(lines).split()) == " ".join(f"G8 ▲ warn {SUMMARY} not checked: G1 (blocks): {VALUE}".split())


@pytest.mark.parametrize("room, shown", [(12, "alpha beta…"), (11, "alpha beta…"), (10, "alpha…"), (6, "alpha…"),
                                         (4, "alp…"), (40, "alpha beta gamma")])
def test_a_cut_keeps_whole_words_and_marks_the_cut(room, shown):
    assert render.cut("alpha beta gamma", room) == shown
    assert len(shown) <= room
