"""The structure a new check relies on: the front ends and the runner never name a check, so a
check is one module in gotchas/ and one registry line (tests/test_new_check.py adds one)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "sparktui"
ID = re.compile(r"\bG[0-9]{1,2}\b")
EXACT = re.compile(r"G[0-9]{1,2}")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the Constant nodes that are docstrings (a module's, a class's, a function's)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def id_literals(path: Path, anywhere: bool) -> list[tuple[int, str]]:
    """(line, text) of the string constants in ``path``'s code (not its docstrings or comments)
    that name a check: exactly an id ("G6") always; with ``anywhere``, an id inside a longer text."""
    tree = ast.parse(path.read_text())
    docs = _docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
            and (EXACT.fullmatch(node.value.strip()) or (anywhere and ID.search(node.value)))]


def front_end_files() -> list[tuple[Path, bool]]:
    """(file, whether any mention counts). The CLI's and the exporter's help texts document checks
    by number for the user (`--playbook`: "G8: playbook slug"); what decides must not."""
    files = [(p, True) for d in ("ui", "runner", "live") for p in sorted((SRC / d).rglob("*.py"))]
    files += [(p, False) for d in ("cli", "fleet") for p in sorted((SRC / d).rglob("*.py"))]
    return files


def test_no_front_end_and_not_the_runner_names_a_check():
    found = [f"{path.relative_to(SRC)}:{line}: {text[:80]!r}"
             for path, anywhere in front_end_files() for line, text in id_literals(path, anywhere)]
    assert not found, "a check named outside gotchas/ (declare it on the Gotcha instead):\n" + "\n".join(found)


def test_the_id_test_sees_an_id_where_it_is_used(tmp_path):
    """The test above can fail: an id as a value, or inside a label, is found; a docstring's is not."""
    code = tmp_path / "m.py"
    code.write_text('"""G6 in a docstring."""\nTELEMETRY = ("G3", "G4")\nLABEL = "Processes (G6)"\n')
    assert sorted(id_literals(code, True)) == [(2, "G3"), (2, "G4"), (3, "Processes (G6)")]
    assert sorted(id_literals(code, False)) == [(2, "G3"), (2, "G4")]


@pytest.mark.parametrize("folder", ["ui", "cli", "fleet"])
def test_front_ends_never_import_probes(folder):
    """Also an import-linter contract (pyproject.toml); this names the line."""
    hits = []
    for p in sorted((SRC / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and (
                    node.module.startswith("sparktui.probes") or (node.module == "sparktui" and any(
                        a.name == "probes" for a in node.names))):
                hits.append(f"{p.relative_to(SRC)}:{node.lineno}")
            if isinstance(node, ast.Import) and any(a.name.startswith("sparktui.probes") for a in node.names):
                hits.append(f"{p.relative_to(SRC)}:{node.lineno}")
    assert not hits


def test_no_function_in_src_is_over_80_lines():
    long = []
    for p in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = (node.end_lineno or node.lineno) - node.lineno + 1
                if n > 80:
                    long.append(f"{p.relative_to(SRC)}:{node.lineno} {node.name}: {n} lines")
    assert not long, "\n".join(long)
