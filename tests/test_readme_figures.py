"""Every figure docs/performance.md's Measured table quotes (the README points there) can be
reproduced: its row names the script that prints it and the saved output under benchmarks/results/,
and that output says when, where and how it was made (date, machine, command in its first lines)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = re.compile(r"`(?:python3? )?((?:benchmarks|tools)/[\w./-]+\.(?:py|sh)|\.ci/run)")
RESULT = re.compile(r"benchmarks/results/[\w.*{},-]+\.txt")


def measured_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    section = text.split("\n## Measured", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| what")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]


def results_named(cell: str) -> list[Path]:
    found: list[Path] = []
    for ref in RESULT.findall(cell):
        matches = sorted(ROOT.glob(ref))
        assert matches, f"{ref} is cited but no such file is saved"
        found += matches
    return found


ROWS = measured_rows()


def test_the_measured_table_has_rows():
    assert len(ROWS) >= 10


@pytest.mark.parametrize("row", ROWS, ids=[r[0][:50] for r in ROWS])
def test_each_figure_names_its_script_and_saved_output(row):
    assert len(row) == 3, f"a Measured row is: what | figure | script and saved output: {row}"
    source = row[2]
    scripts = SCRIPT.findall(source)
    assert scripts, f"no script named for {row[0]!r}: {source}"
    for s in scripts:
        assert (ROOT / s).is_file(), f"{s} does not exist"
    assert results_named(source), f"no saved output under benchmarks/results/ for {row[0]!r}"


@pytest.mark.parametrize("path", sorted({p for r in ROWS for p in results_named(r[2])}), ids=lambda p: p.name)
def test_each_saved_output_says_when_where_and_how(path):
    head = "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[:6])
    assert re.search(r"20\d\d-\d\d-\d\d", head), f"{path.name}: no date in its first lines"
    assert re.search(r"machine|CPUs|H200|\bvm\b", head, re.I), f"{path.name}: no machine in its first lines"
    assert re.search(r"command|^\$ |^# \$ |python3? |\.ci/run|tools/", head, re.M), f"{path.name}: no command in its first lines"
