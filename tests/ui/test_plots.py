"""Telemetry plots that read: physical scales, time on the x axis, n/a as a gap with its reason,
min/max/current/span in words, a span kept across runs, taller plots where there is room; power
against the rating G4 uses, the scale's bounds and time ticks, GPU utilisation, the pool stacked as
G3 attributes it, and plots that fill the room in both layouts (issue 24, Seen 4 and 11)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from textual.geometry import Region

from sparktui.core.config import Config
from sparktui.core.telemetry import GIB, History
from sparktui.live import QuietSource
from sparktui.ui.app import SparkApp
from sparktui.ui.widgets.meter import Meter
from tests.ui.waiting import loaded, screen_text, wait_for

T0 = 1_764_000_000.0
MEM_TOTAL = 128 * GIB


def sample(t: float, temp: float | None = 60.0, power: float | None = 40.0, sm: float | None = 2400.0,
           avail: float = 100 * GIB, util: float | None = 50.0) -> dict:
    errors = {"temp_c": "NOT_SUPPORTED (Not Supported)"} if temp is None else {}
    return {"t": t, "gpus": [{"index": 0, "temp_c": temp, "power_w": power, "sm_mhz": sm, "util_gpu": util, "reasons": [],
                              "errors": errors}],
            "mem": {"MemTotal": MEM_TOTAL, "MemAvailable": avail, "MemFree": avail, "Buffers": 0, "Cached": GIB,
                    "Shmem": 0, "AnonPages": 10 * GIB}}


class FilledSource(QuietSource):
    """A live-like source whose history the test fills; it never samples by itself."""

    label = "test"

    def __init__(self, samples: list[dict], maxlen: int = 3600, static: dict | None = None) -> None:
        super().__init__(History(maxlen), static)
        self.history.extend(samples)


def steady(seconds: int, **kw) -> list[dict]:
    return [sample(T0 + i, **kw) for i in range(seconds)]


async def show(app, pilot) -> None:
    await wait_for(pilot, lambda: app.telemetry.temp.plot.size.width, what="the plots laid out")
    app._draw_telemetry()
    await pilot.pause()


async def note_says(pilot, text: str) -> None:
    note = pilot.app.telemetry.note
    await wait_for(pilot, lambda: text in str(note.render()), what=f"the plots' note saying {text!r}",
                   state=lambda: str(note.render()))


def lines(meter: Meter) -> list[str]:
    """What the meter's plot shows, axes included, row by row (top first)."""
    plot = meter.plot
    w, h = plot.size.width, plot.size.height
    return ["".join(seg.text for seg in strip) for strip in plot.render_lines(Region(0, 0, w, h))]


def rows(meter: Meter) -> list[str]:
    """The bars alone (no bounds at the left, no time ticks under them), row by row (top first)."""
    gutter, bars, _ = meter.plot.layout_of(meter.plot.size.width, meter.plot.size.height)
    return [line[gutter:] for line in lines(meter)[:bars]]


def app_with(samples: list[dict], **kw) -> SparkApp:
    return SparkApp(Config(), source=FilledSource(samples, **kw), auto_checks=False)


async def test_a_steady_value_draws_a_flat_line_on_the_physical_scale():
    app = app_with(steady(300, temp=60.0, power=70.0))
    async with app.run_test(size=(200, 60)) as pilot:
        await show(app, pilot)
        temp, power = rows(app.telemetry.temp), rows(app.telemetry.power)
        assert len(temp) >= 3
        for r in temp + power:
            assert len(set(r)) == 1, r  # every column the same: a flat line, no noise
        # 60 °C is half of the 20-100 band, 70 W half of the 140 W rating: half the rows' eighths
        assert [r[0] for r in temp] == [r[0] for r in power]
        for plot in (app.telemetry.temp.plot, app.telemetry.power.plot):
            width, height = plot.area()
            assert set(plot.eighths(width, height)) == {round(height * 8 / 2)}


