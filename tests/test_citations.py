"""Nothing in the docs or the tests cites a file that does not ship.

Every repository path named in README.md, CHANGELOG.md and docs/*.md (in the text and as a relative
Markdown link), and in the comments and docstrings of the test files, must exist in the repository.
A bare name of the source facts resolves to its copy under docs/reference/. A glob or a {a,b} brace
must match at least one file; a path with a placeholder in capitals (gNN, NAME, YYYY) is a pattern,
not a citation. tests/test_help.py checks the texts the package itself ships.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TOP = r"(?:docs|tests|benchmarks|tools|screenshots|src|\.ci)"
CITED = re.compile(r"(?<![\w/.~$-])" + TOP + r"/[\w./*{},-]*[\w/*}]")
BARE = re.compile(r"(?<![\w/.-])(?:FIELD-FACTS|FACTS)\.md\b")  # the source facts, cited by name
LINK = re.compile(r"\]\(([^)\s]+)\)")  # a Markdown link's target
PLACEHOLDER = re.compile(r"NN|NAME|YYYY|MACHINE|DATE|[.]{3}")
REFERENCE = ROOT / "docs" / "reference"


def _braces(path: str) -> list[str]:
    """'a-{1,2}-b' -> ['a-1-b', 'a-2-b'] (one level, repeated until none is left)."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [x for part in m.group(1).split(",") for x in _braces(path[:m.start()] + part + path[m.end():])]


def _exists(path: Path | str) -> bool:
    text = str(path)
    if any(c in text for c in "*?["):
        base = ROOT if not Path(text).is_absolute() else Path("/")
        return any(base.glob(text))
    return (ROOT / text).exists()


def cited_paths(text: str) -> set[str]:
    """Repository-relative paths the text names (each as written, trailing punctuation dropped)."""
    found = {m.rstrip(".,") for m in CITED.findall(text)}
    found |= {f"docs/reference/{m}" for m in BARE.findall(text)}
    return {p for p in found if not PLACEHOLDER.search(p)}


def linked_paths(doc: Path, text: str) -> set[str]:
    """Relative Markdown link targets of ``doc``, as repository paths."""
    out = set()
    prose = re.sub(r"`[^`\n]*`", "", re.sub(r"(?ms)^```.*?^```", "", text))  # code is no link
    for target in LINK.findall(prose):
        if re.match(r"[a-z][a-z0-9+.-]*:|#", target):  # a URL or an anchor on the same page
            continue
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        try:
            out.add(str(path.relative_to(ROOT)))
        except ValueError:
            out.add(target)  # points outside the repository: reported as missing
    return out


def comments_and_docstrings(source: str) -> str:
    """The comments and docstrings of a Python file (its code and plain strings left out)."""
    parts = [tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    tree = ast.parse(source)
    for node in [tree, *ast.walk(tree)]:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                parts.append(doc)
    return "\n".join(parts)


def missing(paths: set[str]) -> list[str]:
    """The paths (every expansion of a brace, at least one file for a glob) not in the repository."""
    return [p for p in sorted(paths) if not all(_exists(x) for x in _braces(p))]


DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
TESTS = sorted(p for p in (ROOT / "tests").rglob("*.py")
               if "data" not in p.relative_to(ROOT / "tests").parts and "__pycache__" not in p.parts)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_path_a_doc_cites_exists(doc):
    text = doc.read_text(encoding="utf-8")
    gone = missing(cited_paths(text) | linked_paths(doc, text))
    assert not gone, f"{doc.relative_to(ROOT)} cites files that are not in the repository: {gone}"


@pytest.mark.parametrize("test_file", TESTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_path_a_test_file_cites_in_its_comments_and_docstrings_exists(test_file):
    text = comments_and_docstrings(test_file.read_text(encoding="utf-8"))
    gone = missing(cited_paths(text))
    assert not gone, f"{test_file.relative_to(ROOT)} cites files that are not in the repository: {gone}"


def test_the_source_facts_ship():
    assert (REFERENCE / "FACTS.md").is_file() and (REFERENCE / "FIELD-FACTS.md").is_file()


def test_the_check_sees_a_missing_file_and_resolves_what_ships():
    """The patterns catch what they are for (a check that cannot fail checks nothing)."""
    text = "see docs/nowhere.md, tests/data/h200/ and FACTS.md (FIELD-FACTS.md); docs/reference/FACTS.md."
    assert cited_paths(text) == {"docs/nowhere.md", "tests/data/h200/", "docs/reference/FACTS.md",
                                 "docs/reference/FIELD-FACTS.md"}
    assert missing(cited_paths(text)) == ["docs/nowhere.md"]
    assert missing({"benchmarks/results/regex-linear-*.txt"}) == []
    assert missing({"benchmarks/results/no-such-*.txt"}) == ["benchmarks/results/no-such-*.txt"]
    assert cited_paths("tests/gotchas/gNN/ and /somewhere/docs/x.md") == set()
    assert linked_paths(ROOT / "docs" / "x.md", "[a](reference/FACTS.md) [b](https://x.org/a.md) [c](#top) "
                        "`[ ](Corrected|Fatal)`") == {"docs/reference/FACTS.md"}
    src = '"""Cites docs/a.md."""\nX = "docs/b.md"  # and docs/c.md\ndef f():\n    """docs/d.md"""\n'
    assert cited_paths(comments_and_docstrings(src)) == {"docs/a.md", "docs/c.md", "docs/d.md"}
