"""Every numeric option of every command takes a finite number in a stated range, or is a usage
error (64) that names the option and the range. `--speed nan` and `record --interval 1e-300` used
to be accepted (the second sampled in a busy loop, hundreds of lines a second)."""

from __future__ import annotations

import argparse
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.cli.common import EXIT_USAGE, UsageError
from sparktui.cli.main import build_parser, main

# (command line before the option, option, lowest, highest, what 0 means or None)
NUMERIC = [
    ([], "--speed", 0.01, 1e6, "as fast as possible"),
    (["check"], "--timeout", 0.1, 86400, None),
    (["check"], "--watch", 0.01, 1e6, None),
    (["report"], "--watch", 0.01, 1e6, None),
    (["record", "-o", "r.jsonl"], "--interval", 0.01, 86400, None),
    (["record", "-o", "r.jsonl"], "--duration", 0.1, 1e9, None),
    (["record", "-o", "r.jsonl"], "--processes-every", 0.01, 1e9, "never"),
    (["guard"], "--interval", 0.1, 5, None),
]
# checked after parsing, with its own message (cli/bandwidth.size_bytes; tests/gotchas/g05/test_gate_and_probe.py;
# export --every: 1 to 86400 s, NaN and inf refused, only with --textfile: cli/fleet.cmd_export,
# tests/test_export_textfile.py)
CHECKED_AFTER_PARSING = {("bandwidth", "--size"), ("export", "--every")}
# options whose converter checks something other than a number (cli/main.sys_root_folder: a folder)
NOT_NUMERIC = {"--sys-root"}


def _numeric_options(parser: argparse.ArgumentParser, command: str | None = None):
    """(command, option, type) of every option that converts its value to a number."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _numeric_options(sub, name)
        elif (action.option_strings and action.type is not None and action.type is not str
              and action.option_strings[-1] not in NOT_NUMERIC):
            yield command, action.option_strings[-1], action.type


def test_every_numeric_option_is_bounded_or_named_here():
    """A new float/int option added with type=float (nan, inf, 1e-300 accepted) is caught here."""
    found = list(_numeric_options(build_parser()))
    assert {(c, o) for c, o, t in found if t in (float, int)} == CHECKED_AFTER_PARSING
    assert {o for _, o, t in found if t not in (float, int)} == {opt for _, opt, *_ in NUMERIC}


def _parse(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


@pytest.mark.parametrize("argv,option,lo,hi,zero", NUMERIC)
@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "-1", "1e-300", "1e308", "", "abc", "0x10"])
def test_garbage_is_a_usage_error_naming_the_option_and_the_range(argv, option, lo, hi, zero, text):
    with pytest.raises(UsageError) as e:
        _parse(argv + [f"{option}={text}"])
    assert f"argument {option}: " in str(e.value) and f"a number from {lo:g}" in str(e.value)


@pytest.mark.parametrize("argv,option", [(argv, option) for argv, option, *_ in NUMERIC]
                         + [(["check"], "--python"), (["check"], "--path"), (["report"], "-o")])
def test_a_lone_double_dash_as_the_value_is_refused(argv, option):
    """argparse hands `--speed=--` over as [] without calling the type (it was taken as a value)."""
    with pytest.raises(UsageError, match=f"argument [^:]*{option}[^:]*: expected a value"):
        _parse(argv + [f"{option}=--"])


@pytest.mark.parametrize("argv,option,lo,hi,zero", NUMERIC)
def test_the_ends_of_each_range_are_accepted_and_zero_only_where_it_means_something(argv, option, lo, hi, zero):
    dest = option.lstrip("-").replace("-", "_")
    assert getattr(_parse(argv + [f"{option}={lo:g}"]), dest) == lo
    assert getattr(_parse(argv + [f"{option}={hi:g}"]), dest) == hi
    if zero:
        assert getattr(_parse(argv + [f"{option}=0"]), dest) == 0
    else:
        with pytest.raises(UsageError, match=option):
            _parse(argv + [f"{option}=0"])


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(NUMERIC), value=st.floats(allow_nan=True, allow_infinity=True))
def test_any_float_is_taken_only_inside_its_range(case, value):
    argv, option, lo, hi, zero = case
    text = repr(value)
    inside = math.isfinite(value) and (lo <= value <= hi or (zero is not None and value == 0))
    if inside:
        got = getattr(_parse(argv + [f"{option}={text}"]), option.lstrip("-").replace("-", "_"))
        assert got == value
    else:
        with pytest.raises(UsageError, match=f"argument {option}"):
            _parse(argv + [f"{option}={text}"])


@pytest.mark.parametrize("argv", [
    ["--speed", "nan"],  # seen: accepted
    ["--speed", "-2"],
    ["record", "-o", "r.jsonl", "--interval", "1e-300"],  # seen: accepted, a busy loop
    ["check", "--timeout", "nan"],  # was a config error (78) naming no range
    ["check", "--timeout", "1e-300"],  # was accepted: every torch-side probe "hung" at once
])
def test_seen_cases_exit_64_with_the_range_before_anything_runs(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "a number from" in err and "Traceback" not in err
    assert not (tmp_path / "r.jsonl").exists(), "nothing was recorded"
