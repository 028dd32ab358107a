"""The runner schedules, without Textual: which checks are judged when their readings arrive,
enrichment, cancel, replays, telemetry windows, readings followed live, and the board's schedule.

Probes are replaced at their one boundary (``probes.safe_read``) by readings the test releases, so
the order of arrival is the test's, not the machine's."""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest

from sparktui import probes, runner
from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas import REGISTRY
from sparktui.gotchas.base import Feed
from sparktui.runner.board import Board


class Gate:
    """Fake probes: each reading is held until the test releases its name (or at once if not gated)."""

    def __init__(self, monkeypatch, gated: set[str]) -> None:
        self.events = {n: threading.Event() for n in gated}
        self.asked: list[str] = []
        monkeypatch.setattr(probes, "safe_read", self.read)

    def read(self, name, cfg, cancel=None) -> Reading:
        self.asked.append(name)
        ev = self.events.get(name)
        if ev is not None:
            while not ev.wait(0.01):
                if cancel is not None and cancel.is_set():
                    return Reading(name, None, error="cancelled")
        return Reading(name, None, error=f"{name}: not on this test machine", started_at=time.time())

    def release(self, name: str) -> None:
        self.events[name].set()


def test_a_check_is_judged_as_soon_as_its_own_readings_are_in(monkeypatch):
    gate = Gate(monkeypatch, {"target"})
    batches = runner.stream(["G1", "G13"], Config())  # G1 needs the training interpreter; G13 does not
    first = next(batches)
    assert first.ids == ["G13"] and "target" not in first.readings
    gate.release("target")
    second = next(batches)
    assert second.ids == ["G1"] and "target" in second.readings and "target" in second.new
    assert next(batches, None) is None
    assert gate.asked.count("nvml") == 1  # a probe both checks need is read once


def test_an_enriching_reading_judges_its_check_again_and_a_cancel_stops_that(monkeypatch):
    g8 = REGISTRY["G8"]
    assert g8.enriched_by == ("tpscan",) and "tpscan" not in g8.required
    gate = Gate(monkeypatch, {"tpscan"})
    batches = runner.stream(["G8"], Config())
    early = next(batches)
    assert early.ids == ["G8"] and "tpscan" not in early.readings  # a slow scan does not hold it
    gate.release("tpscan")
    again = next(batches)
    assert again.ids == ["G8"] and "tpscan" in again.readings

    gate = Gate(monkeypatch, {"tpscan"})
    cancel = threading.Event()
    batches = runner.stream(["G8"], Config(), cancel)
    assert next(batches).ids == ["G8"]
    cancel.set()
    assert next(batches, None) is None  # cancelled: not judged again on a cut-short scan


def test_a_batch_read_while_cancelling_says_so(monkeypatch):
    Gate(monkeypatch, set())
    cancel = threading.Event()
    cancel.set()
    batches = list(runner.stream(["G13"], Config(), cancel))
    assert [b.cancelled for b in batches] == [True]


def test_a_replay_is_judged_from_its_readings_in_one_batch_and_a_missing_reading_is_unknown(monkeypatch):
    gate = Gate(monkeypatch, set())
    recorded = Readings({"kernel_log": Reading("kernel_log", None, error="not read")})
    (batch,) = runner.stream(["G11", "G13"], Config(), recorded=recorded)
    g11, g13 = batch.verdicts
    assert gate.asked == []  # nothing read from this machine
    assert g11.status is Status.UNKNOWN and "replay" not in g11.summary  # carried, failed: the judge says why
    assert g13.status is Status.UNKNOWN and g13.summary == "replay: the recording carries no driver_flavour, nvml reading"


class Merger:
    def __init__(self) -> None:
        self.seen: list[Reading] = []

    def merge(self, r: Reading) -> Reading:
        self.seen.append(r)
        return Reading(r.probe, {"merged": True}, source="merged")


