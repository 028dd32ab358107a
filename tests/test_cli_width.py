"""The command line writes for the terminal it has, or for COLUMNS, and cuts nothing unmarked
(issue 24, Seen 9 and the CLI words of Seen 12).

`explain` renders its Markdown on a terminal and re-wraps it (still Markdown) into a pipe;
`preflight` into a pipe wraps to COLUMNS when it is set; `check -v` keeps a `free -g` table's
columns; `report` does not cut titles or summaries; statuses share the dashboard's colours, and
under NO_COLOR a failure is louder than a warning (inverse, bold); "1 session"; G5's figures carry
their unit; preflight names unknowns as unknown; a `--replay` prefix several kept sessions share
is named ambiguous. Everything through ``cli.main`` with capsys, COLUMNS and isatty set per test.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from sparktui.cli import render
from sparktui.cli.main import main
from sparktui.core.session import sessions_dir
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas import REGISTRY
from sparktui.gotchas.g05_bandwidth import judge_result
from sparktui.ui.format import STATUS_RGB

DEMO = str(Path(__file__).resolve().parents[1] / "src" / "sparktui" / "data" / "gb10-demo.jsonl")
SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(autouse=True)
def plain_env(monkeypatch):
    for var in ("COLUMNS", "NO_COLOR", "COLORTERM", "TMUX"):
        monkeypatch.delenv(var, raising=False)


def as_terminal(monkeypatch, columns: int | None = None) -> None:
    """capsys's stdout claims to be a terminal (of COLUMNS columns, when given)."""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    if columns:
        monkeypatch.setenv("COLUMNS", str(columns))


def fenced_out(lines: list[str]) -> list[str]:
    """The lines outside ``` fences (a command is kept whole there: wrapped, it would not paste)."""
    out, fenced = [], False
    for line in lines:
        if line.strip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            out.append(line)
    return out


# -- explain ------------------------------------------------------------------------------------------

def test_explain_on_a_terminal_renders_the_markdown_to_its_width(monkeypatch, capsys):
    """Fails on 5e064fb: raw Markdown, one line of 1,348 characters (G6's check) on an 80-column TTY."""
    as_terminal(monkeypatch, 80)
    assert main(["explain", "G6"]) == 0
    text = SGR.sub("", capsys.readouterr().out)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "**Symptom.**" not in text and "```" not in text and "## Fix" not in text  # rendered, not source
    assert "Symptom. A run slows down" in text and "G6: Contention on the unified memory pool" in text
    assert "vllm serve MODEL --gpu-memory-utilization 0.5" in text  # a code line that fits: whole


def test_explain_wraps_a_long_code_line_with_a_mark_on_a_narrow_terminal(monkeypatch, capsys):
    as_terminal(monkeypatch, 60)
    assert main(["explain", "G1"]) == 0
    lines = SGR.sub("", capsys.readouterr().out).splitlines()
    assert max(len(line) for line in lines) <= 60
    at = next(i for i, line in enumerate(lines) if "pip install torch torchvision" in line)
    assert lines[at].rstrip().endswith("↩") and lines[at + 1].rstrip().endswith("whl/cu130")


