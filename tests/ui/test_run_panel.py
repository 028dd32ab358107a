"""The run panel: the training run beside sparktui from a `run` reading (core/shapes.py RunData) and
its check's verdict. What the screen shows (step/total, rate as printed and per step, ETA, loss,
age of the last progress coloured as the verdict), without a run or a log the reason and how to
name the log, outside text inert and cut, the rate on the telemetry's time axis, and the run's
start, stall and end as events."""

from __future__ import annotations

import time

import pytest

from sparktui.core.config import Config
from sparktui import runner
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas import REGISTRY
from sparktui.gotchas.base import Feed, Gotcha
from sparktui.ui.app import ChecksDone, SparkApp
from sparktui.ui.format import status_styles
from sparktui.ui.panels import run as runpanel
from sparktui.ui.panels.run import (LOOKING, RunStory, eta_s, eta_text, progress_line, rate_series, rate_text, recent_step_s,
                                    step_seconds)
from sparktui.ui.screens import EventsScreen
from tests.ui.test_plots import FilledSource, sample
from tests.ui.waiting import screen_lines, screen_text, shows, wait_for

T0 = 1_764_000_000.0
NOW = T0 + 600.0  # the test source's clock: the last progress point is at T0 + 588 (12 s before)


class ClockSource(FilledSource):
    """Telemetry the test gives, and a clock that stands still at ``NOW``."""

    def now(self) -> float:
        return NOW


def telemetry(dip_at: float | None = None) -> list[dict]:
    """A sample a second for 10 minutes to NOW; the SM clock halved from ``dip_at`` (a throttle)."""
    return [sample(T0 + i, sm=1200.0 if dip_at is not None and T0 + i >= dip_at else 2400.0) for i in range(601)]


def points(n: int = 295, every: float = 2.0, step_s: float = 0.5, slow_from: float | None = None,
           total: int | None = 5000, **kw) -> list[dict]:
    """Progress points every ``every`` s ending at T0 + 588: 2 it/s (0.5 s/step), a quarter of that
    from ``slow_from`` on; loss falling."""
    out, step = [], 0
    first_t = T0 + 588 - (n - 1) * every
    for i in range(n):
        t = first_t + i * every
        s = step_s * (4 if slow_from is not None and t >= slow_from else 1)
        step += round(every / s)
        out.append({"t": t, "step": step, "total": total, "rate": 1 / s, "rate_unit": "it/s", "step_s": s,
                    "loss": 2.5 - i / 1000, "format": "tqdm", **kw})
    return out


def run_data(progress: list[dict] | None = None, **kw) -> dict:
    progress = points() if progress is None else progress
    d = {"found": True, "why": None, "pids": [4242, 4243], "command": "torchrun --nproc-per-node 1 train.py",
         "alive": True, "started_at": T0 - 3600,
         "log": {"kind": "fd", "path": "/runs/exp1/train.log", "pane": None, "error": None, "size": 1000, "mtime": T0 + 588},
         "progress": progress, "first": progress[0] if progress else None, "points_seen": len(progress), "events": [],
         "error": None, "finished": None, "lines_read": 900, "cut_lines": 0, "formats": {"tqdm": len(progress)},
         "last_line_t": T0 + 588, "read_at": NOW}
    d.update(kw)
    return d


def standin_judge(readings, cfg):
    return Verdict(STANDIN_ID, Status.UNKNOWN, "not judged here")


STANDIN_ID = "G14"  # the next id, for the stand-in only: the real check is found by its first reading


@pytest.fixture
def run_check(monkeypatch) -> str:
    """The id of the check that judges the run: the registered one, or a stand-in declared like it
    (a check whose first reading is `run`) while it is not registered yet."""
    gid = runpanel.run_check_id()
    if gid is None:
        monkeypatch.setitem(REGISTRY, STANDIN_ID, Gotcha(
            id=STANDIN_ID, slug="run-progress", title="The run is making progress", symptom="s", cause="c", check="k",
            fix="f", intrusive=False, cadence_s=None, probes=("run",), judge=standin_judge, feed=Feed.TELEMETRY))
        gid = STANDIN_ID
    return gid


def app_with(dip_at: float | None = None) -> SparkApp:
    return SparkApp(Config(), source=ClockSource(telemetry(dip_at)), auto_checks=False)


async def ready(app, pilot) -> None:
    await wait_for(pilot, lambda: app.telemetry.temp.plot.size.width, what="the plots laid out")
    app._draw_telemetry()
    await pilot.pause()


