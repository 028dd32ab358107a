"""G14 on every excerpt of the public log corpus (tests/data/run_logs/, each with its source in a
manifest), read as `sparktui check G14 --run-log FILE` reads a saved log: the run probe finds no
process writing it (a post-mortem), reads its tail through the parser, and the judge gives the
manifest's status: fail on the error it ended with or a non-finite loss, ok when it finished,
warn when it stops with neither."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.gotchas import REGISTRY
from sparktui.probes import run_log
from sparktui.runner import judge

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA = Path(__file__).resolve().parents[1] / "data" / "run_logs"
ENTRIES = [(name, entry) for m in sorted(DATA.glob("manifest*.toml")) for name, entry in tomllib.loads(m.read_text()).items()]


@pytest.mark.parametrize("name, entry", ENTRIES, ids=[n for n, _ in ENTRIES])
def test_g14_on_a_saved_log_gives_the_manifests_status(name, entry):
    path = str(DATA / f"{name}.log")
    cfg = Config().with_overrides(run={"log": path})
    reading = run_log.read(cfg)
    assert reading.data["alive"] is False and "post-mortem" in reading.data["why"]
    v = judge(REGISTRY["G14"], Readings({"run": reading}), cfg)
    assert v.status.value == entry["status"], f"{name} ({entry['source']}): {v.summary}"
    if entry.get("error"):
        assert v.summary.startswith("died"), v.summary
    elif entry.get("nonfinite") and not entry.get("finished"):
        assert "nan" in v.summary or "inf" in v.summary, v.summary
    assert any(e.what == "log" and path in e.value for e in v.evidence)


def test_the_corpus_is_there():
    assert len(ENTRIES) >= 100
