"""Faults in the middle of a live run (issue 15 item 6): the dashboard keeps running and says what
is stale. NVML is the GB10 fake (src/sparktui/testing/fake_nvml.py), broken and healed while the app runs;
each screen test runs at 80x24 and at 200x60."""

from __future__ import annotations

import time
import types

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.probes import nvml
from sparktui.probes import sampler as sampler_mod
from sparktui.probes.sampler import Sampler
from sparktui.ui.app import SparkApp
from sparktui.ui.panels.playbooks import stale_line
from sparktui.ui.panels.telemetry import outage_note
from sparktui.testing import fake_nvml
from sparktui.testing.github_server import IssuesApp, LocalServer, Reply, make_issue
from tests.standins.make import make_standin
from tests.ui.test_dashboard import StillSource
from tests.ui.waiting import settled, wait_for

SIZES = [(80, 24), (200, 60)]


@pytest.fixture
def fake():
    f = fake_nvml.gb10_loaded()
    nvml.set_backend(f)
    yield f
    nvml.set_backend(None)


def driver_reload(f: fake_nvml.FakeNvml) -> None:
    """The driver goes away under a running session: every call UNINITIALIZED, nvmlInit fails."""
    f.library_missing = True
    f.initialised = 0


def driver_back(f: fake_nvml.FakeNvml) -> None:
    """The driver is loaded again: a new nvmlInit works (the old session stays dead)."""
    f.library_missing = False


def live_app(tmp_path, **target) -> SparkApp:
    cfg = Config().with_overrides(telemetry={"interval_s": 0.05, "processes_every_s": 0.2},
                                  target={"python": str(tmp_path / "no-python"), **target},
                                  scan={"paths": [str(tmp_path)]})
    (tmp_path / "kmsg").write_text("")
    return SparkApp(cfg, auto_checks=False, keep_session=False, kernel_log_path=str(tmp_path / "kmsg"))



def note(app) -> str:
    return str(app.telemetry.note.render())


def temp_meter(app) -> str:
    return " ".join(str(w.render()) for w in app.telemetry.temp.query("*") if hasattr(w, "render"))


# -- NVML failing mid-run ----------------------------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
async def test_nvml_failing_mid_run_shows_a_gap_since_when_and_why_then_recovers(fake, tmp_path, monkeypatch, size):
    monkeypatch.setattr(sampler_mod, "REOPEN_FIRST_S", 0.1)
    app = live_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        sampler = app.source.sampler
        await wait_for(pilot, lambda: len(app.source.history) >= 3)
        assert app.source.history.latest["gpus"][0]["temp_c"] == 72
        driver_reload(fake)
        broke_at = time.time()
        await wait_for(pilot, lambda: app.source.history.latest.get("nvml_down_since") is not None, what="NVML down")
        await wait_for(pilot, lambda: "NVML failing since" in note(app), what="the outage noted", state=lambda: note(app))
        latest = app.source.history.latest
        assert latest["gpus"] == []  # a gap: no reading, and no counter carried from before
        assert broke_at - 0.2 <= latest["nvml_down_since"] <= time.time()
        since = time.strftime("%H:%M:%S", time.localtime(latest["nvml_down_since"]))
        assert f"NVML failing since {since}" in note(app)
        screen = app.export_screenshot()
        assert "failing" in screen and since in screen  # on screen, not only in the widget
        await wait_for(pilot, lambda: f"NVML DOWN since {since}" in str(app.header_bar.render()))
        assert "n/a" in temp_meter(app)
        app.run_checks(["G7"])  # a rerun reads NVML afresh
        await wait_for(pilot, lambda: app.board["G7"].verdict is not None)
        v = app.board["G7"].verdict
        assert v.status is Status.UNKNOWN and "compute capability unreadable" in v.summary
        assert sampler.reopens >= 1  # tried again, and failed: nvmlInit has no library yet
        driver_back(fake)
        await wait_for(pilot, lambda: app.source.history.latest.get("nvml_down_since") is None)
        await wait_for(pilot, lambda: "NVML failing" not in note(app))
        await wait_for(pilot, lambda: "NVML DOWN" not in str(app.header_bar.render()))
        assert app.source.history.latest["gpus"][0]["temp_c"] == 72
        assert "72" in temp_meter(app)
        assert app.is_running


