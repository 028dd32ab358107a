"""What G6 marks in the dashboard's process table (``Gotcha.marks``): the pids its finding names,
else those its evidence names; an ok or unknown verdict marks no one. The runner puts them on the
verdict (``Verdict.marks``), so the table needs no knowledge of G6."""

from __future__ import annotations

from sparktui import runner
from sparktui.core.verdict import Evidence, Status, Verdict
from sparktui.gotchas import REGISTRY
from sparktui.gotchas.g06_contention import marked_pids


def test_the_finding_names_the_pids_and_its_evidence_is_not_read_then():
    v = Verdict("G6", Status.FAIL, "vLLM pid 777: no cap given, while training pid 101 (job1) runs",
                evidence=(Evidence("vLLM pid 888 holds", "NVML", "3 GiB"),))
    assert marked_pids(v) == {777, 101}


def test_without_pids_in_the_finding_the_evidence_names_them():
    v = Verdict("G6", Status.WARN, "the pool is oversubscribed",
                evidence=(Evidence("vLLM pid 888 holds", "NVML", "3 GiB"), Evidence("pid 9 (train.py)", "psutil", "1 GiB")))
    assert marked_pids(v) == {888, 9}


def test_an_ok_or_unknown_verdict_marks_no_one_and_no_pid_marks_no_one():
    assert marked_pids(Verdict("G6", Status.OK, "pid 777 fits")) == frozenset()
    assert marked_pids(Verdict("G6", Status.UNKNOWN, "cannot see pid 777")) == frozenset()
    assert marked_pids(Verdict("G6", Status.FAIL, "oversubscribed", evidence=(Evidence("pool", "meminfo", 1),))) == frozenset()
    assert marked_pids(Verdict("G6", Status.WARN, "a pid of 5 and pid5 are not pids")) == frozenset()


def test_g6_declares_its_marks_and_the_runner_puts_them_on_the_verdict():
    assert REGISTRY["G6"].marks is marked_pids and REGISTRY["G6"].shows == "processes"
    v = runner.with_marks(Verdict("G6", Status.FAIL, "vLLM pid 4242: no cap given"))
    assert v.marks == {4242}
