"""`sparktui export --textfile DIR`: the verdicts for node_exporter's textfile collector, written
atomically; the file passes promtool's lint (the check node_exporter's own docs recommend)."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from sparktui.cli import main as cli_main
from sparktui.core.config import Config
from sparktui.fleet import exporter as ex
from sparktui.probes import nvml
from sparktui.testing.fake_nvml import gb10_loaded


@pytest.fixture
def tf(tmp_path):
    """The textfile folder (tmp_path itself holds the test's XDG folders)."""
    (tmp_path / "tf").mkdir()
    return tmp_path / "tf"


@pytest.fixture
def fake_gb10():
    nvml.set_backend(gb10_loaded())
    yield
    nvml.set_backend(None)


def families(path) -> dict:
    return {f.name: f for f in text_string_to_metric_families(open(path).read())}


def test_once_writes_the_verdicts_and_nothing_else(tf, fake_gb10):
    assert cli_main.main(["export", "--textfile", str(tf), "--once", "G3", "G11"]) == 0
    assert sorted(os.listdir(tf)) == ["sparktui.prom"]  # no temporary file left behind
    fams = families(tf / "sparktui.prom")
    assert {s.labels["id"] for s in fams["sparktui_check_status"].samples} == {"G3", "G11"}
    assert sum(s.value for s in fams["sparktui_check_state"].samples if s.labels["id"] == "G3") == 1
    # no telemetry: a textfile is read long after it was written
    assert not [n for n in fams if n.startswith(("sparktui_gpu_", "sparktui_memory", "DCGM_"))]
    assert oct(os.stat(tf / "sparktui.prom").st_mode & 0o777) == "0o644"
    if shutil.which("promtool"):
        lint = subprocess.run(["promtool", "check", "metrics"], input=(tf / "sparktui.prom").read_bytes(),
                              capture_output=True, timeout=60)
        assert lint.returncode == 0, lint.stdout + lint.stderr


def test_a_failed_write_leaves_the_old_file_whole_and_no_temporary(tf, monkeypatch, capsys):
    (tf / "sparktui.prom").write_text("# the previous verdicts\n")

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ex.os, "replace", full_disk)
    assert ex._write_or_say(str(tf), b"sparktui_info 1\n", __import__("sys").stderr) == 74
    assert (tf / "sparktui.prom").read_text() == "# the previous verdicts\n"
    assert sorted(os.listdir(tf)) == ["sparktui.prom"]
    assert "No space left on device" in capsys.readouterr().err


def test_a_reader_never_sees_half_a_file(tf):
    """Rewritten 300 times while another thread reads it: every read is one whole version."""
    versions = [("x" * 5000 + f" {i}\n").encode() for i in range(300)]
    ex.write_textfile(str(tf), versions[0])
    seen, done = set(), threading.Event()

    def read():
        while not done.is_set():
            seen.add((tf / "sparktui.prom").read_bytes())

    t = threading.Thread(target=read)
    t.start()
    for v in versions[1:]:
        ex.write_textfile(str(tf), v)
    done.set()
    t.join()
    assert seen and seen <= set(versions)


@pytest.mark.parametrize("make", ["missing", "file", "readonly"])
def test_a_folder_that_cannot_take_the_file_is_said_before_any_check_runs(tmp_path, make, capsys, monkeypatch):
    target = tmp_path / "tf"
    if make == "file":
        target.write_text("")
    elif make == "readonly":
        target.mkdir()
        monkeypatch.setattr(ex.os, "access", lambda p, mode: False)
    monkeypatch.setattr("sparktui.runner.run_checks", lambda *a, **k: pytest.fail("a check ran"))
    assert cli_main.main(["export", "--textfile", str(target), "--once"]) == 73
    err = capsys.readouterr().err
    assert ("not a folder" if make != "readonly" else "permission denied") in err


@pytest.mark.parametrize("argv, said", [
    (["export", "--once"], "--once goes with --textfile"),
    (["export", "--every", "5"], "--every goes with --textfile"),
    (["export", "--textfile", ".", "--listen", "127.0.0.1:9"], "--listen/--allow-remote do not apply"),
    (["export", "--textfile", ".", "--every", "0.1"], "between 1 and 86400"),
    (["export", "--textfile", ".", "--every", "nan"], "between 1 and 86400"),
    (["export", "--textfile", ".", "--once", "--every", "5"], "--every does not apply"),
])
def test_flags_that_do_not_go_together_are_refused(argv, said, capsys):
    assert cli_main.main(argv) == 64
    assert said in capsys.readouterr().err


def test_kept_running_it_rewrites_the_file_as_the_checks_rerun(tf, fake_gb10):
    stop = threading.Event()
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("code", ex.run_textfile(
        Config(), str(tf), ["G3", "G4"], "spark-1", every_s=0.2, stop=stop)))
    t.start()
    try:
        path, deadline = tf / "sparktui.prom", time.monotonic() + 15
        while not (path.exists() and len(families(path)["sparktui_check_status"].samples) == 2):
            assert time.monotonic() < deadline, "the file never held both checks"
            time.sleep(0.05)
        first = path.stat().st_mtime_ns
        while path.stat().st_mtime_ns == first:
            assert time.monotonic() < deadline + 5, "the file was not rewritten"
            time.sleep(0.05)
        assert families(path)["sparktui_info"].samples[0].labels["host"] == "spark-1"
    finally:
        stop.set()
        t.join(10)
    assert result == {"code": 0} and sorted(os.listdir(tf)) == ["sparktui.prom"]