@pytest.mark.parametrize("code", [fake_nvml.GPU_IS_LOST, fake_nvml.UNINITIALIZED, fake_nvml.pynvml.NVML_ERROR_UNKNOWN])
def test_every_field_failing_is_an_outage_with_its_reason(fake, code):
    s = Sampler(Config(), interval_s=0.05)
    try:
        assert s.take()["gpus"][0]["temp_c"] == 72
        fake.fail(*fake_nvml.FIELDS, code=code)
        sample = s.take()
        assert sample["nvml_down_since"] == sample["t"]
        reason = fake_nvml.pynvml.NVMLError(code).__str__()
        assert reason in sample["errors"]["nvml"]
        fake.heal(*fake_nvml.FIELDS)  # a passing fault: the session answers again, no re-open needed
        assert "nvml_down_since" not in s.take() and s.nvml_down_since is None
    finally:
        s.close()


def test_nvml_never_there_is_unavailable_not_an_outage():
    nvml.set_backend(fake_nvml.gb10(library_missing=True))
    s = Sampler(Config(), interval_s=0.05)
    try:
        for _ in range(3):
            sample = s.take()
            assert "nvml_down_since" not in sample and "LIBRARY_NOT_FOUND" in sample["errors"]["nvml"]
        assert s.reopens == 0
    finally:
        s.close()
        nvml.set_backend(None)


def test_reopening_backs_off_to_once_a_minute(fake, monkeypatch):
    """A driver gone for 10 minutes of 1 s samples: about 15 re-opens, never 600."""
    now = [1000.0]
    monkeypatch.setattr(sampler_mod, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    s = Sampler(Config(), interval_s=1.0, clock=lambda: now[0])
    try:
        s.take()
        driver_reload(fake)
        tries: list[float] = []
        for _ in range(600):
            before = s.reopens
            s.take()
            if s.reopens > before:
                tries.append(now[0])
            now[0] += 1.0
        gaps = [b - a for a, b in zip(tries, tries[1:])]
        assert 8 <= len(tries) <= 20, tries
        assert max(gaps) <= sampler_mod.REOPEN_MAX_S and gaps == sorted(gaps)
        driver_back(fake)
        while "nvml_down_since" in s.take():
            now[0] += 1.0
            assert now[0] < 1000 + 600 + 2 * sampler_mod.REOPEN_MAX_S
        assert s.take()["gpus"][0]["temp_c"] == 72
    finally:
        s.close()


def test_exporter_says_nvml_down_during_an_outage(fake):
    from sparktui.fleet.exporter import Exporter

    cfg = Config()
    exp = Exporter(cfg, ids=[], host_label="h", sampler=Sampler(cfg, interval_s=0.05))
    try:
        exp.sampler.sample_once()
        driver_reload(fake)
        exp.sampler.sample_once()
        fams = {f.name: f for f in exp.collect()}
        assert fams["sparktui_nvml_up"].samples[0].value == 0
        assert fams["sparktui_gpu_temperature_celsius"].samples == []  # absent, never the last value
    finally:
        exp.sampler.close()


def test_exporter_checks_read_nvml_afresh_during_an_outage(fake, tmp_path):
    """G7 judged from the NVML facts read at start would stay ok through a driver reload. The
    target interpreter is one that does not exist: on a machine whose own python has a CUDA torch
    (the lent H200's), G7 would otherwise judge that torch's arch list instead of NVML alone."""
    from sparktui.fleet.exporter import Exporter

    cfg = Config().with_overrides(target={"python": str(tmp_path / "no-python")})
    exp = Exporter(cfg, ids=["G7"], host_label="h", sampler=Sampler(cfg, interval_s=0.05))
    try:
        exp.static = exp.sampler.static()
        exp.sampler.sample_once()
        exp.checks.run(["G7"])
        assert exp.checks.snapshot()["G7"].verdict.summary == ("SM121 confirmed, but the build's arch list could "
                                                               "not be read")  # NVML's capability
        driver_reload(fake)
        exp.sampler.sample_once()
        exp.checks.run(["G7"])
        v = exp.checks.snapshot()["G7"].verdict
        assert v.status is Status.UNKNOWN and "compute capability unreadable" in v.summary, v.summary
    finally:
        exp.sampler.close()


# -- the training interpreter deleted mid-run ------------------------------------------------------

@pytest.mark.parametrize("size", SIZES)
async def test_interpreter_deleted_mid_run_makes_g1_unknown_saying_so(fake, tmp_path, size):
    py = make_standin(tmp_path, "ok_gb10")
    app = live_app(tmp_path, python=py)
    async with app.run_test(size=size) as pilot:
        app.run_checks(["G1"])
        await wait_for(pilot, lambda: app.board["G1"].verdict is not None, timeout=30)
        first = app.board["G1"].verdict
        assert first.status is not Status.UNKNOWN, first.summary
        (tmp_path / "python-ok_gb10").unlink()
        app.run_checks(["G1"])
        await wait_for(pilot, lambda: app.board["G1"].verdict is not first, timeout=30)
        v = app.board["G1"].verdict
        assert v.status is Status.UNKNOWN
        assert f"cannot start {py}: interpreter gone: no such file" in v.summary, v.summary


@pytest.mark.parametrize("size", SIZES)
async def test_a_venv_whose_base_python_was_removed_is_interpreter_gone_naming_the_link(fake, tmp_path, size):
    """A venv's bin/python is a link to its base interpreter: removing that leaves a dangling link,
    which the kernel reports as plain ENOENT. The verdict names where the link points."""
    base = Path(make_standin(tmp_path, "ok_gb10"))
    venv_python = tmp_path / "venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.symlink_to(base)
    base.unlink()
    app = live_app(tmp_path, python=str(venv_python))
    async with app.run_test(size=size) as pilot:
        app.run_checks(["G1"])
        await wait_for(pilot, lambda: app.board["G1"].verdict is not None, timeout=30)
        v = app.board["G1"].verdict
        assert v.status is Status.UNKNOWN
        assert f"interpreter gone: it links to {base}, which does not exist" in v.summary, v.summary
        assert app.is_running


# -- the GitHub API failing mid-run (G8's panel) -------------------------------------------------------

VLLM_ISSUE = make_issue(7, "vllm serve fails on DGX Spark with the 25.11 image")
FAULTS = {
    "500": lambda: Reply(500, {}, b"oops"),
    "403": lambda: Reply(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(time.time()) + 1800)},
                         b'{"message": "API rate limit exceeded"}'),
    "429": lambda: Reply(429, {"Retry-After": "300"}, b'{"message": "slow down"}'),
    "hang": lambda: Reply(200, {}, b"[]", delay_s=30.0),  # cut short when the server closes
}


