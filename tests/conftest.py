"""Shared fixtures. Every test runs with its own XDG dirs so no developer config or cache leaks in."""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path, monkeypatch):
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        d = tmp_path / var.lower()
        d.mkdir()
        monkeypatch.setenv(var, str(d))
    for var in ("GITHUB_TOKEN", "GH_TOKEN", "SPARKTUI_GITHUB_API"):
        monkeypatch.delenv(var, raising=False)
    yield


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