async def showing(pilot, text: str) -> str:
    app = pilot.app
    return await wait_for(pilot, lambda: text in screen_text(app) and screen_text(app), what=f"the screen showing {text!r}",
                          state=lambda: screen_text(app))


def run_lines(app) -> list[str]:
    return [w.render().plain for w in (app.run_panel.status, app.run_panel.age, app.run_panel.source)]


# --------------------------------------------------------------------------- what the panel says
async def test_the_first_screen_says_it_is_looking_and_a_reading_fills_the_panel():
    app = app_with()
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(app, pilot)
        assert LOOKING in screen_text(app)  # nothing waits on finding the run
        assert app.telemetry.run is None  # no rate meter before there is a rate: the screen is as it was
        app.show_run(Reading("run", run_data()))
        text = await showing(pilot, "step 1180/5000 (24%)")
        status = next(line for line in screen_lines(app) if "step 1180/5000" in line)
        assert "2.00 it/s (0.50 s/step)" in status
        assert "ETA 32 min" in status  # (5000 - 1180) x 0.5 s = 1910 s
        age = next(line for line in screen_lines(app) if "last progress" in line)
        assert "last progress 12 s ago · loss 2.21" in age
        assert "log: /runs/exp1/train.log (the run's output) · pid 4242 +1 · torchrun --nproc-per-node 1 train.py" in text
        assert LOOKING not in text


async def test_eta_is_a_dash_without_a_total_or_a_rate_never_a_made_up_number():
    app = app_with()
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(app, pilot)
        app.show_run(Reading("run", run_data(points(total=None))))
        line = (await wait_for(pilot, lambda: [x for x in run_lines(app) if "step 1180" in x]))[0]
        assert "step 1180 ·" in line and "ETA —" in line
        bare = [{"step": 10 * i, "loss": None, "format": "plain"} for i in range(1, 4)]  # no time, no rate, no total
        app.show_run(Reading("run", run_data(bare, last_line_t=None, log={"kind": "named", "path": "/x.log", "error": None})))
        line = " | ".join(await wait_for(pilot, lambda: "step 30" in run_lines(app)[0] and run_lines(app)))
        assert "rate —" in line and "ETA —" in line and "loss —" in line and "ago" not in line


async def test_the_age_of_the_last_progress_is_coloured_as_the_verdict(run_check):
    app = app_with()
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(app, pilot)
        app.show_run(Reading("run", run_data()))
        await showing(pilot, "last progress 12 s ago")

        def age_style() -> str:
            status = app.run_panel.age.render()
            at = status.plain.index("last progress")
            return next((str(s.style) for s in status.spans if s.start <= at < s.end), "")

        assert age_style() == ""
        dark = app.current_theme.dark
        for st in (Status.WARN, Status.FAIL):
            app._set_verdict(Verdict(run_check, st, "no progress for 12 min"), time.monotonic())
            await wait_for(pilot, lambda st=st: age_style() == status_styles(dark)[st], what=f"the age in {st.value}'s colour")
            app.refresh_checklist()
            await showing(pilot, "no progress for 12 min")  # the finding, in the check's row above it


async def test_no_run_and_no_log_say_why_and_how_to_name_the_log():
    app = app_with()
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(app, pilot)
        app.show_run(Reading("run", {"found": False, "why": "no training process (torchrun, accelerate, python train.py)",
                                     "read_at": NOW}))
        text = await showing(pilot, "no training run found: no training process (torchrun")
        assert '--run-log FILE, or [run] log = "FILE" in the config' in text
        assert app.telemetry.run is None
        app.show_run(Reading("run", run_data([], log={"kind": "fd", "path": "/proc/4242/fd/1",
                                                      "error": "permission denied (another user's process)"})))
        text = await showing(pilot, "run found; its log is not read: permission denied (another user's process)")
        assert "--run-log FILE" in text and "pid 4242 +1" in text
        app.show_run(Reading("run", None, error="the run probe failed: OSError: boom"))
        await showing(pilot, "not read: the run probe failed: OSError: boom")
        app.show_run(None)
        await showing(pilot, LOOKING)


HOSTILE = "[red]x[/red] [b]bold[/b] [/] \x1b]0;pwned\x07\x1b[2J\u202e"


