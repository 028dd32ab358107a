"""The session-long trend behind the dashboard's plots once the full-rate history wraps."""

from __future__ import annotations

from pathlib import Path

from sparktui.core.config import Config
from sparktui.core.telemetry import History, Trend
from tests.ui.waiting import loaded, wait_for

DEMO = Path(__file__).resolve().parents[1] / "src" / "sparktui" / "data" / "gb10-demo.jsonl"


def sample(t: float, temp: float, sm: float, avail: int) -> dict:
    return {"t": t, "gpus": [{"index": 0, "temp_c": temp, "power_w": temp / 2, "sm_mhz": sm}],
            "mem": {"MemTotal": 100, "MemAvailable": avail}}


def test_a_point_a_minute_keeps_the_extreme_that_matters():
    h = History(10_000)
    for i in range(180):  # three minutes at 1 Hz; one hot, slow, tight second in the middle one
        spike = i == 90
        h.append(sample(600.0 + i, 95.0 if spike else 70.0, 800.0 if spike else 2400.0, 5 if spike else 60))
    tr = h.trend
    assert tr.values("g0.temp_c") == [70.0, 95.0, 70.0]  # the last is the current, open minute
    assert tr.values("g0.sm_mhz") == [2400.0, 800.0, 2400.0]
    assert tr.values("mem.MemAvailable") == [60, 5, 60]
    assert tr.first_t == 600.0


def test_minutes_without_samples_are_gaps_and_the_trend_is_bounded():
    tr = Trend(bucket_s=60.0, maxlen=50)
    tr.add(0.0, {"g0.temp_c": 50.0})
    tr.add(300.0, {"g0.temp_c": 60.0})  # paused for four minutes
    assert tr.values("g0.temp_c") == [50.0, None, None, None, None, 60.0]
    for m in range(6, 500):
        tr.add(60.0 * m, {"g0.temp_c": float(m)})
    assert len(tr.series["g0.temp_c"]) == 50 and tr.values("g0.temp_c")[-1] == 499.0


def test_plots_switch_to_the_trend_once_the_history_wraps():
    h = History(100)
    for i in range(100):
        h.append(sample(float(i), 50.0, 2400.0, 60))
    assert not h.wrapped and len(h.plotted("g0.temp_c")) == 100  # every sample while they fit
    for i in range(100, 400):
        h.append(sample(float(i), 50.0 + (i == 5), 2400.0, 60))
    assert h.wrapped and h.plotted("g0.temp_c") == h.trend.values("g0.temp_c")
    assert len(h.plotted("g0.temp_c")) == 7  # 400 s: minutes 0..6, reaching back to the start
    assert h.plotted("g0.mem_mhz") == h.values("g0.mem_mhz")  # not trended: the ring buffer


async def test_the_dashboard_says_when_it_plots_a_point_a_minute():
    from sparktui.ui.app import SparkApp

    cfg = Config().with_overrides(telemetry={"history": 50})  # the 25-min demo wraps it
    app = SparkApp(cfg, replay=str(DEMO), speed=None)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        note = str(app.query_one("#telemetry-note").render())
        assert "plots: last 5 min, a point a minute (w)" in note, note  # 50 samples at 5 s: 4 min in the ring
        await pilot.press("w", "w")  # 1 h, then the whole session
        await wait_for(pilot, lambda: "plots: session" in str(app.query_one("#telemetry-note").render()),
                       what="the plots over the session", state=lambda: str(app.query_one("#telemetry-note").render()))
        note = str(app.query_one("#telemetry-note").render())
        assert "plots: session 0h25m, a point a minute (w)" in note, note


def test_each_minute_keeps_its_other_extreme_too():
    """The plot draws the extreme that matters; the min-max text needs the other one: the coolest
    reading of a night is not the hottest minute's max."""
    h = History(10_000)
    for i in range(120):  # minute 0 swings 40..70 °C, minute 1 steady at 60
        h.append(sample(600.0 + i, (40.0 if i % 2 else 70.0) if i < 60 else 60.0, 2400.0 - i, 60 - (i == 30)))
    tr = h.trend
    assert tr.values("g0.temp_c")[:2] == [70.0, 60.0]
    assert tr.other_values("g0.temp_c")[:2] == [40.0, 60.0]
    assert tr.other_values("g0.sm_mhz")[0] == 2400.0  # min kept; the other is the max
    assert tr.other_values("mem.MemAvailable")[0] == 60
