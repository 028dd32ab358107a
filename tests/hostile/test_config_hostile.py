"""Hostile config files: whatever sits at the config path, loading gives a Config or a one-line
ConfigError (exit 78), never another exception, never a hang, never unbounded memory."""

from __future__ import annotations

import os
import threading
from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.cli.main import EXIT_CONFIG, main
from sparktui.core.config import MAX_CONFIG_BYTES, Config, ConfigError, default_config_path, load_config

DEADLINE_S = 5.0
DEMO = Path(__file__).resolve().parents[2] / "src" / "sparktui" / "data" / "gb10-demo.jsonl"


def load_within_deadline(path: str | None = None) -> Config | ConfigError:
    """load_config in a thread: a hang fails the test instead of stalling the suite."""
    out: list = []

    def run() -> None:
        try:
            out.append(load_config(path))
        except ConfigError as e:
            out.append(e)
        except BaseException as e:  # noqa: BLE001 - anything else is the bug under test
            out.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(DEADLINE_S)
    assert not t.is_alive(), f"load_config did not return within {DEADLINE_S} s"
    result = out[0]
    assert isinstance(result, (Config, ConfigError)), f"{type(result).__name__}: {result}"
    if isinstance(result, ConfigError):
        assert "\n" not in str(result) and len(str(result)) < 600, str(result)
    return result


def default_path() -> Path:
    p = default_config_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


def test_a_default_config_that_is_a_fifo_is_refused_not_waited_on():
    p = default_path()
    os.mkfifo(p)
    err = load_within_deadline()
    assert isinstance(err, ConfigError) and "not a regular file" in str(err)


def test_a_default_config_linked_to_dev_zero_is_refused_without_reading_it():
    default_path().symlink_to("/dev/zero")
    err = load_within_deadline()
    assert isinstance(err, ConfigError) and "not a regular file" in str(err)


def test_a_config_in_a_folder_that_cannot_be_searched_exits_78_not_70(monkeypatch, capsys):
    """EACCES from stat, as a user gets it for a file under a mode-0 folder (root is never denied,
    so the denial is injected at the one call that sees it)."""
    p = default_path()
    p.write_text("[thermal]\nhot_c = 80\n")
    real_stat = os.stat

    def denied(path, *a, **kw):
        if os.fspath(path) == str(p):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *a, **kw)

    monkeypatch.setattr(os, "stat", denied)
    assert main(["check", "G3", "--replay", str(DEMO)]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert "cannot read: Permission denied" in err and "Traceback" not in err


def test_100k_nested_brackets_are_a_config_error_not_exit_70(tmp_path, capsys):
    p = tmp_path / "deep.toml"
    p.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert main(["check", "G7", "--config", str(p)]) == EXIT_CONFIG
    err = capsys.readouterr().err
    assert "nested too deeply" in err and "Traceback" not in err


def test_a_config_over_the_size_cap_is_refused_before_it_is_read(tmp_path):
    p = tmp_path / "huge.toml"
    p.write_text("# " + "x" * MAX_CONFIG_BYTES + "\n")
    err = load_within_deadline(str(p))
    assert isinstance(err, ConfigError) and "more than a TOML config can be" in str(err)


def _file_where_its_folder_should_be(p: Path) -> None:
    p.parent.rmdir()
    p.parent.write_text("")


@pytest.mark.parametrize("make, words", [
    (Path.mkdir, "is a folder"),
    (lambda p: p.symlink_to(p), "Too many levels of symbolic links"),
    (lambda p: p.write_bytes(b"[thermal]\nhot_c = 80 # \xff\xfe\n"), "not UTF-8 text (byte 23)"),
    (_file_where_its_folder_should_be, "Not a directory"),
])
def test_odd_things_at_the_default_path_are_one_line_config_errors(make, words):
    make(default_path())
    err = load_within_deadline()
    assert isinstance(err, ConfigError) and words in str(err), str(err)


def test_a_key_with_a_newline_and_a_huge_value_give_a_one_line_message(tmp_path):
    p = tmp_path / "c.toml"
    p.write_text('[thermal]\n"hot\\nc" = 1\n')
    err = load_within_deadline(str(p))
    assert isinstance(err, ConfigError) and "'hot\\nc': unknown setting" in str(err)
    p.write_text("[thermal]\nhot_c = [" + ", ".join(["'x'"] * 50_000) + "]\n")
    err = load_within_deadline(str(p))
    assert isinstance(err, ConfigError) and "hot_c: expected a number, got ['x', 'x'" in str(err)


KNOWN_KEYS = [(sf.name, f.name) for sf in fields(Config) if sf.name != "source"
              for f in fields(sf.default_factory())]  # type: ignore[misc]

toml_values = st.one_of(
    st.integers(min_value=-10**30, max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(lambda f: {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(f), repr(f))),
    st.booleans().map(lambda b: str(b).lower()),
    st.text(max_size=20).map(lambda s: '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'),
    st.just("[]"), st.just("[1, 'a']"), st.just("['a', 'b']"), st.just("{x = 1}"), st.just("1979-05-27T07:32:00Z"),
)


@settings(max_examples=150)
@given(key=st.sampled_from(KNOWN_KEYS), value=toml_values)
def test_any_value_at_any_known_key_loads_or_is_a_config_error(tmp_path_factory, key, value):
    p = tmp_path_factory.mktemp("c") / "c.toml"
    p.write_text(f"[{key[0]}]\n{key[1]} = {value}\n", encoding="utf-8")
    load_within_deadline(str(p))


@settings(max_examples=150)
@given(text=st.text(alphabet=st.sampled_from(list("[]{}=\"'.,#\n ab_1-+:\\")) | st.characters(), max_size=200))
def test_arbitrary_toml_text_loads_or_is_a_config_error(tmp_path_factory, text):
    p = tmp_path_factory.mktemp("c") / "c.toml"
    p.write_text(text, encoding="utf-8", errors="surrogatepass")
    load_within_deadline(str(p))


@settings(max_examples=100)
@given(raw=st.binary(max_size=300))
def test_arbitrary_bytes_load_or_are_a_config_error(tmp_path_factory, raw):
    p = tmp_path_factory.mktemp("c") / "c.toml"
    p.write_bytes(raw)
    load_within_deadline(str(p))


@settings(max_examples=20)
@given(depth=st.integers(min_value=1, max_value=200_000), opener=st.sampled_from(["[", "{a = ", "[{b = "]))
def test_any_nesting_depth_loads_or_is_a_config_error(tmp_path_factory, depth, opener):
    closer = {"[": "]", "{a = ": "}", "[{b = ": "}]"}[opener]
    p = tmp_path_factory.mktemp("c") / "c.toml"
    p.write_text("x = " + opener * depth + "1" + closer * depth + "\n")
    load_within_deadline(str(p))


@pytest.mark.parametrize("key", ["interval_s", "processes_every_s"])
@pytest.mark.parametrize("value, ok", [("1e-300", False), ("0.009", False), ("0.01", True), ("0.05", True)])
def test_a_sampling_period_shorter_than_a_hundredth_of_a_second_is_a_config_error(tmp_path, key, value, ok):
    """`interval_s = 1e-300` passed "greater than 0" and made `record` a busy loop: the config floor
    is the one `record --interval` has."""
    p = tmp_path / "c.toml"
    p.write_text(f"[telemetry]\n{key} = {value}\n")
    if ok:
        assert getattr(load_config(p).telemetry, key) == float(value)
    else:
        with pytest.raises(ConfigError, match=rf"{key}: must be at least 0.01 s"):
            load_config(p)