async def test_outside_text_is_shown_inert_and_cut():
    app = app_with()
    big = "E" * 10_000
    data = run_data(points(rate_unit="[i]it\x1b[5m/s"), command=f"python {HOSTILE} train.py " + "A" * 10_000,
                    log={"kind": "named", "path": f"/runs/{HOSTILE}/" + "p" * 10_000, "error": None},
                    error={"kind": "error", "error": "cuda_oom", "text": f"RuntimeError: {HOSTILE} CUDA out of memory {big}"})
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(app, pilot)
        app.show_run(Reading("run", data))
        await showing(pilot, "RuntimeError: [red]x[/red]")
        text = screen_text(app)
        assert "[b]bold[/b] [/]" in text and "\\e]0;pwned\\x07\\e[2J\\u202e" in text
        assert "\x1b" not in text and "\u202e" not in text
        assert "2.00 [i]it\\e[5m/s (0.50 s/step)" in text  # a unit the log printed: its text too
        for line in run_lines(app):
            assert "\x1b" not in line and len(line) < 400, len(line)  # cut before being shown, not 10 KB
        for ch in app.events:  # the start row quotes the command: cut and inert in the events view
            assert len(ch.summary) < 400
        await pilot.press("e")
        await shows(pilot, EventsScreen)
        shown = screen_text(app)
        assert "run: started" in shown and "[red]x[/red]" in shown and "\x1b" not in shown


# --------------------------------------------------------------------------- the rate on the telemetry's time axis
async def test_the_rate_is_plotted_on_the_telemetry_window_lined_up_with_a_throttle():
    """The clock halves at T0 + 450 and the run slows to a quarter at the same moment: the first
    low column of the rate plot is the first low column of the SM clock plot."""
    app = app_with(dip_at=T0 + 450)
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(app, pilot)
        app.show_run(Reading("run", run_data(points(slow_from=T0 + 450))))
        app._draw_telemetry()
        meter = app.telemetry.run
        await wait_for(pilot, lambda: meter.display and "steps/s" in meter.text, what="the rate meter drawn")
        width = meter.plot.size.width
        assert width == app.telemetry.clock.plot.size.width
        clock, rate = app.telemetry.clock.plot.columns(width), meter.plot.columns(width)
        assert meter.window[:2] == (NOW - 300, NOW)  # the telemetry's own window (its last sample)
        first_low_clock = next(i for i, v in enumerate(clock) if v is not None and v < 2000)
        first_low_rate = next(i for i, v in enumerate(rate) if v is not None and v < 1.0)
        assert abs(first_low_clock - first_low_rate) <= 1, (first_low_clock, first_low_rate)
        drawn = [v for v in rate if v is not None]
        assert drawn[0] == pytest.approx(2.0) and drawn[-1] == pytest.approx(0.5)
        assert rate[-1] is None  # no progress in the last 12 s: longer than 3 intervals between points, a gap
        assert "0.50–2.00 steps/s" in meter.text  # its min–max over the window, as the other meters say theirs


def test_the_rate_series_is_bounded_to_the_window():
    pts = points(n=2000, every=1.0)
    times, values, hold = rate_series(pts, NOW - 300, NOW)
    assert len(times) == len(values) <= 302 and times[0] < NOW - 300 <= times[1]  # and the point before, which holds into it
    assert values[-1] == pytest.approx(2.0) and hold == pytest.approx(3.0)


def test_rate_eta_and_step_time_words():
    assert rate_text({"rate": 1.1, "rate_unit": "it/s"}, 0.909) == "1.10 it/s (0.91 s/step)"
    assert rate_text({"rate": 12.5, "rate_unit": "s/it"}, 12.5) == "12.5 s/it"
    assert rate_text({"rate": 45210.0, "rate_unit": "tokens/s"}, 0.8) == "45,210 tokens/s (0.80 s/step)"
    assert rate_text({}, None) is None
    assert [eta_text(s) for s in (None, 42.0, 1900.0, 3 * 3600 + 300.0, 5 * 86400.0)] == ["—", "42 s", "32 min", "3h05m", "5.0 days"]
    # tokens/s does not convert: seconds per step from the points' times and steps
    assert step_seconds([{"t": 0.0, "step": 10}, {"t": 20.0, "step": 20}, {"t": 25.0}]) == [None, 2.0, None]
    assert eta_s(run_data(finished={"kind": "finished", "step": 5000})) is None
    # the recent rate: the last 5 minutes' median (2 s/step), not the whole run's (0.5 s/step)
    slowed = points(slow_from=T0 + 400)
    assert recent_step_s(slowed) == pytest.approx(2.0) and eta_s(run_data(slowed)) == pytest.approx((5000 - slowed[-1]["step"]) * 2.0)
    mixed = points(slow_from=T0 + 450)  # the window's median is still the fast pace; the rate shown is the last
    assert recent_step_s(mixed) == pytest.approx(0.5) and "0.50 it/s (2.00 s/step)" in progress_line(run_data(mixed)).plain
    untimed = [{"step": 10 * i, "step_s": 0.5 + i / 100} for i in range(40)]  # no times: the last 20 points
    assert recent_step_s(untimed) == pytest.approx(0.5 + 29.5 / 100)
    assert eta_s(run_data(points(total=None))) is None
    assert eta_s(run_data(alive=False)) is None and eta_s(run_data(alive=None)) is not None  # gone / not known


