"""ruff over the code, the tests, the benchmarks and the tools: no finding.

The rules ([tool.ruff] in pyproject.toml) are ones that catch bugs (pyflakes, bugbear, pylint's
errors, blocking calls in async code), not style; the code is not run through a formatter. ruff
comes with the ``test`` extra, so CI always runs this; without ruff installed it is skipped and
says how to install it.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PATHS = ("src", "tests", "benchmarks", "tools")

# Files whose findings are tolerated FOR NOW, each with why: files being rewritten while the
# linter came in. Empty it: a file listed here that has no finding any more fails the test too.
TEMPORARILY_UNLINTED: dict[str, str] = {}


def _ruff() -> list[str]:
    """The command that runs ruff: the module in this interpreter, else ruff on PATH."""
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    exe = shutil.which("ruff")
    if exe is None:
        pytest.skip("ruff is not installed: python3 -m pip install -e '.[test]' (CI installs it)")
    return [exe]


def _findings() -> list[dict]:
    proc = subprocess.run([*_ruff(), "check", "--output-format", "json", "--no-cache", *PATHS],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    try:
        found = json.loads(proc.stdout or "null")
    except ValueError:
        found = None
    if not isinstance(found, list) or proc.returncode not in (0, 1):
        pytest.fail(f"ruff did not run (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return found


def _where(f: dict) -> str:
    return Path(f["filename"]).resolve().relative_to(REPO).as_posix()


def test_ruff_finds_nothing():
    found = _findings()
    tolerated = [f for f in found if _where(f) in TEMPORARILY_UNLINTED]
    errors = [f for f in found if _where(f) not in TEMPORARILY_UNLINTED]
    lines = [f"{_where(f)}:{f['location']['row']}:{f['location']['column']}: {f['code']} {f['message']}" for f in errors]
    per_rule = Counter(f["code"] for f in errors)
    summary = ", ".join(f"{code} x{n}" for code, n in per_rule.most_common())
    assert not errors, f"ruff: {len(errors)} findings ({summary})\n" + "\n".join(lines)
    stale = sorted(set(TEMPORARILY_UNLINTED) - {_where(f) for f in tolerated})
    assert not stale, f"no finding left in {stale}: take them out of TEMPORARILY_UNLINTED in tests/test_lint.py"


def test_the_linter_reports_what_it_is_configured_to_catch(tmp_path):
    """The configuration is read (pyproject.toml's rules, not ruff's defaults) and a bug is a finding."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f(xs=[]):\n    for i in range(3):\n        pass\n    return undefined_name\n")
    proc = subprocess.run([*_ruff(), "check", "--output-format", "json", "--no-cache",
                           "--config", str(REPO / "pyproject.toml"), str(bad)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    codes = {f["code"] for f in json.loads(proc.stdout)}
    assert {"B006", "B007", "F821"} <= codes, codes


# The files of the classes sparktui's widgets and screens derive from: a private name one of them
# defines, set on ``self`` by a subclass, overwrites Textual's own field.
_WIDGET_BASES = ("dom.py", "message_pump.py", "widget.py", "scroll_view.py", "screen.py", "widgets/_data_table.py",
                 "widgets/_static.py")


def _textual_private_names(only: tuple[str, ...] = ()) -> set[str]:
    """The private names Textual defines on its objects (``self._x = ...``, ``def _x``), in all its
    files or ``only`` those."""
    import re

    import textual

    root = Path(textual.__file__).parent
    names: set[str] = set()
    for path in [root / f for f in only] if only else root.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        names |= set(re.findall(r"\bself\.(_[a-z][a-z0-9_]*)\s*(?::[^=\n]*)?=", text))
        names |= set(re.findall(r"\bdef (_[a-z][a-z0-9_]*)\(", text))
    return names


def test_the_dashboard_reads_no_private_textual_field():
    """pyproject.toml gives textual a range (tested at both ends by .ci/run), which holds only while
    the dashboard uses Textual's public API: no ``x._name`` that is Textual's unless sparktui itself
    defines that name (its own attributes and methods), and no Textual field of a widget's base
    classes set by the widget."""
    import ast

    textual_private = _textual_private_names()
    base_private = _textual_private_names(_WIDGET_BASES)
    ours: set[str] = set()
    reads: list[tuple[str, int, str]] = []
    found: list[str] = []
    for path in sorted((REPO / "src" / "sparktui" / "ui").rglob("*.py")):  # the only code that holds Textual objects
        where = path.relative_to(REPO).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                ours.add(node.name)
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                on_self = isinstance(node.value, ast.Name) and node.value.id == "self"
                if isinstance(node.ctx, ast.Store):
                    if on_self and node.attr in base_private or not on_self and node.attr in textual_private:
                        found.append(f"{where}:{node.lineno}: sets {node.attr}")
                    else:
                        ours.add(node.attr)
                elif not (isinstance(node.value, ast.Name) and node.value.id in ("os", "sys")):  # os._exit
                    reads.append((where, node.lineno, node.attr))
    found += [f"{where}:{line}: {name}" for where, line, name in reads if name in textual_private and name not in ours]
    assert not found, "Textual's private fields (use its public API):\n" + "\n".join(found)
