"""`sparktui --record FILE`: the live dashboard appends what it sees to a recording that replays
with every check it ran (NVML faked at its boundary as a GB10; everything else real)."""

from __future__ import annotations

import json

import pytest

from sparktui.cli.main import EXIT_USAGE, main
from sparktui.core.config import Config
from sparktui.core.recording import read_recording
from sparktui.probes import nvml
from sparktui.ui.app import SparkApp
from sparktui.testing import fake_nvml
from tests.ui.waiting import says, wait_for


@pytest.fixture
def gb10():
    nvml.set_backend(fake_nvml.gb10_loaded())
    yield
    nvml.set_backend(None)


def live_cfg(tmp_path) -> Config:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "serve.sh").write_text("vllm serve m --tensor-parallel-size 1\n")
    return Config().with_overrides(telemetry={"interval_s": 0.05, "processes_every_s": 0.2},
                                   scan={"paths": [str(proj)]})


async def test_recording_from_the_dashboard_replays_with_its_checks(gb10, tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    app = SparkApp(live_cfg(tmp_path), record=str(out), auto_checks=False)
    async with app.run_test(size=(120, 36)) as pilot:
        assert "recording to run.jsonl" in app.source.label
        app.run_checks(["G10"])
        await wait_for(pilot, lambda: app.board["G10"].verdict is not None and len(app.source.history) >= 5
                       and app.latest_processes is not None, what="G10 judged, 5 samples and a process scan",
                       state=lambda: (app.board["G10"].verdict, len(app.source.history), app.latest_processes is not None))
        assert app.board["G10"].verdict.status.value == "ok"
        header = str(app.query_one("#header").render())
        assert "recording to run.jsonl" in header
    rec = read_recording(out)
    assert rec.problems == [] and len(rec.samples) >= 5 and rec.processes
    assert rec.header["static"]["devices"][0]["name"]["value"] == "NVIDIA GB10"
    assert rec.samples[0]["gpus"][0]["temp_c"] == 72
    assert "tpscan" in rec.readings[-1]
    assert "telemetry" not in rec.readings[-1]  # the samples already carry it
    main(["check", "--replay", str(out), "--json"])
    checks = {v["id"]: v for v in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["G10"]["status"] == "ok" and {"G3", "G4", "G6"} <= set(checks)


async def test_a_recording_that_cannot_be_written_costs_the_recording_not_the_dashboard(gb10, tmp_path):
    bad = tmp_path / "not-a-recording.txt"
    bad.write_text("someone's notes\n")
    app = SparkApp(live_cfg(tmp_path), record=str(bad), auto_checks=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await says(pilot, "not recording")
        assert app.source.writer is None and "not recording" in app.source.record_error
        await wait_for(pilot, lambda: len(app.source.history) >= 1, what="a sample: still watching")
    assert bad.read_text() == "someone's notes\n"  # nothing lost


def test_record_and_replay_together_is_a_usage_error(capsys):
    assert main(["--replay", "x.jsonl", "--record", "y.jsonl"]) == EXIT_USAGE
    assert "cannot be combined" in capsys.readouterr().err