# --------------------------------------------------------------------------- events
async def test_the_runs_start_stall_and_death_are_events(run_check):
    app = app_with()
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(app, pilot)
        mono = time.monotonic()
        app.show_run(Reading("run", run_data()))
        app._set_verdict(Verdict(run_check, Status.OK, "2.00 it/s, step 1180/5000, ETA 32 min"), mono)
        app.show_run(Reading("run", run_data()))  # the same run again: no second start
        app._set_verdict(Verdict(run_check, Status.WARN, "slowed to 0.6 it/s (median 1.1): clock events"), mono)
        app._set_verdict(Verdict(run_check, Status.FAIL, "no progress for 12 min (from 03:10)"), mono)
        died = run_data(alive=False, error={"kind": "error", "error": "cuda_oom", "step": 1180,
                                            "text": "torch.OutOfMemoryError: CUDA out of memory."})
        app.show_run(Reading("run", died))
        app._set_verdict(Verdict(run_check, Status.FAIL, "died at step 1180/5000: CUDA out of memory"), mono)
        rows = [c.summary for c in app.events if c.id == run_check]
        assert rows == ["run: started " + time.strftime("%H:%M", time.localtime(T0 - 3600))
                        + ": torchrun --nproc-per-node 1 train.py (pid 4242, 4243)",
                        "run: 2.00 it/s, step 1180/5000, ETA 32 min",  # the check's first verdict, as every check's
                        "run: slowed to 0.6 it/s (median 1.1): clock events",
                        "run: no progress for 12 min (from 03:10)",
                        "run: died at step 1180/5000: CUDA out of memory"]  # fail -> fail: a row of its own
        assert [c.new for c in app.events if c.id == run_check][1:] == [Status.OK, Status.WARN, Status.FAIL, Status.FAIL]
        await pilot.press("e")
        await shows(pilot, EventsScreen)
        shown = screen_text(app)
        for words in ("run: started", "run: no progress for 12 min", "run: died at step 1180/5000"):
            assert words in shown


async def test_the_checks_own_verdicts_read_as_run_events():
    """Judged by the registered check (not a stand-in): a stall, then the death, in its words."""
    gid = runpanel.run_check_id()
    if gid is None or REGISTRY[gid].judge is standin_judge:
        pytest.skip("the run's check is not registered")
    app = app_with()

    def judged(data: dict) -> ChecksDone:
        readings = Readings({"run": Reading("run", data, started_at=data["read_at"])})
        return ChecksDone(runner.judge_readings([gid], readings, app.cfg))

    async with app.run_test(size=(160, 50)) as pilot:
        await ready(app, pilot)
        for data, words in ((run_data(), "progressing"), (run_data(read_at=NOW + 3600), "no progress for 60 min"),
                            (run_data(read_at=NOW + 3700, alive=False, error={
                                "kind": "error", "error": "cuda_oom", "step": 1180,
                                "text": "torch.OutOfMemoryError: CUDA out of memory."}), "died at step 1180/5000")):
            app.show_run(Reading("run", data))
            app.post_message(judged(data))
            await wait_for(pilot, lambda words=words: words in app.board[gid].verdict.summary, what=words,
                           state=lambda: app.board[gid].verdict)
        rows = [(c.new, c.summary) for c in app.events if c.id == gid]
        assert rows[0][1].startswith("run: started") and rows[1][1].startswith("run: progressing")
        assert [st for st, _ in rows[2:]] == [Status.FAIL, Status.FAIL]
        assert rows[2][1].startswith("run: no progress for 60 min") and rows[3][1].startswith("run: died at step 1180/5000")