@pytest.fixture
def github(monkeypatch):
    """A GitHub-like server on loopback whose answers the test switches (``mode[0]``: "ok" or a FAULTS key);
    the client gives up on an answer after 1 s (a loaded test machine answers well within it), with
    no retry, and every refresh asks the server."""
    from dataclasses import replace

    from sparktui.probes import playbooks as playbooks_probe

    mode = ["ok"]
    issues = IssuesApp([VLLM_ISSUE])
    server = LocalServer(lambda req: issues(req) if mode[0] == "ok" else FAULTS[mode[0]]())
    issues.bind(server)
    real = playbooks_probe.settings_for
    monkeypatch.setattr(playbooks_probe, "settings_for",
                        lambda cfg, env=None: replace(real(cfg, env), timeout_s=1.0, retries=0, ttl_s=0.001))
    yield server, mode
    server.close()


def g8_app(server, tmp_path) -> SparkApp:
    """A dashboard following the vllm playbook on ``server`` (G8 scans only the empty tmp_path)."""
    cfg = Config().with_overrides(playbooks={"api_url": server.url, "slugs": ["vllm"]}, scan={"paths": [str(tmp_path)]})
    return SparkApp(cfg, source=StillSource(), auto_checks=False)


async def run_g8(app, pilot) -> None:
    done = app.board["G8"].runs
    app.run_checks(["G8"])
    await wait_for(pilot, lambda: app.board["G8"].runs > done, what="G8 run again")
    await settled(pilot)