def test_explain_into_a_pipe_is_markdown_wrapped_to_columns(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["explain", "G6"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# G6: ") and "**Symptom.**" in text and "```" in text and SGR.search(text) is None
    assert max(len(line) for line in fenced_out(text.splitlines())) <= 80
    # every word kept, in order
    assert text.split() == [w for line in REGISTRY["G6"].explain().splitlines() for w in line.split()]


def test_explain_into_a_pipe_without_columns_fills_100(capsys):
    assert main(["explain", "G10"]) == 0
    lines = fenced_out(capsys.readouterr().out.splitlines())
    assert 90 < max(len(line) for line in lines) <= 100


# -- preflight, check -v, report ------------------------------------------------------------------------

def test_preflight_into_a_pipe_wraps_to_columns_when_it_is_set(monkeypatch, capsys):
    """Fails on 5e064fb: `COLUMNS=80 sparktui preflight | cat` printed lines of 200+ characters."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["preflight", "--replay", DEMO]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80, lines
    assert any(line.startswith("               ") for line in lines)  # continuation under the finding


def test_check_verbose_keeps_the_columns_of_free_g(monkeypatch, capsys):
    """Fails on 5e064fb: at 80 columns the rows were re-flowed, `Mem: 121 115 2 0 5 5`."""
    monkeypatch.setenv("COLUMNS", "80")
    main(["check", "--replay", DEMO, "G3", "-v"])
    lines = capsys.readouterr().out.splitlines()
    head = next(line for line in lines if "buff/cache" in line and "available" in line)
    mem = next(line for line in lines if line.lstrip().startswith("Mem:"))
    swap = next(line for line in lines if line.lstrip().startswith("Swap:"))
    assert "total        used        free" in head and len(head) <= 80
    assert len(mem) == len(head) and mem.index("Mem:") < 7 and not head[: mem.index("Mem:") + 4].strip()
    for col in ("total", "used", "free"):  # right-aligned numbers under their headings
        end = head.index(col) + len(col)
        assert mem[end - 1].isdigit() and mem[end:end + 1] in ("", " ") and swap[end - 1].isdigit()


def test_aligned_rows_too_wide_are_cut_with_a_mark_without_verbose():
    rows = ["pid 5120    server      vllm serve      " + "x" * 100, "pid 3310    training    torchrun        y"]
    out = render.details_lines(rows, 60, whole=False)
    assert out[0].endswith("…") and len(out[0]) == 60 and out[1].startswith(" " * 7 + "pid 3310    training")
    assert render.details_lines(rows, 60, whole=True)[0].endswith("x" * 100)


def test_report_keeps_titles_and_summaries_whole(capsys):
    """Fails on 5e064fb: the summary table cut G10's title to `no tensor parallelism for trai…`."""
    assert main(["report", "--replay", DEMO, "G6", "G10"]) == 0
    out = capsys.readouterr().out
    assert REGISTRY["G10"].title in out and "trai…" not in out
    row = next(line for line in out.splitlines() if line.startswith("| G6 "))
    assert "fail in 8 of 26 process snapshots)" in row  # the whole summary, past 200 characters too


# -- colours and words ------------------------------------------------------------------------------------

def test_statuses_are_in_the_dashboards_colours(monkeypatch):
    """Fails on 5e064fb: unknown was ANSI magenta (35) in the CLI and blue (#58a6ff) in the dashboard."""
    monkeypatch.setenv("COLORTERM", "truecolor")
    for st in Status:
        r, g, b = (int(STATUS_RGB[True][st][i:i + 2], 16) for i in (1, 3, 5))
        assert f"38;2;{r};{g};{b}" in render.status_label(st, colour=True)
    monkeypatch.delenv("COLORTERM")
    unknown = render.status_label(Status.UNKNOWN, colour=True)
    assert "38;5;75" in unknown and "\x1b[35m" not in unknown  # 256 colours: the dashboard's 16-colour pick


def test_under_no_color_a_failure_is_louder_than_a_warning_and_nothing_is_coloured(monkeypatch, capsys):
    """Fails on 5e064fb: under NO_COLOR fail and warn looked alike (the dashboard's grey made fail dimmer)."""
    as_terminal(monkeypatch, 100)
    monkeypatch.setenv("NO_COLOR", "1")
    sys.stdout.write(render.table([Verdict("G1", Status.FAIL, "a failure"), Verdict("G3", Status.WARN, "a warning"),
                                   Verdict("G8", Status.UNKNOWN, "not seen")]))
    out = capsys.readouterr().out
    assert "\x1b[1;7m✘ fail" in out and "\x1b[1m▲ warn" in out and "\x1b[" not in out.split("G8", 1)[1].split("\n")[0]
    assert "38;" not in out and not re.search(r"\x1b\[3[0-7]m", out)


def test_one_kept_session_is_one_session(capsys):
    """Fails on 5e064fb: "1 sessions in ..."."""
    sessions_dir().mkdir(parents=True)
    shutil.copy(DEMO, sessions_dir() / "20261204T181740Z-spark-1.jsonl")
    assert main(["history"]) == 0
    assert "\n1 session in " in capsys.readouterr().err


def test_a_replay_prefix_several_sessions_share_is_ambiguous(capsys):
    """Fails on 5e064fb: `--replay 2026` said "no such file"."""
    sessions_dir().mkdir(parents=True)
    for sid in ("20261204T181740Z-spark-1", "20261205T090000Z-spark-1"):
        shutil.copy(DEMO, sessions_dir() / f"{sid}.jsonl")
    assert main(["check", "--replay", "2026", "G3"]) == 64
    err = capsys.readouterr().err
    assert "--replay 2026 is ambiguous: 2 kept sessions start with it" in err
    assert "20261204T181740Z-spark-1" in err and "20261205T090000Z-spark-1" in err and "no such file" not in err
    assert main(["check", "--replay", "20261205", "G3"]) in (0, 1, 2, 3)  # a prefix of one still works
    assert "ambiguous" not in capsys.readouterr().err


def test_g5_figures_carry_their_unit(monkeypatch):
    """Fails on 5e064fb: `copy bandwidth (bytes read + written per s): 221.4`, no unit."""
    monkeypatch.setenv("COLUMNS", "120")
    v = judge_result({"status": "ok", "device": "NVIDIA GB10", "copy_gbs": 221.4, "read_gbs": 240.2,
                      "buffer_bytes": 4 << 30, "iterations": 12, "repeats": 5, "measured_at": 1000.0}, 1000.0, fresh=True)
    lines = render.table([v], verbose=True).splitlines()
    assert "GB/s" in next(line for line in lines if "221.4" in line)
    assert "GB/s" in next(line for line in lines if "240.2" in line)


def test_preflight_names_unknowns_as_unknown_not_as_failures(tmp_path, capsys):
    """Fails on 5e064fb: "preflight: FAILED on G3" for a check that could not be decided."""
    from tests.test_preflight import _snapshot

    snap = _snapshot(tmp_path, meminfo=None)
    assert main(["preflight", "G3", "--snapshot", snap]) == 3
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("preflight: FAILED: unknown: G3 (1 check: 1 unknown)") and "failed on" not in last
    assert main(["preflight", "--replay", DEMO]) == 2
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("preflight: FAILED: failed on G1, G6, G9 (")


def test_g6_detail_rows_mark_what_they_cut(monkeypatch, capsys):
    """Fails on 5e064fb: G6's process rows stopped at `.../vllm serve nvidia/Llama-3.3-`, unmarked."""
    monkeypatch.setenv("COLUMNS", "300")
    main(["check", "--replay", DEMO, "G6", "-v"])
    row = next(line for line in capsys.readouterr().out.splitlines() if "pid 5120" in line and "rss" in line)
    assert row.endswith("vllm serve nvidia/Llama-3.3…")


def test_check_of_a_recording_fits_80_columns_without_verbose(monkeypatch, capsys):
    """Fails on 5e064fb: the `recording FILE (...)` line (161 characters) and G6's process rows ran on."""
    monkeypatch.setenv("COLUMNS", "80")
    main(["check", "--replay", DEMO])
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
    assert lines[0].startswith("recording ") and lines[1].startswith("  ")