async def test_a_replay_shows_the_recorded_run_on_the_recordings_time_axis(tmp_path):
    """The recorded run on its panel once the recording is read (its rate on the replay's own
    window); a recording without one says so, not "looking"."""
    import json

    from tests.ui.test_dashboard import DEMO
    from tests.ui.waiting import loaded

    # the demo without its run lines: a recording made before runs were followed
    without = tmp_path / "without-run.jsonl"
    without.write_text("".join(ln + "\n" for ln in DEMO.read_text().splitlines()
                               if not ln.startswith('{"type":"readings"') or '"run"' not in ln))
    app = SparkApp(Config(), replay=str(without), speed=None)
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot)
        await showing(pilot, "not read: the recording carries no run reading")
    end = 1_764_001_500.0  # the demo's last sample
    pts = [{"t": end - 110 + 10 * i, "step": 20 * (i + 1), "total": 2000, "rate": 2.0, "rate_unit": "it/s", "step_s": 0.5,
            "loss": 1.5, "format": "tqdm"} for i in range(12)]  # its last 2 minutes
    data = run_data(pts, read_at=end, last_line_t=pts[-1]["t"])
    rec = tmp_path / "with-run.jsonl"
    rec.write_text(without.read_text() + json.dumps({"type": "readings", "t": end, "readings": {
        "run": Reading("run", data, started_at=end).to_dict()}}) + "\n")
    app = SparkApp(Config(), replay=str(rec), speed=None)
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot)
        await showing(pilot, "step 240/2000 (12%)")
        meter = app.telemetry.run
        await wait_for(pilot, lambda: meter.display and "steps/s" in meter.text, what="the rate meter drawn")
        assert meter.window[1] == end  # the replay's window, not the wall clock's
        cols = meter.plot.columns(meter.plot.size.width)
        assert cols[-1] == pytest.approx(2.0) and cols[0] is None  # the run's 2 minutes at the right of the 5


def test_the_story_logs_an_end_a_recovery_and_a_new_run():
    story = RunStory()
    v = lambda st, s: Verdict("X", st, s)  # noqa: E731
    assert story.reading(run_data(log=None)) is not None and story.reading(run_data()) is None  # its log found later
    assert story.verdict(v(Status.OK, "2 it/s"), run_data()) is None  # the start row said it
    assert story.verdict(v(Status.FAIL, "no progress for 12 min"), run_data()) == "run: no progress for 12 min"
    assert story.verdict(v(Status.OK, "2 it/s again"), run_data()) == "run: 2 it/s again"
    done = run_data(finished={"kind": "finished", "step": 5000}, alive=False)
    assert story.verdict(v(Status.OK, "finished at step 5000/5000"), done) == "run: finished at step 5000/5000"
    assert story.verdict(v(Status.OK, "finished at step 5000/5000"), done) is None
    assert story.reading(run_data(started_at=T0 + 10, command="python train.py")).startswith("run: started")
    assert story.reading({"found": False}) is None


# --------------------------------------------------------------------------- layouts
def checks_seen(app) -> set[str]:
    return {gid for gid in REGISTRY if any(line.split()[1:2] == [gid] or line.split()[2:3] == [gid]
                                          for line in screen_lines(app) if line.strip())}


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_the_panel_fits_both_layouts_and_leaves_the_checklist_whole(size):
    app = app_with()
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        before = checks_seen(app)
        assert before == set(REGISTRY)  # every check on screen, at 80x24 too (the checklist's 14 rows)
        app.show_run(Reading("run", run_data()))
        app._draw_telemetry()
        if size == (80, 24):  # stacked: no row to spare; the run's state is G14's row, the note keeps its cell
            await showing(pilot, "plots: last 5 min (w)")
            assert not app.run_panel.display or app.run_panel.region.height == 0
            assert app.telemetry.region.height == 3
            assert app.telemetry.run.region.height == 0 and "2.00 it/s" not in screen_text(app)
        else:
            await showing(pilot, "step 1180/5000 (24%)")
            assert app.run_panel.region.height == 5
            await wait_for(pilot, lambda: "1180/5000 2.00 it/s" in app.telemetry.run.text, what="the rate meter drawn")
        assert checks_seen(app) == before
        lines = screen_lines(app)
        assert len(lines) == size[1] and any("Processes" in line for line in lines)
        assert all(len(line) <= size[0] for line in lines)