@pytest.mark.parametrize("fault, size", [("500", SIZES[0]), ("403", SIZES[1]), ("429", SIZES[0]), ("hang", SIZES[1])])
async def test_github_failing_keeps_the_last_list_and_says_how_stale_and_when_it_retries(github, tmp_path, size, fault):
    server, mode = github
    app = g8_app(server, tmp_path)
    async with app.run_test(size=size) as pilot:
        await run_g8(app, pilot)
        panel = app.playbook_panel
        assert app.board["G8"].verdict.status is Status.WARN and panel._table.row_count == 1
        mode[0] = fault
        await run_g8(app, pilot)
        v = app.board["G8"].verdict
        assert panel._table.row_count == 1 and panel.issues["7"]["title"] == VLLM_ISSUE["title"]  # the last good list
        assert "refresh failed" in v.summary  # the verdict says it is built on an old listing
        text = str(panel._note.render())
        retry = {"403": "next try in 30m", "429": "next try in 5m"}.get(fault, "r tries again")
        assert "listing from <1m ago (the refresh failed); " + retry in text, text
        assert app.is_running
        mode[0] = "ok"  # the API answers again
        asked = len(server.seen())
        await run_g8(app, pilot)
        if fault in ("403", "429"):  # told to wait: not asked before then, and still said
            assert len(server.seen()) == asked and retry in str(panel._note.render())
        else:
            assert "refresh failed" not in str(panel._note.render()) and panel._table.row_count == 1


@pytest.mark.parametrize("limited, next_run_in, expected", [
    (None, None, "r tries again"),
    (None, 840.0, "next try in 14m"),
    (1800.0, 840.0, "next try in 30m"),  # the reset comes after the next run: nothing is asked before it
    (60.0, 840.0, "next try in 14m"),
])
def test_stale_line_names_the_age_and_the_next_try(limited, next_run_in, expected):
    now = 1_800_000_000.0
    data = {"source": "stale-cache", "fetched_at": now - 7500,
            "rate_limit": {"limited": True, "reset_at": now + limited} if limited else None}
    line = stale_line(data, now, now + next_run_in if next_run_in else None)
    assert line == f"listing from 2h05m ago (the refresh failed); {expected}"


@pytest.mark.parametrize("data", [{"source": "network", "fetched_at": 1.0}, {"source": "cache-304"},
                                  {"source": "stale-cache", "fetched_at": float("nan"), "rate_limit": "x"}])
def test_stale_line_only_for_a_stale_listing_and_never_raises(data):
    line = stale_line(data, 1e9, None)
    assert (line is None) == (data["source"] != "stale-cache")
    if line:
        assert line == "listing from an unknown time ago (the refresh failed); r tries again"


async def test_a_refresh_that_gives_no_reading_keeps_the_last_list_and_never_says_not_configured(github, tmp_path,
                                                                                                monkeypatch):
    from sparktui.probes import playbooks as playbooks_probe

    server, _ = github
    app = g8_app(server, tmp_path)
    async with app.run_test(size=SIZES[0]) as pilot:
        await run_g8(app, pilot)

        def broken(*a, **kw):
            raise RuntimeError("probe bug")

        monkeypatch.setattr(playbooks_probe, "read", broken)
        await run_g8(app, pilot)
        text = str(app.playbook_panel._note.render())
        assert app.board["G8"].verdict.status is Status.UNKNOWN
        assert "Not configured" not in text and "the rows below are from the last listing" in text, text
        assert app.playbook_panel._table.row_count == 1


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=8)


@settings(max_examples=200)
@given(since=JSON | st.sampled_from([1e308, -1e308, float("nan"), float("inf"), 2**70]), errors=JSON)
def test_an_outage_field_of_any_shape_in_a_recording_never_raises(since, errors):
    sample = {"t": 1.0, "nvml_down_since": since, "errors": errors if isinstance(errors, dict) else {}}
    note = outage_note(sample)
    assert note is None or note.startswith("NVML failing since ")


@settings(max_examples=200)
@given(data=st.dictionaries(st.sampled_from(["source", "fetched_at", "rate_limit"]), JSON),
       limit=st.dictionaries(st.sampled_from(["limited", "reset_at"]), JSON | st.just(1e308)))
def test_stale_line_of_any_reading_never_raises(data, limit):
    data = {**data, "source": "stale-cache", "rate_limit": limit}
    assert stale_line(data, 1e9, None).startswith("listing from ")
