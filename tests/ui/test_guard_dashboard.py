"""The memory guard in the dashboard (issue 26 item 4): with `[guard] enabled` it runs in its own thread
on a live dashboard, and a trigger is a row in the events view and a notification; never in a replay,
and nothing when it is not enabled."""

from __future__ import annotations

import json
from functools import partial

import pytest

from sparktui.core.config import Config, GuardConfig
from sparktui.core.verdict import Status
from sparktui.flows import guard as flows_guard
from sparktui.ui import guard as ui_guard
from sparktui.ui.app import SparkApp
from sparktui.ui.screens import EventsScreen
from tests.ui.test_dashboard import DEMO, StillSource
from tests.ui.waiting import shows, wait_for


def _standins(tmp_path, monkeypatch, avail_kib: int) -> None:
    (tmp_path / "meminfo").write_text(f"MemTotal:       127535904 kB\nMemAvailable:   {avail_kib} kB\n")
    # /proc/pressure/memory's format (https://docs.kernel.org/accounting/psi.html)
    (tmp_path / "pressure").write_text("some avg10=80.00 avg60=40.00 avg300=10.00 total=123456\n"
                                       "full avg10=55.00 avg60=30.00 avg300=8.00 total=98765\n")
    monkeypatch.setattr(ui_guard, "Guard", partial(flows_guard.Guard, meminfo=str(tmp_path / "meminfo"),
                                                   pressure=str(tmp_path / "pressure")))
    monkeypatch.setattr(ui_guard, "GuardThread", partial(flows_guard.GuardThread, interval_s=0.05))


def _cfg(tmp_path, **kw) -> Config:
    return Config(guard=GuardConfig(**{"enabled": True, "hold_s": 0.2, "action": "stop-unit", "target": "vllm.service",
                                       "audit_log": str(tmp_path / "guard.jsonl"), **kw}))


@pytest.mark.parametrize("size", [(80, 24), (200, 60)])
async def test_a_trigger_is_an_event_and_a_notification(tmp_path, monkeypatch, size):
    _standins(tmp_path, monkeypatch, 1_000_000)  # about 1 GiB available, PSI full 55%
    app = SparkApp(_cfg(tmp_path), source=StillSource(), auto_checks=False)
    async with app.run_test(size=size) as pilot:
        assert app.guard_thread is not None
        row = await wait_for(pilot, lambda: next((c for c in app.events if c.kind == "guard"), None),
                             what="the guard's event")
        assert row.id == "guard" and row.new is Status.WARN  # a dry run: what it would have done
        assert "would run systemctl stop vllm.service" in row.summary and "floor and PSI" in row.summary
        assert any(n.title == "memory guard (dry run)" and n.severity == "warning" for n in app.said)
        await pilot.press("e")
        await shows(pilot, EventsScreen)
        table = app.screen.query_one("#events-table")
        cells = [str(c) for r in range(table.row_count) for c in table.get_row_at(r)]
        assert "guard" in cells
    assert not app.guard_thread._thread.is_alive()  # stopped with the dashboard
    lines = [json.loads(line) for line in (tmp_path / "guard.jsonl").read_text().splitlines()]
    assert any(r["event"] == "action" for r in lines)


async def test_over_the_floor_nothing_is_said(tmp_path, monkeypatch):
    _standins(tmp_path, monkeypatch, 100_000_000)
    app = SparkApp(_cfg(tmp_path), source=StillSource(), auto_checks=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: (tmp_path / "guard.jsonl").exists(), what="the first audit line")
        await pilot.pause(0.3)
        assert not [c for c in app.events if c.kind == "guard"]
        assert not [n for n in app.said if n.title.startswith("memory guard")]


async def test_never_in_a_replay_nor_when_not_enabled(tmp_path, monkeypatch):
    _standins(tmp_path, monkeypatch, 1_000_000)
    app = SparkApp(_cfg(tmp_path), replay=str(DEMO), speed=0, auto_checks=False)
    async with app.run_test(size=(120, 40)):
        assert app.guard_thread is None
    app = SparkApp(_cfg(tmp_path, enabled=False), source=StillSource(), auto_checks=False)
    async with app.run_test(size=(120, 40)):
        assert app.guard_thread is None
    assert not (tmp_path / "guard.jsonl").exists()


async def test_a_guard_that_cannot_act_says_so_and_stays_off(tmp_path, monkeypatch):
    _standins(tmp_path, monkeypatch, 1_000_000)
    app = SparkApp(_cfg(tmp_path, target=None), source=StillSource(), auto_checks=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert app.guard_thread is None
        assert any("the memory guard is off" in n.message and "needs [guard] target" in n.message for n in app.said)
