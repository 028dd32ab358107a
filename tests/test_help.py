"""Every `--help` helps: it starts with what the command does, lists the command's own options
before the shared ones (under their own heading), and ends with examples and exit codes."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from sparktui.cli import helptext
from sparktui.cli.common import EXIT_MEANING, SHARED_OPTIONS
from sparktui.cli.main import build_parser, main
from sparktui.gotchas import REGISTRY, g05_bandwidth

# a command that takes the shared options -> one of its own options
OWN_OPTION = {"check": "--watch", "snapshot": "--output", "bandwidth": "--size", "record": "--interval",
              "peers": "--differences", "export": "--listen", "report": "--redact", "preflight": "--strict",
              "link-test": "--binary", "guard": "--once"}


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _help(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as done:
        main(argv + ["--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


def test_every_command_has_its_help_text():
    """A command added without a description, examples and exit codes is named here."""
    assert set(_commands()) == set(helptext.HELP) - {None}
    assert set(OWN_OPTION) | {"explain", "list", "history"} == set(_commands())


@pytest.mark.parametrize("command", sorted(set(helptext.HELP) - {None}))
def test_a_command_help_starts_with_what_it_does_and_ends_with_examples_and_exit_codes(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    out = _help([command], capsys)
    about = helptext.HELP[command].about
    first_paragraph = out.split("\n\n", 2)[1]
    assert first_paragraph.split() == about.split(), out  # what it does, right after the usage line
    assert max(len(line) for line in first_paragraph.splitlines()) <= 98
    assert 1 <= len(re.findall(r"[.!?](?:\s|$)", about)) <= 3 and len(about) <= 300  # a sentence or two, not a manual
    examples = out.split("Examples:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(examples) >= 2 and all(line.startswith("  sparktui ") for line in examples)
    codes = re.findall(r"^  (\d+) +\S", out.split("Exit codes:\n", 1)[1], re.MULTILINE)
    assert codes[0] == "0" and "64" in codes and all(int(c) in EXIT_MEANING for c in codes)
    assert out.index("Examples:") < out.index("Exit codes:")
    assert not re.search(r"<[A-Za-z_ ]+>", "\n".join(examples))  # commands to copy, no placeholders


@pytest.mark.parametrize("command", sorted(OWN_OPTION))
def test_own_options_come_before_the_shared_ones_under_their_heading(command, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    out = _help([command], capsys)
    body = out.split("\n\n", 2)[2]  # past the usage and the description
    own, shared = body.index(OWN_OPTION[command]), body.index(f"\n{SHARED_OPTIONS}:\n")
    assert own < shared < body.index("  --python PATH") < body.index("Examples:")
    assert body.count("--python PATH") == 1
    usage = out.split("\n\n", 1)[0]
    assert usage.index("-o FILE" if command == "snapshot" else OWN_OPTION[command]) < usage.index("--config")


@pytest.mark.parametrize("command", ["explain", "list", "history"])
def test_a_command_without_shared_options_shows_no_shared_heading(command, capsys):
    out = _help([command], capsys)
    assert SHARED_OPTIONS not in out and "--python" not in out


def test_the_top_level_help_lists_dashboard_options_commands_then_shared_options(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    out = _help([], capsys)
    assert out.split("\n\n", 2)[1].split() == helptext.HELP[None].about.split()
    order = [out.index(s) for s in ("\noptions:\n", "  --replay FILE", "\ncommands:\n", "    preflight",
                                    f"\n{SHARED_OPTIONS}:\n", "  --python PATH", "\nExamples:\n", "\nExit codes:\n")]
    assert order == sorted(order)
    assert "  69   export" in out and "  4    bandwidth" in out


def test_the_exit_codes_in_help_are_those_cli_common_defines():
    """`check` really exits with the codes its help lists: a wrong id is 64, as listed."""
    text = helptext.HELP["check"].epilog(100)
    assert "  64   usage error" in text and "  3    some checks could not be determined" in text
    assert main(["check", "G99"]) == 64


@pytest.mark.parametrize("columns", [80, 200])
def test_description_and_exit_codes_fit_the_terminal_and_examples_stay_whole(columns, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(columns))
    width = min(columns - 2, helptext.MAX_WIDTH)
    for command, entry in helptext.HELP.items():
        out = _help([command] if command else [], capsys)
        about = out.split("\n\n", 2)[1]
        assert all(len(line) <= width for line in about.splitlines()), about
        codes = out.split("Exit codes:\n", 1)[1].splitlines()
        assert all(len(line) <= width for line in codes) and all(re.match(r"  \d+ +\S| {7}\S", li) for li in codes)
        for example in entry.examples:
            assert f"\n  {example}\n" in out  # one line, as it is typed


# -- what the shipped texts cite -------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
# the project's working notes, which do not ship: texts cite the public sources instead (or the source
# facts as they ship, docs/reference/FACTS.md and docs/reference/FIELD-FACTS.md)
UNSHIPPED = re.compile(r"(?<!reference/)(?<![\w-])(?:FACTS\.md|FIELD-FACTS)|gotcha-checks|spark-training-gotchas"
                       r"|TEXTUAL-NOTES|shared/reference|\.\./shared")
CITED_FILE = re.compile(r"(?<![\w/.~-])(?:docs|tools|benchmarks|screenshots)/[\w./-]+\.\w+|(?<![\w/.-])[A-Z]+\.md\b")  # repo-relative


def _shipped_texts() -> dict[str, str]:
    """Every text a user can read: the package's files (code, comments, data), the docs, the README,
    every gotcha's card as `explain` prints it, the evidence sources, and every --help."""
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8", errors="replace")
             for p in sorted((ROOT / "src" / "sparktui").rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts}
    texts.update({str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
                  for p in [ROOT / "README.md", *sorted((ROOT / "docs").iterdir())] if p.is_file()})
    texts.update({f"sparktui explain {gid}": g.explain() for gid, g in REGISTRY.items()})
    texts["G5 expected-range sources"] = "\n".join(e.source for e in g05_bandwidth.EXPECTED)
    texts["sparktui --help"] = build_parser().format_help()
    texts.update({f"sparktui {name} --help": p.format_help() for name, p in _commands().items()})
    return texts


def test_no_shipped_text_cites_a_file_that_does_not_ship():
    texts = _shipped_texts()
    assert len(texts) > 100 and "sparktui explain G4" in texts and "docs/gotchas.md" in texts
    unshipped = sorted({f"{where}: {m}" for where, text in texts.items() for m in UNSHIPPED.findall(text)})
    assert not unshipped, "cite the public source (or docs/gotchas.md) instead of the working notes:\n" + \
        "\n".join(unshipped)
    missing = sorted({f"{where}: {m}" for where, text in texts.items() for m in CITED_FILE.findall(text)
                      if not (ROOT / m.rstrip(".")).exists()})
    assert not missing, "these texts name files that are not in the repository:\n" + "\n".join(missing)


def test_the_citation_check_sees_a_working_note_and_a_missing_doc():
    """The patterns above catch what they are for (a check that cannot fail checks nothing)."""
    assert UNSHIPPED.search("seen on a GB10 (FACTS.md, power)") and UNSHIPPED.search("../shared/reference/x.txt")
    assert UNSHIPPED.search("(FIELD-FACTS.md)") and not UNSHIPPED.search("see docs/reference/FIELD-FACTS.md")
    assert CITED_FILE.findall("see docs/nowhere.md and docs/gotchas.md") == ["docs/nowhere.md", "docs/gotchas.md"]
    assert not (ROOT / "docs/nowhere.md").exists() and (ROOT / "docs/gotchas.md").exists()