def test_a_followed_reading_is_judged_merged_but_kept_as_read(monkeypatch):
    Gate(monkeypatch, set())
    merger = Merger()
    judged_on: list[Readings] = []
    monkeypatch.setitem(REGISTRY, "G11", dataclasses.replace(
        REGISTRY["G11"], judge=lambda r, cfg: judged_on.append(r) or Verdict("G11", Status.OK, "x")))
    (batch,) = runner.stream(["G11"], Config(), followed={"kernel_log": merger})
    assert [r.probe for r in merger.seen] == ["kernel_log"]
    assert judged_on[0].get_reading("kernel_log").source == "merged"
    assert batch.readings.get_reading("kernel_log").source != "merged"  # what --record writes is the probe's


def test_the_checks_following_the_kernel_log_are_declared_not_named():
    assert [g.id for g in runner.followers("kernel_log")] == [g.id for g in REGISTRY.values()
                                                              if g.feed is Feed.FOLLOWED]
    assert runner.followers("nvml") == []


def test_a_telemetry_window_judges_only_the_telemetry_fed_checks_and_waits_for_a_process_scan():
    telemetry_fed = [g.id for g in REGISTRY.values() if g.feed is Feed.TELEMETRY]
    assert telemetry_fed == ["G3", "G4", "G6", "G14"]
    assert [v.id for v in runner.judge_window(Readings(), Config())] == ["G3", "G4", "G6"]  # G14 waits for the run
    assert [v.id for v in runner.judge_window(Readings(), Config(), have_processes=False)] == ["G3", "G4"]
    with_run = Readings({"run": Reading("run", {"found": False, "why": "no training process", "read_at": 0.0})})
    assert [v.id for v in runner.judge_window(with_run, Config())] == telemetry_fed


def test_a_reviewed_recording_without_the_run_says_so_instead_of_waiting():
    review = Readings({"telemetry": Reading("telemetry", {"samples": [], "review": True})})
    g14 = [v for v in runner.judge_window(review, Config()) if v.id == "G14"]
    assert len(g14) == 1 and g14[0].status is Status.UNKNOWN and "carries no run reading" in g14[0].summary


def test_a_run_of_probes_leaves_out_the_telemetry_fed_checks():
    assert runner.scheduled(["G1", "G3", "G4", "G5", "G6"]) == ["G1", "G5"]


def test_the_board_schedules_by_feed_and_cadence():
    board = Board()
    due = board.due(0.0)
    assert "G3" not in due and "G4" not in due and "G6" not in due  # judged from the sampler
    assert "G5" in due  # its kept result, read once
    board.finish(Verdict("G5", Status.UNKNOWN, "no kept result"), 0.0)
    board.finish(Verdict("G11", Status.OK, "quiet"), 0.0)
    cadence = REGISTRY["G11"].cadence_s
    assert "G5" not in board.due(1e9)  # the measurement itself is never automatic
    assert "G11" not in board.due(cadence - 0.001) and "G11" in board.due(cadence)
    cancel = board.start(["G11"], cadence)
    assert board.running() == ["G11"] and board["G11"].cancel is cancel and "G11" not in board.due(1e9)
    board.abort("G11", 10.0)
    assert board.running() == [] and board["G11"].next_due == 10.0 + cadence


def test_what_a_verdict_marks_travels_on_it_and_the_board_collects_it():
    v = runner.with_marks(Verdict("G6", Status.FAIL, "vLLM pid 777: no cap given, while training pid 101 runs"))
    assert v.marks == {777, 101}
    assert runner.with_marks(Verdict("G6", Status.OK, "pid 777 fits")).marks == frozenset()
    assert runner.with_marks(Verdict("G4", Status.FAIL, "pid 5 throttles")).marks == frozenset()  # G4 marks nothing
    board = Board()
    board.finish(v, 0.0)
    assert board.marked() == (frozenset({777, 101}), "G6")


def test_judge_fills_in_marks_and_timing(monkeypatch):
    rs = Readings({"processes": Reading("processes", None, error="x", started_at=100.0, took_s=2.0),
                   "meminfo": Reading("meminfo", None, error="y", started_at=101.0, took_s=0.5)})
    v = runner.judge(REGISTRY["G6"], rs, Config())
    assert v.status is Status.UNKNOWN and v.measured_at == pytest.approx(102.0) and v.took_s >= 2.0
