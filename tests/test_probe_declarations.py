"""One declaration per probe (issue 23, item 3): each probe module says what it reads
(``PROBES = (Probe(shapes.KEY, read),)``); the registry, the cancellable set, SHAPES and the typed
lookups are derived from those declarations and the keys of core/shapes.py, and must agree."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import is_typeddict

import pytest

from sparktui import probes
from sparktui.core import shapes
from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.probes import container, kernel_log, tpscan

REPO = Path(__file__).resolve().parents[1]
PROBES_DIR = REPO / "src" / "sparktui" / "probes"


def test_every_key_is_named_once_and_shaped_by_a_typeddict():
    names = [k.name for k in shapes.KEYS]
    assert len(names) == len(set(names))
    assert all(is_typeddict(k.shape) for k in shapes.KEYS)
    assert shapes.SHAPES == {k.name: k.shape for k in shapes.KEYS}  # derived: nothing added beside the keys


def test_every_probe_fills_a_key_and_every_key_but_a_result_has_exactly_one_probe():
    declared = probes.declarations()
    named = [p.name for p in declared]
    assert len(named) == len(set(named)), "two probes fill the same reading"
    assert all(p.key in shapes.KEYS for p in declared)
    assert shapes.RESULT_ONLY <= set(shapes.SHAPES) and not shapes.RESULT_ONLY & set(named)
    assert sorted(named) == sorted(set(shapes.SHAPES) - shapes.RESULT_ONLY)


def test_the_registry_names_and_the_cancellable_set_come_from_the_declarations():
    declared = probes.declarations()
    assert probes.names() == [p.name for p in declared]
    assert list(probes._registry()) == probes.names()
    assert probes.cancellable() == {p.name for p in declared if p.cancellable} == {"target", "telemetry", "tpscan"}
    assert probes.CANCELLABLE == probes.cancellable()  # the old constant still reads
    assert probes._registry()["kernel_log"] is kernel_log.read
    assert probes._registry()["meminfo"].__name__ == "read_meminfo"


def test_a_probe_declared_cancellable_takes_cancel_and_the_others_do_not():
    for p in probes.declarations():
        params = inspect.signature(p.read).parameters
        assert ("cancel" in params) == p.cancellable, p.name
        first = next(iter(params))
        assert first == "cfg", f"{p.name}: a reader takes the Config first"


def test_every_module_that_declares_probes_is_in_the_registry():
    """Adding a probe is its module plus one import in probes/__init__.py: a module whose PROBES
    the registry does not import would never run."""
    declaring = {f.stem for f in PROBES_DIR.glob("*.py") if re.search(r"^PROBES = \(", f.read_text(), re.M)}
    from_modules = {p.read.__module__.rsplit(".", 1)[1] for p in probes.declarations()}
    assert declaring == from_modules


def test_every_reading_a_check_names_has_a_key():
    """A check's ``probes`` (and what enriches it) name readings that exist: a key of core/shapes.py."""
    from sparktui.gotchas import REGISTRY

    for gid, g in REGISTRY.items():
        assert set(g.probes) <= set(shapes.SHAPES), f"{gid}: {set(g.probes) - set(shapes.SHAPES)} has no key"


def test_the_registry_is_built_by_plain_imports():
    source = (PROBES_DIR / "__init__.py").read_text()
    assert "__import__(" not in source and "importlib" not in source


def test_safe_read_hands_cancel_to_a_cancellable_probe(monkeypatch):
    seen: list[object] = []

    def read(cfg, cancel=None):  # replaced on the module: the declaration finds it there
        seen.append(cancel)
        return Reading("tpscan", None, error="stand-in", started_at=1.0)

    monkeypatch.setattr(tpscan, "read", read)
    stop = threading.Event()
    assert probes.safe_read("tpscan", Config(), stop).error == "stand-in"
    assert probes.safe_read("tpscan", Config()).error == "stand-in"
    assert seen == [stop, None]


def test_safe_read_does_not_hand_cancel_to_a_probe_that_takes_none(monkeypatch):
    calls: list[tuple[object, ...]] = []

    def read(*args, **kwargs):
        calls.append(args + tuple(kwargs))
        return Reading("container", None, error="stand-in", started_at=1.0)

    monkeypatch.setattr(container, "read", read)
    assert probes.safe_read("container", Config(), threading.Event()).error == "stand-in"
    assert len(calls) == 1 and len(calls[0]) == 1  # the Config alone


def test_safe_read_of_an_undeclared_probe_and_of_a_crashing_one(monkeypatch):
    assert probes.safe_read("no_such", Config()).error == "no such probe 'no_such'"

    def boom(cfg):
        raise RuntimeError("broken")

    monkeypatch.setattr(container, "read", boom)
    r = probes.safe_read("container", Config())
    assert r.data is None and r.error == "probe crashed: RuntimeError: broken"


def test_readings_are_read_by_key_or_by_name_alike():
    data = {"MemTotal": 1 << 30}
    r = Readings({"meminfo": Reading("meminfo", data, started_at=1.0)})
    assert r.data(shapes.MEMINFO) is r.data("meminfo") is data
    assert r.get_reading(shapes.MEMINFO) is r.get_reading("meminfo")
    missing = r.get_reading(shapes.KERNEL_LOG)
    assert missing.data is None and missing.error == "probe 'kernel_log' was not run"
    assert r.data(shapes.LINK) is None


def test_mypy_checks_a_judge_read_through_a_typed_key(tmp_path):
    """``r.data(MEMINFO)`` is a MemInfoReading to mypy: a key the probe does not declare is an
    error, a declared one and a plain name (Any) are not."""
    pytest.importorskip("mypy")
    module = tmp_path / "typed_read.py"
    module.write_text(
        "from sparktui.core.readings import Readings\n"
        "from sparktui.core.shapes import MEMINFO\n\n\n"
        "def bad(r: Readings) -> object:\n"
        "    return (r.data(MEMINFO) or {})['NoSuchKey']\n\n\n"
        "def good(r: Readings) -> object:\n"
        "    return (r.data(MEMINFO) or {}).get('MemTotal'), r.data('meminfo'), r.get_reading(MEMINFO).error\n"
    )
    proc = subprocess.run([sys.executable, "-m", "mypy", str(module)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    errors = [ln for ln in proc.stdout.splitlines() if ": error:" in ln]
    assert len(errors) == 1, proc.stdout + proc.stderr
    assert "typed_read.py:6:" in errors[0] and '"NoSuchKey"' in errors[0]