async def test_42_to_43_degrees_is_a_small_step_not_a_cliff():
    app = app_with([sample(T0 + i, temp=42.0 if i < 150 else 43.0) for i in range(300)])
    async with app.run_test(size=(200, 60)) as pilot:
        await show(app, pilot)
        levels = app.telemetry.temp.plot.eighths(*app.telemetry.temp.plot.area())
        assert max(levels) - min(levels) <= 1, levels  # one degree of an 80-degree band: at most an eighth of a row
        assert max(levels) <= app.telemetry.temp.plot.area()[1] * 8 // 3  # and far from the top
    app = app_with([sample(T0 + i, temp=42.0 if i < 150 else 43.0) for i in range(300)])
    async with app.run_test(size=(80, 24)) as pilot:  # one row: the same line, no cliff either
        await show(app, pilot)
        (line,) = rows(app.telemetry.temp)
        assert set(line) == {"▂"}, line  # 42 and 43 °C: both 2.2-2.3 eighths of 20-100


async def test_na_is_a_gap_with_its_reason_not_a_baseline():
    samples = [sample(T0 + i, temp=None if 200 <= i < 300 else 55.0) for i in range(300)]
    app = app_with(samples)
    async with app.run_test(size=(200, 60)) as pilot:
        await show(app, pilot)
        meter = app.telemetry.temp
        assert meter.text.startswith("n/a (not supported)")
        bottom = rows(meter)[-1]
        gap = bottom[len(bottom) * 2 // 3 + 2:]  # the last third of the window: n/a
        assert gap and set(gap) == {" "}, bottom
        assert set(bottom[:len(bottom) * 2 // 3 - 2]) == {"█"}  # the readings before it still drawn


async def test_the_first_sample_fills_one_column_not_the_width():
    app = app_with([sample(T0)])
    async with app.run_test(size=(200, 60)) as pilot:
        await show(app, pilot)
        for meter in (app.telemetry.temp, app.telemetry.power, app.telemetry.mem):
            bottom = rows(meter)[-1]
            assert bottom[-1] != " " and set(bottom[:-1]) == {" "}, bottom  # the newest column only, on the right


async def test_value_min_max_and_span_are_written_with_units():
    samples = [sample(T0 + i, temp=40.0 + (i % 33), power=10.0 + i / 10, sm=1800.0 + i,
                      avail=(100 - i / 30) * GIB) for i in range(300)]
    app = app_with(samples)
    async with app.run_test(size=(200, 60)) as pilot:
        await show(app, pilot)
        t = app.telemetry
        assert t.temp.text == "42 °C  40–72 °C  last 5 min"
        assert t.power.text == "39.9 W / 140 W  10–40 W  last 5 min"
        assert t.clock.text == "2099 MHz  1800–2099 MHz  last 5 min"
        assert t.mem.text.startswith("used 38.0 GiB  avail 90.0 GiB  of 128.0 GiB (as free)"), t.mem.text
    app = app_with(samples)
    async with app.run_test(size=(80, 24)) as pilot:  # compact: value and range; the span once, below
        await show(app, pilot)
        assert app.telemetry.temp.text == "42 °C  40–72 °C"
        assert app.telemetry.clock.text == "2099 MHz  1800–2099 MHz"
        assert "plots: last 5 min (w)" in str(app.telemetry.note.render())


async def test_g_cycles_the_span_and_a_new_app_starts_with_it(tmp_path):
    samples = steady(600)
    app = app_with(samples)
    async with app.run_test(size=(80, 24)) as pilot:
        await show(app, pilot)
        assert "last 5 min" in str(app.telemetry.note.render())
        await pilot.press("w")
        await note_says(pilot, "plots: last 1 h (w)")
    state = tmp_path / "xdg_state_home" / "sparktui" / "prefs.json"
    assert json.loads(state.read_text())["plot_span"] == "1h"
    app = app_with(samples)
    async with app.run_test(size=(200, 60)) as pilot:
        await show(app, pilot)
        assert "plots: last 1 h (w)" in str(app.telemetry.note.render())
        assert app.telemetry.temp.text.endswith("last 1 h")
        await pilot.press("w")
        await note_says(pilot, "plots: session 0h09m (w)")
        await pilot.press("w")
        await note_says(pilot, "plots: last 5 min (w)")
    assert json.loads(state.read_text())["plot_span"] == "5m"


async def test_a_span_that_cannot_be_kept_is_said_and_still_changes(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the state folder should be")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocked))
    app = app_with(steady(60))
    async with app.run_test(size=(80, 24)) as pilot:
        await show(app, pilot)
        await pilot.press("w")
        await note_says(pilot, "plots: last 1 h")
        notes = [n.message for n in app.said]
        assert any("preferences not kept" in m for m in notes), notes


async def test_plots_are_taller_at_200x60_than_at_80x24():
    heights = {}
    for size in ((80, 24), (200, 60)):
        app = app_with(steady(120))
        async with app.run_test(size=size) as pilot:
            await show(app, pilot)
            heights[size] = [m.plot.size.height for m in app.query(Meter)]
            assert rows(app.telemetry.temp)[-1].strip(), size  # drawn, not an empty box
    assert heights[(80, 24)] == [1] * 5
    assert min(heights[(200, 60)]) >= 3, heights


async def test_a_long_span_reaches_back_through_the_per_minute_trend():
    """Two hours at 1 Hz, a ring buffer of 10 minutes: the hour plot still shows the hot
    stretch 40-35 minutes ago, from the trend (a point a minute)."""
    samples = [sample(T0 + i, temp=90.0 if 4800 <= i < 5100 else 45.0) for i in range(7200)]
    app = app_with(samples, maxlen=600)
    async with app.run_test(size=(200, 60)) as pilot:
        app.telemetry.span = "1h"
        await show(app, pilot)
        assert "plots: last 1 h, a point a minute (w)" in str(app.telemetry.note.render())
        assert app.telemetry.temp.text == "45 °C  45–90 °C  last 1 h"
        levels = app.telemetry.temp.plot.eighths(*app.telemetry.temp.plot.area())
        hot = [i for i, e in enumerate(levels) if e == max(levels)]
        width = len(levels)
        # 40 to 35 minutes before the end of a 60-minute window: about a twelfth of the width, a third in
        assert hot and abs(hot[0] - width * 20 // 60) <= 2 and abs(len(hot) - width * 5 // 60) <= 2, (hot, width)
        assert None not in levels  # the whole hour drawn, though the ring holds 10 minutes
        app.telemetry.span = "5m"  # the ring covers it: every sample, no trend
        await show(app, pilot)
        assert "a point a minute" not in str(app.telemetry.note.render())


async def test_the_utilisation_plot_reaches_back_through_the_trend_too():
    """Two hours, a 10-minute ring: the hour's utilisation plot shows the busy stretch 40-35 minutes
    ago (the trend keeps each minute's busiest moment), not a blank before the ring."""
    samples = [sample(T0 + i, util=100.0 if 4800 <= i < 5100 else 5.0) for i in range(7200)]
    app = app_with(samples, maxlen=600)
    async with app.run_test(size=(200, 60)) as pilot:
        app.telemetry.span = "1h"
        await show(app, pilot)
        plot = app.telemetry.util.plot
        levels = plot.eighths(*plot.area())
        assert None not in levels and app.telemetry.util.text.startswith("5 %  5–100 %"), app.telemetry.util.text
        busy = [i for i, e in enumerate(levels) if e == max(levels)]
        assert busy and abs(busy[0] - len(levels) * 20 // 60) <= 2, (busy, len(levels))


async def test_a_long_span_says_its_true_minimum_not_the_lowest_minutes_maximum():
    """Two hours swinging 40/70 °C every second, a 10-minute ring: the hour's min-max from the
    trend is 40-70, not 70-70 (each minute's max alone)."""
    samples = [sample(T0 + i, temp=40.0 if i % 2 else 70.0) for i in range(7200)]
    app = app_with(samples, maxlen=600)
    async with app.run_test(size=(200, 60)) as pilot:
        app.telemetry.span = "1h"
        await show(app, pilot)
        assert "a point a minute" in str(app.telemetry.note.render())
        assert "40–70 °C" in app.telemetry.temp.text


async def test_the_clock_plot_tops_out_at_the_device_max_where_it_is_known():
    known = {"devices": [{"index": 0, "max_sm_mhz": {"value": 3000.0}}]}
    for static, level in ((known, "▆"), (None, "█")):
        app = app_with(steady(60, sm=2250.0), static=static)
        async with app.run_test(size=(80, 24)) as pilot:
            await show(app, pilot)
            (line,) = rows(app.telemetry.clock)
            assert line.strip() and set(line.strip()) == {level}, (static, line)


async def test_the_plot_follows_a_theme_change():
    """Colours are read once per style change: a new theme must still reach the bars."""
    app = app_with(steady(60))
    async with app.run_test(size=(80, 24)) as pilot:
        await show(app, pilot)
        plot = app.telemetry.temp.plot

        def bar_colour():
            (strip,) = plot.render_lines(Region(0, 0, plot.size.width, 1))
            return next(seg.style.color for seg in strip if seg.text.strip())

        before = bar_colour()
        app.theme = "textual-light" if app.theme != "textual-light" else "nord"
        await wait_for(pilot, lambda: bar_colour() != before, what="the bars in the new theme's colour",
                       state=lambda: (before, bar_colour()))


async def test_unsampled_time_is_blank_but_slow_sampling_is_not_dashed():
    """A pause of 100 s draws as a gap; samples 5 s apart in columns 4.4 s wide draw unbroken."""
    paused = [sample(T0 + i) for i in (*range(0, 100), *range(200, 300))]
    slow = [sample(T0 + i) for i in range(0, 300, 5)]
    for samples, interval, blank in ((paused, 1.0, True), (slow, 5.0, False)):
        app = app_with(samples)
        app.source.interval_s = interval
        async with app.run_test(size=(200, 60)) as pilot:
            await show(app, pilot)
            bottom = rows(app.telemetry.temp)[-1]
            third = len(bottom) // 3
            assert (set(bottom[third + 2:2 * third - 2]) == {" "}) is blank, bottom
            assert " " not in bottom[2:third - 2] + bottom[2 * third + 2:], bottom


async def test_a_reading_outside_the_band_widens_it_instead_of_clipping():
    app = app_with([sample(T0 + i, temp=120.0 if i == 299 else 60.0) for i in range(300)])
    async with app.run_test(size=(200, 60)) as pilot:
        await show(app, pilot)
        plot = app.telemetry.temp.plot
        levels = plot.eighths(*plot.area())
        top = plot.area()[1] * 8
        assert levels[-1] == top  # 120 °C: the top of a band now 20-120 °C
        assert levels[0] == round(40 / 100 * top)  # 60 °C on that band, not on 20-100


def test_a_series_shorter_than_its_times_is_n_a_at_its_start_not_a_crash():
    """A field never read in this session (values []) beside 10 sample times: blank columns.
    Seen: the restored-session dashboard died with IndexError in time_columns."""
    from sparktui.ui.widgets.plot import time_columns, window_range

    times = [float(t) for t in range(10)]
    assert time_columns(times, [], 0.0, 10.0, 14) == [None] * 14
    assert window_range(times, [], 0.0) is None
    cols = time_columns(times, [5.0, 6.0], -0.5, 9.5, 10)  # the two newest readings only
    assert cols[-2:] == [5.0, 6.0] and cols[:8] == [None] * 8
    assert window_range(times, [1.0] * 12, 0.0) == (1.0, 1.0)  # longer: the newest ones count


# -- issue 24: the rating G4 uses, axes, utilisation, the pool stacked, room in every layout --------

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "src" / "sparktui" / "data" / "gb10-demo.jsonl"
H200 = ROOT / "tests" / "data" / "h200" / "load-matmul-counters.jsonl"  # a real H200 under load, 700 W limit
H200_OLD = ROOT / "tests" / "data" / "h200" / "load-matmul.jsonl"  # recorded before AnonPages was read


def h200_until_692w(tmp_path) -> Path:
    """The H200 recording cut at the first sample that reads 692.8 W (the moment issue 24 quotes)."""
    out, kept = tmp_path / "h200-692w.jsonl", []
    for line in H200.read_text().splitlines():
        kept.append(line)
        row = json.loads(line)
        if row.get("type") == "sample" and round(row["gpus"][0]["power_w"], 1) == 692.8:
            break
    out.write_text("\n".join(kept) + "\n")
    return out


def replay(path: Path) -> SparkApp:
    return SparkApp(Config(), replay=str(path), speed=None)


async def replayed(pilot) -> None:
    await loaded(pilot)
    pilot.app._draw_telemetry()
    await pilot.pause()


async def stacked(pilot) -> None:
    """L until the layout is stacked (auto -> side by side -> stacked)."""
    for _ in range(3):
        if pilot.app.prefs.layout == "narrow":
            break
        await pilot.press("L")
    await wait_for(pilot, lambda: pilot.app.has_class("narrow"), what="the stacked layout")
    await pilot.pause()
    pilot.app._draw_telemetry()
    await pilot.pause()


async def test_power_is_plotted_against_the_rating_g4_uses_with_its_unit(tmp_path):
    """Seen: `power 692.8 W / 140`, pinned at full height, on an H200 whose NVML limit is 700 W."""
    app = replay(h200_until_692w(tmp_path))
    async with app.run_test(size=(200, 60)) as pilot:
        await replayed(pilot)
        power = app.telemetry.power
        assert power.text.startswith("692.8 W / 700 W"), power.text
        assert "700 W┤" in lines(power)[0]  # the scale's top is the rating
        assert power.plot.bounds(*power.plot.area()) == (0.0, 700.0)  # the rating, not 140 W widened to the peak
        levels = [e for e in power.plot.eighths(*power.plot.area()) if e is not None]
        assert min(levels) == round(79 / 700 * power.plot.area()[1] * 8)  # idle 79 W: a ninth of 700 W
    app = replay(h200_until_692w(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:  # stacked, one row: the same words, whole
        await replayed(pilot)
        assert app.telemetry.power.text.startswith("692.8 W / 700 W"), app.telemetry.power.text
        assert "692.8 W / 700 W" in screen_text(app)
    app = replay(DEMO)  # a GB10: NVML gives no limit, the configured rating (with its unit)
    async with app.run_test(size=(80, 24)) as pilot:
        await replayed(pilot)
        assert app.telemetry.power.text.startswith("75.5 W / 140 W"), app.telemetry.power.text
        assert not re.search(r"W / \d+(?! W)\b", screen_text(app))  # never a rating without its unit


async def test_plots_show_their_bounds_and_time_ticks_and_gpu_utilisation(tmp_path):
    app = replay(h200_until_692w(tmp_path))
    async with app.run_test(size=(200, 60)) as pilot:
        await replayed(pilot)
        t = app.telemetry
        assert re.match(r"\d+ %  0–100 %", t.util.text), t.util.text
        for meter, top, bottom in ((t.temp, "100 °C┤", "20 °C┤"), (t.power, "700 W┤", "0 W┤"),
                                   (t.util, "100 %┤", "0 %┤"), (t.mem, "125.8 GiB┤", "0.0 GiB┤")):
            bars = lines(meter)
            assert bars[0].strip().startswith(top) and bottom in bars[-1], (meter.id, bars)
        axis = str(screen_text(app)).split("\n")
        assert any(re.search(r"└-5m +-2\.5m +now", line) for line in axis), "no time ticks under the plots"
        # every plot's bars start in the same column: one time axis reads for all of them
        assert len({m.plot.layout_of(*m.plot.size)[0] + m.plot.region.x for m in (t.temp, t.power, t.clock, t.util, t.mem)}) == 1


async def test_the_pool_is_stacked_as_g3_attributes_it_with_a_legend_in_gib():
    from sparktui.gotchas.g03_unified_memory import pool_stack

    app = replay(DEMO)
    async with app.run_test(size=(200, 60)) as pilot:
        await replayed(pilot)
        pool = app.telemetry.mem
        # one unit (GiB, one decimal) and which is which, not `113/122G used` beside `avail 8.3 GiB`
        assert pool.text.startswith("used 113.4 GiB  avail 8.3 GiB  of 121.7 GiB (as free)"), pool.text
        screen = screen_text(app)
        assert "G used" not in screen and "113/122G" not in screen
        legend = str(pool.legend.render())
        parts = dict(pool_stack(app.source.history.latest["mem"]))
        for holder, label in (("kernel", "driver/GPU"), ("anon", "processes"), ("shmem", "shmem"), ("cache", "cache")):
            key = next(k for k in parts if k == holder or label.startswith(k))
            assert f"{label} {parts[key] / GIB:.1f}" in legend, (label, legend)
        assert f"free {parts['free'] / GIB:.1f} GiB" in legend
        # bottom up in the holders' colours: the newest column's bottom row is driver/GPU's
        plot = pool.plot
        gutter, bars, _ = plot.layout_of(*plot.size)
        bottom = plot.render_lines(Region(0, bars - 1, plot.size.width, 1))[0]
        colours = plot.colours()
        last = [seg for seg in bottom if seg.text.strip()][-1]
        assert last.style.color == colours[0].color
        assert len({c.color for c in colours}) == len(colours)  # each holder its own colour


async def test_a_pool_whose_holders_were_not_read_is_blank_never_zeros():
    """The older H200 recording has no AnonPages: nobody can tell the holders apart."""
    app = replay(H200_OLD)
    async with app.run_test(size=(200, 60)) as pilot:
        await replayed(pilot)
        pool = app.telemetry.mem
        assert "holders: n/a (no AnonPages in /proc/meminfo)" in str(pool.legend.render())
        assert all(not r.strip() for r in rows(pool)), rows(pool)  # no bars at all, not a stack of zeros
        assert pool.text.startswith("used "), pool.text  # used/avail still read


async def test_a_short_terminal_stacks_without_scrolling_and_a_nearly_empty_pool_still_shows():
    """At 60x20 the checklist, the one-row meters and the tab bar fit (the fractions of the stacked
    layout must not make the screen scroll); the H200's 0.5 GiB used of 125.8 is an eighth, not blank."""
    app = replay(DEMO)
    async with app.run_test(size=(60, 20)) as pilot:
        await replayed(pilot)
        t = app.telemetry
        assert t.region.height == 3 and not t.has_class("tall"), t.region
        assert app.query_one("#tabs").region.bottom <= 19 and t.region.width == 60  # no scrollbar took a column
    app = replay(H200)
    async with app.run_test(size=(80, 24)) as pilot:
        await replayed(pilot)
        (line,) = rows(app.telemetry.mem)
        assert line.strip() and set(line.strip()) == {"▁"}, line


async def test_stacked_plots_fill_the_room_at_200x60():
    """Seen: stacked, one row by ~10 columns at 200x60 with 20 empty rows below."""
    app = replay(DEMO)
    async with app.run_test(size=(200, 60)) as pilot:
        await replayed(pilot)
        await stacked(pilot)
        t = app.telemetry
        for m in (getattr(t, name) for name in ("temp", "power", "clock", "mem", "util") if hasattr(t, name)):
            w, h = m.plot.area() if hasattr(m.plot, "area") else m.plot.size
            assert h >= 3 and w >= 60, (m.id, w, h)
            assert "┤" in lines(m)[0]  # bounds at its left
        assert re.search(r"└-5m +-2\.5m +now", lines(t.temp)[-1])  # its own time ticks
        # what is left goes to the process table, not to empty rows under the plots
        assert t.region.height >= 18 and app.process_table.region.height >= 10, (t.region, app.process_table.region)


async def test_labels_never_run_into_a_plot_at_80x24():
    """Seen: `...▆▆▆power` at 80 columns: the left plot ran into the right meter's label."""
    app = replay(DEMO)
    async with app.run_test(size=(80, 24)) as pilot:
        await replayed(pilot)
        screen = screen_text(app).split("\n")
        t = app.telemetry
        for m in (getattr(t, name) for name in ("temp", "power", "clock", "mem", "util") if hasattr(t, name)):
            r = m.plot.region
            assert r.height == 1 and r.width >= 6, (m.id, r)
            line = screen[r.y]
            after = line[r.right:r.right + 1]
            assert after in ("", " "), (m.id, line)  # a blank column after every plot
        assert not re.search(r"[▁▂▃▄▅▆▇█][a-zA-Z]", "\n".join(screen[r.y] for r in [t.temp.region, t.clock.region]))
        assert t.mem.text.startswith("used 113.4 avail 8.3 GiB"), t.mem.text  # whole, in the short form


async def test_the_plots_are_built_on_new_samples_only():
    """The plots cost nothing between samples (a tick or a repaint reuses the rows), nor on a
    sample that changes no column (a steady GPU: most seconds of a 5-minute plot); a plot whose
    newest column changed is built again, alone."""
    from sparktui.ui.widgets.plot import Plot, StackPlot

    app = app_with(steady(300))
    async with app.run_test(size=(200, 60)) as pilot:
        await show(app, pilot)
        built = {"plot": 0, "stack": 0}
        real_plot, real_stack = Plot._render_rows, StackPlot._render_rows

        def count_plot(self, *a):
            built["plot"] += 1
            return real_plot(self, *a)

        def count_stack(self, *a):
            built["stack"] += 1
            return real_stack(self, *a)

        Plot._render_rows, StackPlot._render_rows = count_plot, count_stack
        try:
            for _ in range(3):
                app.tick()
                for m in app.query(Meter):
                    m.plot.render_lines(Region(0, 0, m.plot.size.width, m.plot.size.height))
                await pilot.pause()
            assert built == {"plot": 0, "stack": 0}, built
            app.source.history.append(sample(T0 + 300))  # the same values: no column changes
            app._draw_telemetry()
            for m in app.query(Meter):
                m.plot.render_lines(Region(0, 0, m.plot.size.width, m.plot.size.height))
            assert built == {"plot": 0, "stack": 0}, built
            app.source.history.append(sample(T0 + 301, temp=90.0, avail=60 * GIB))  # hotter, the pool fuller
            app._draw_telemetry()
            for m in app.query(Meter):
                m.plot.render_lines(Region(0, 0, m.plot.size.width, m.plot.size.height))
            assert built == {"plot": 1, "stack": 1}, built  # temp and the pool; power, clock, util unchanged
        finally:
            Plot._render_rows, StackPlot._render_rows = real_plot, real_stack


def test_time_ticks_and_stack_cells():
    from sparktui.ui.widgets.plot import ago, tick_row

    assert [ago(s) for s in (300, 150, 3600, 1500, 45)] == ["-5m", "-2.5m", "-1h", "-25m", "-45s"]
    assert tick_row(40, 300) == "-5m               -2.5m              now"
    assert tick_row(10, 300) == "-5m    now"  # no room for the middle tick
    assert tick_row(5, 300) == "     "  # nor for the ends


def test_a_stack_is_drawn_to_the_eighth_bottom_up_and_blank_where_not_read():
    """driver/GPU 3, processes 2, cache 1, free 2 of 8 on two rows (16 eighths): driver/GPU to the
    6th eighth with processes behind it, processes to the 10th with the cache behind it; free blank;
    a reading whose holders were not read is a blank column, not zeros."""
    from rich.style import Style

    from sparktui.ui.widgets.plot import StackPlot

    plot = StackPlot()
    plot.stack([0.5, 1.5], [[3.0, 2.0, 0.0, 0.0, 1.0, 2.0], None], -0.5, 1.5, 8.0)
    red, yellow, blue, cyan, green = (Style(color=c) for c in ("red", "yellow", "blue", "cyan", "green"))
    top, bottom = plot._render_rows(2, 2, (Style(), Style(), Style(dim=True), red, yellow, blue, cyan, green))
    assert [(s.text, s.style) for s in bottom] == [("▆", red + Style(bgcolor=yellow.color)), (" ", Style())]
    assert [(s.text, s.style) for s in top] == [("▂", yellow + Style(bgcolor=green.color)), (" ", Style())]


async def test_stacked_with_an_rdma_line_the_plots_keep_their_rows():
    """A Spark with ConnectX-7 has an RDMA line: stacked at 200x60 it takes one row across, the
    note one more, and the plots keep the rest."""
    samples = [{**sample(T0 + i), "rdma": {"rx_Bps": 1.5e9, "tx_Bps": 2.5e9}} for i in range(300)]
    app = app_with(samples)
    async with app.run_test(size=(200, 60)) as pilot:
        await show(app, pilot)
        await stacked(pilot)
        t = app.telemetry
        assert t.rdma.display and t.rdma.region.height == 1 and t.note.region.height == 1
        assert t.note.region.y == t.rdma.region.y + 1 == t.region.bottom - 1  # the last two rows, no empty cell
        assert "RDMA in/out 1.50 / 2.50 GB/s" in screen_text(app)
        for m in (t.temp, t.power, t.clock, t.util, t.mem):
            assert m.plot.area()[1] >= 3, (m.id, m.plot.area())


def test_the_window_moves_a_whole_column_at_a_time():
    """Slots on a grid of clock time: from one second to the next every column but the newest
    shows what it showed (no shimmer, no repaint), and when the grid moves on, everything moves
    exactly one column left. The newest reading is always in the last column."""
    from sparktui.ui.widgets.plot import grid_window, time_columns

    times = [float(t) for t in range(0, 2000)]
    values = [float(t % 7) for t in range(0, 2000)]  # no two neighbours alike: a moved slot shows
    width, span = 60, 300.0  # a 5-second slot

    def cols(end: float) -> list:
        k = int(end) + 1
        start, top = grid_window(end - span, end, width)
        assert top - start == span and top - 5.0 < end <= top
        return time_columns(times[:k], values[:k], start, top, width, pick=lambda seen: seen[-1])

    at = {end: cols(float(end)) for end in range(1001, 1007)}  # 1001..1005 share a grid, 1006 starts the next
    for end in (1002, 1003, 1004, 1005):
        assert at[end][:-1] == at[1001][:-1]
        assert at[end][-1] == values[end]  # the newest reading, in the last column
    assert at[1006][:-1] == at[1005][1:]
    assert grid_window(10.0, 10.0, 5) == (10.0, 10.0) and grid_window(0.0, 10.0, 0) == (0.0, 10.0)
