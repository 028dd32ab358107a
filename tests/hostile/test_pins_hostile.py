"""Hostile pins files: any text parses into pins or a clear error that names the file and line
number but never quotes the line (a pins file may hold an index URL with a token), and a huge file
neither overflows the target probe's command line nor makes its lookups outlast the probe."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.core.config import Config
from sparktui.probes import pins, target

SECRET = "ghp_S3cr3tT0k3nValue"


def cfg_for(path: Path) -> Config:
    return Config().with_overrides(pins={"file": str(path)})


def test_a_500k_line_pins_file_is_a_clear_g9_error_and_the_probe_asks_about_at_most_the_cap(tmp_path):
    f = tmp_path / "pins.txt"
    f.write_text("".join(f"package-number-{i}==1.0\n" for i in range(500_000)))
    reading = pins.read(cfg_for(f))
    assert reading.data is None
    assert f"{f}:{pins.MAX_PINS + 1}: more than {pins.MAX_PINS} pins; G9 compares at most" in reading.error
    assert len(pins.pinned_names(cfg_for(f))) == pins.MAX_PINS


def test_package_names_past_the_argv_string_limit_reach_the_probe(tmp_path):
    """One argv string may hold 128 KiB (MAX_ARG_STRLEN): 2,000 long names used to be E2BIG,
    'Argument list too long', and every torch-side check unknown."""
    names = [f"not-installed-{i:04d}-" + "x" * 90 for i in range(2_000)]
    assert len(",".join(names)) > 128 * 1024
    run = target.run_script(sys.executable, "env", 60, packages=names)
    assert run.launch_error is None, run.launch_error
    done = [e for e in run.events if e["stage"] == "packages" and e["event"] == "done"]
    assert done and done[0]["data"]["versions"] == dict.fromkeys(names)


def test_no_temporary_names_file_is_left_behind(tmp_path, monkeypatch):
    import tempfile

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    run = target.run_script(sys.executable, "env", 60, packages=["numpy"])
    assert run.launch_error is None and list(temp.iterdir()) == []


CARRIERS = [  # where a token can sit on a pins line that is not an include
    "torch=={s}", "torch>={s}", "torch=={s} ; python_version >= '3.10'", "torch==2.9.0 ; {s} == '3'",
    "{s}==2.9.0x", "[{s}]==1", "torch==2.9.0 {s}", "torch ~= {s}", "torch==2.9.* ; os_name {s} 'x'",
    "--index-url https://user:{s}@pypi.example/simple", "--extra-index-url=https://{s}@host/x",
    "-e git+https://x:{s}@github.com/a/b", "name @ https://u:{s}@host/name.whl", "https://u:{s}@host/a.whl",
]


@settings(max_examples=150)
@given(carrier=st.sampled_from(CARRIERS), noise=st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                                                                  blacklist_characters="\n\r\\\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
                                                          max_size=12))
def test_errors_and_skipped_lines_never_show_a_token_from_the_file(tmp_path_factory, carrier, noise):
    f = tmp_path_factory.mktemp("p") / "pins.txt"
    f.write_text("numpy==2.1.0\n" + carrier.format(s=SECRET + noise) + "\n", encoding="utf-8")
    ps = pins.load(f)
    reading = pins.read(cfg_for(f))
    shown = " ".join(ps.errors) + (reading.error or "") + " ".join(s["text"] for s in ps.skipped)
    assert SECRET not in shown, shown
    for e in ps.errors:
        assert e.startswith(f"{f}:2: "), e


@settings(max_examples=150)
@given(text=st.text(alphabet=st.sampled_from(list("torch=<>!~.*;@[], '\"#-\\\n09abx:/")) | st.characters(blacklist_categories=("Cs",)),
                    max_size=200))
def test_arbitrary_pins_text_is_pins_or_a_clear_error(tmp_path_factory, text):
    f = tmp_path_factory.mktemp("p") / "pins.txt"
    f.write_text(text, encoding="utf-8")
    reading = pins.read(cfg_for(f))
    assert (reading.data is None) != (reading.error is None)
    if reading.error is not None:
        assert reading.error.startswith("pins file unusable: ") and "\n" not in reading.error
        assert str(f) in reading.error


@settings(max_examples=60)
@given(raw=st.binary(max_size=200))
def test_arbitrary_bytes_are_pins_or_a_clear_error(tmp_path_factory, raw):
    f = tmp_path_factory.mktemp("p") / "pins.txt"
    f.write_bytes(raw)
    reading = pins.read(cfg_for(f))
    assert (reading.data is None) != (reading.error is None)
