"""The dashboard reads G10's scan and G8's fetch in child processes (probes/isolated.py): what
they allocate while they work would stay in its heap for days (+11.8 MB after one scan, +13.3 MB
after one fetch, measured after gc and malloc_trim). A child gives the same reading as the probe
read in-process; its crash, hang, garbage or cancel is a failed reading that says so, with no
process left behind."""

from __future__ import annotations

import os
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from sparktui import probes, runner
from sparktui.core import children
from sparktui.core.config import Config, ScanConfig
from sparktui.probes import isolated
from sparktui.probes.declared import Probe

LAUNCH = "torchrun --nnodes 2 --nproc-per-node 1 train.py --tensor-parallel-size 2\n"


def _project(tmp_path: Path) -> Config:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "launch.sh").write_text(LAUNCH)
    (proj / "\x1b]2;T\x07odd.sh").write_text(LAUNCH)  # outside text in a file name survives the trip
    return Config(scan=ScanConfig(paths=[str(proj)]))


def _comparable(reading):
    data = dict(reading.data)
    data.pop("scan_s", None)  # how long it took
    return data


def test_a_child_reads_what_the_probe_reads_here(tmp_path):
    cfg = _project(tmp_path)
    here = probes.safe_read("tpscan", cfg, isolated=False)
    there = probes.safe_read("tpscan", cfg, isolated=True)
    assert there.error is None and here.error is None
    assert _comparable(there) == _comparable(here)
    assert sorted(Path(m["file"]).name for m in there.data["matches"]) == ["\x1b]2;T\x07odd.sh", "launch.sh"]
    assert there.source == here.source


def test_the_dashboards_start_sends_the_declared_probes_to_a_child(tmp_path, monkeypatch):
    cfg = _project(tmp_path)
    sent: list[str] = []
    real = isolated.read_in_child
    monkeypatch.setattr(isolated, "read_in_child", lambda probe, *a, **k: sent.append(probe.name) or real(probe, *a, **k))
    probes.safe_read("tpscan", cfg)
    assert sent == []  # a one-shot command reads in-process
    runner.long_lived()
    reading = probes.safe_read("tpscan", cfg)
    probes.safe_read("host", cfg)  # not declared isolated: still here
    assert sent == ["tpscan"] and reading.error is None
    declared = {p.name for p in probes.declarations() if p.isolated}
    assert declared == {"tpscan", "playbook_issues"}


BAD = '''
import os, signal, sys, time
from sparktui.core import shapes
from sparktui.core.readings import Reading
from sparktui.probes.declared import Probe


def crash(cfg):
    os.kill(os.getpid(), signal.SIGSEGV)


def hang(cfg):
    open(os.environ["BAD_PIDFILE"], "w").write(str(os.getpid()))
    time.sleep(600)


def garbage(cfg):
    sys.stdout.write("not a reading")
    sys.stdout.flush()
    os._exit(0)


def loud_exit(cfg):
    sys.stderr.write("x" * 200000 + "\\nsomething broke\\nlast words here\\n")  # a flood: only its tail is kept
    os._exit(3)


PROBES = (Probe(shapes.TPSCAN, crash), Probe(shapes.HOST, hang), Probe(shapes.PINS, garbage), Probe(shapes.POOL, loud_exit))
'''


@pytest.fixture
def bad_probes(tmp_path, monkeypatch):
    (tmp_path / "bad_probes.py").write_text(textwrap.dedent(BAD))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("BAD_PIDFILE", str(tmp_path / "pid"))
    sys.path.insert(0, str(tmp_path))
    try:
        import bad_probes

        yield {p.read.__name__: p for p in bad_probes.PROBES}, tmp_path / "pid"
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("bad_probes", None)


def _only(probes_by_name, fn_name) -> Probe:
    p = probes_by_name[fn_name]
    return Probe(p.key, p.read)


def test_a_crash_in_the_child_is_a_reading_that_names_it(bad_probes):
    by_name, _ = bad_probes
    r = isolated.read_in_child(_only(by_name, "crash"), Config())
    assert r.data is None and "killed by SIGSEGV" in r.error, r.error
    r = isolated.read_in_child(_only(by_name, "loud_exit"), Config())
    assert r.data is None and "exited with status 3: last words here" in r.error, r.error
    assert len(r.error) < 100 + isolated.STDERR_KEPT
    r = isolated.read_in_child(_only(by_name, "garbage"), Config())
    assert r.data is None and "printed no reading" in r.error, r.error
    assert children.running() == []


def test_cancel_and_timeout_stop_the_child_and_leave_nothing_running(bad_probes):
    by_name, pidfile = bad_probes
    cancel = threading.Event()
    threading.Timer(1.5, cancel.set).start()
    t0 = time.monotonic()
    r = isolated.read_in_child(_only(by_name, "hang"), Config(), cancel)
    assert r.error == "cancelled" and time.monotonic() - t0 < 10
    assert not psutil.pid_exists(int(pidfile.read_text())) or psutil.Process(int(pidfile.read_text())).status() == "zombie"
    pidfile.unlink()
    r = isolated.read_in_child(_only(by_name, "hang"), Config(), timeout_s=1.0)
    assert "did not finish within 1 s" in r.error
    assert children.running() == []
