"""Shared fixtures. Every test runs with its own XDG dirs so no developer config or cache leaks in."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# A shell starts background jobs (`tools/soak_tests.sh &`, nohup, some CI runners) with SIGINT
# ignored, and an ignored signal stays ignored across exec: every sparktui the Ctrl-C tests start
# would then shrug off their SIGINT. Restore the default here (each xdist worker imports this), so
# those tests hold however pytest was launched.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Property tests are derandomized: the same examples every run, so a failure reproduces and CI
# cannot flake on a lucky draw. No example database (CI starts clean; nothing to replay).
settings.register_profile("sparktui", derandomize=True, database=None, deadline=None, max_examples=150,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "sparktui"))

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path, monkeypatch):
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        d = tmp_path / var.lower()
        d.mkdir()
        monkeypatch.setenv(var, str(d))
    for var in ("GITHUB_TOKEN", "GH_TOKEN", "SPARKTUI_GITHUB_API", "SPARKTUI_GITHUB_TOKEN_HOST"):
        monkeypatch.delenv(var, raising=False)
    # a terminal's size is the test's to set: pytest-xdist's workers (and anything that imported
    # readline) carry COLUMNS=80 LINES=24, which would make piped CLI output wrap in some runs only
    # (GNU readline sets them with setenv, past os.environ: unset at the C level too, or a child
    # process started with the inherited environment still sees them)
    for var in ("COLUMNS", "LINES"):
        monkeypatch.delenv(var, raising=False)
        os.unsetenv(var)
    yield


@pytest.fixture(scope="session")
def _roomy_meminfo(tmp_path_factory) -> str:
    p = tmp_path_factory.mktemp("meminfo") / "meminfo"
    p.write_text("MemTotal:       127611680 kB\nMemFree:         3145728 kB\nMemAvailable:   89128960 kB\n")
    return str(p)


@pytest.fixture(autouse=True)
def probes_read_in_process():
    """A test that ran the dashboard's start (runner.long_lived) leaves the probes in-process again."""
    yield
    from sparktui import probes

    probes.isolate(False)


@pytest.fixture(autouse=True)
def roomy_memory_for_the_smoke_test(_roomy_meminfo, monkeypatch):
    """G1's smoke test is gated on MemAvailable (probes/target.py smoke_gate): the machine running
    the tests (a CI runner of 7 GB) never decides it; tests of the gate point it elsewhere."""
    from sparktui.probes import target

    monkeypatch.setattr(target, "MEMINFO", _roomy_meminfo)


@pytest.fixture
def cfg() -> Config:
    return Config()


def readings_of(**data) -> Readings:
    """Readings from plain dicts: ``readings_of(target={...}, nvml=None)``; None = unavailable."""
    r = Readings()
    for name, value in data.items():
        if isinstance(value, Reading):
            r.add(value)
        elif value is None:
            r.add(Reading(name, None, error=f"{name} unavailable (test)", source=name, started_at=1.0))
        else:
            r.add(Reading(name, value, source=name, started_at=1.0, took_s=0.01))
    return r


TORCH_VENV = os.environ.get("SPARKTUI_TEST_TORCH_VENV", "/tmp/sparktui-test-torch-2.13.0")


@pytest.fixture(scope="session")
def torch_venv_python() -> str:
    """A real virtualenv with torch 2.13.0's CPU build, built once and shared (file-locked for xdist)."""
    root = Path(TORCH_VENV)
    py = root / "bin" / "python"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(str(root) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ok = py.exists() and subprocess.run([str(py), "-c", "import torch"], capture_output=True).returncode == 0
        if not ok:
            subprocess.run([sys.executable, "-m", "venv", "--clear", str(root)], check=True)
            # The CPU build by name: on x86_64, PyPI's plain torch==2.13.0 is a CUDA build, which a
            # GPU machine would then use, and the test is about a CPU-only torch.
            proc = subprocess.run([str(py), "-m", "pip", "install", "-q", "torch==2.13.0+cpu"], capture_output=True, text=True)
            if proc.returncode != 0:
                pytest.fail("could not build the torch CPU venv (offline? give pip https://download.pytorch.org/whl/cpu "
                            "in PIP_EXTRA_INDEX_URL, or a ready venv in SPARKTUI_TEST_TORCH_VENV): " + proc.stderr[-2000:])
    return str(py)


@pytest.fixture
def kids(tmp_path):
    """Real child processes with server- or trainer-like argv (tests/standins/children.py)."""
    from tests.standins.children import Children

    bindir = tmp_path / "bin"
    bindir.mkdir()
    c = Children(bindir)
    yield c
    c.close()


pytest_plugins = ["tests.ci_guard"]  # under CI a skip is a failure (see tests/ci_guard.py)
