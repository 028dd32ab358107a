"""G6 inside a container whose NVML lists nothing: the verdict stays "cannot tell", and what was
seen is still shown.

On the lent H100 (a VM the container probe took for a container, from /proc/1/cgroup) NVML answered
with an empty process list; the judge returned "cannot tell: host processes not visible" before it
built its view, so the training job it did see (pid, command line) was in neither the details nor
the evidence. Every verdict carries what it was based on: the same unknown, the same words, and the
processes seen listed as on the normal path, with the pool. Readings are built as in
tests/gotchas/g06/test_rules.py (GB10's numbers, docs/reference/FACTS.md).
"""

from __future__ import annotations

import pytest

from sparktui.core.verdict import Status
from sparktui.gotchas import g06_contention as g6
from tests.gotchas.builders import GIB, g6_history as history, g6v, job, snap, vllm

CANNOT_SEE = "cannot tell: host processes not visible (inside a container, NVML's process list is empty)"
UNCLEAR = ("cannot tell: NVML lists no GPU process and it is unclear whether this is a container (where the list "
           "is always empty)")
HOSTILE = "python3 train.py \x1b]2;TITLE\x07 \u202eevil\n## G6 verdict corrected: ok"


def unlisted_job(pid: int = 3310, **kw) -> dict:
    """A training job the scan saw that NVML's (empty) list does not name."""
    return job(pid, None, listed=False, **kw)


def ev_of(v) -> dict:
    return {e.what: e.value for e in v.evidence}


def details_for(v, pid: int) -> list[str]:
    return [d for d in v.details if d.startswith(f"pid {pid} ")]


# -- the container case: unknown, and the processes seen --------------------------------------------

def test_a_job_seen_in_a_container_with_an_empty_nvml_list_is_named_in_the_details():
    v = g6v(snap(unlisted_job(3310), count=0, inside=True))
    assert v.status is Status.UNKNOWN and v.summary == CANNOT_SEE
    (line,) = details_for(v, 3310)
    assert "training" in line and line.endswith("python3 torchrun")  # kind and command line, as on the host
    assert v.fix == g6.FIND_FIX  # run it on the host: the fix the verdict had


def test_the_evidence_keeps_its_first_lines_and_adds_the_job_and_the_pool():
    v = g6v(snap(unlisted_job(3310), count=0, inside=True))
    assert [e.what for e in v.evidence] == ["NVML GPU process list", "inside a container",
                                            "training pid 3310 (torchrun)", "the pool"]
    ev = ev_of(v)
    assert ev["NVML GPU process list"] == "0 process(es)" and ev["inside a container"] == "yes"
    # not "nothing on the GPU": inside a container NVML's list may not show it
    assert ev["training pid 3310 (torchrun)"].startswith("gpu unknown: not in NVML's list, which may not show it here")
    assert ev["the pool"] == "MemTotal 121.7 GiB, MemAvailable 100.0 GiB"


def test_a_server_and_a_job_in_the_container_are_both_listed_and_the_verdict_is_still_unknown():
    """An uncapped vLLM beside a job would fail on a host; here the host is unseen: no rule judges."""
    v = g6v(snap(vllm(5120, 0.9, None, listed=False), unlisted_job(3310), count=0, inside=True))
    assert v.status is Status.UNKNOWN and v.summary == CANNOT_SEE
    assert details_for(v, 5120) and details_for(v, 3310)
    ev = ev_of(v)
    assert ev["vLLM pid 5120 memory cap"].startswith("0.9 (--gpu-memory-utilization 0.9)")
    assert "training pid 3310 (torchrun)" in ev and "the pool" in ev
    assert not any(e.what == "also" for e in v.evidence)  # no rule's finding rides along


def test_the_command_line_in_the_details_is_the_data_exact():
    """The details hold the argv as data (the renderers show it inert; --json keeps it exact)."""
    row = unlisted_job(3310)
    row["command"] = HOSTILE
    v = g6v(snap(row, count=0, inside=True))
    (line,) = details_for(v, 3310)
    assert line.endswith(HOSTILE)


def test_an_unread_pool_is_said_in_the_evidence():
    v = g6v(snap(unlisted_job(3310), count=0, inside=True), meminfo=False)
    assert v.summary == CANNOT_SEE and ev_of(v)["the pool"].startswith("MemTotal unread")


def test_nothing_seen_in_the_container_lists_nothing():
    v = g6v(snap(count=0, inside=True))
    assert v.status is Status.UNKNOWN and v.summary == CANNOT_SEE and v.details == ()
    assert [e.what for e in v.evidence] == ["NVML GPU process list", "inside a container", "the pool"]


def test_a_recording_made_in_a_container_carries_the_details_of_its_snapshots():
    v = g6v(history(snap(unlisted_job(3310), count=0, inside=True, t=1.0),
                    snap(unlisted_job(3310), count=0, inside=True, t=11.0)))
    assert v.status is Status.UNKNOWN and v.summary.startswith(CANNOT_SEE)
    assert details_for(v, 3310)


# -- the other answers to "is this a container?" are as they were --------------------------------

@pytest.mark.parametrize("inside,status,summary,held", [
    (False, Status.OK, "one job on the pool: training pid 3310 (torchrun)", "gpu nothing (not in NVML's list)"),
    (None, Status.UNKNOWN, UNCLEAR, "gpu unknown: not in NVML's list, which may not show it here"),
])
def test_on_a_host_or_where_it_is_unclear_the_verdict_is_unchanged(inside, status, summary, held):
    v = g6v(snap(unlisted_job(3310), count=0, inside=inside))
    assert v.status is status and v.summary == summary
    assert [e.what for e in v.evidence] == ["NVML GPU process list", "inside a container",
                                            "training pid 3310 (torchrun)", "the pool"]
    assert ev_of(v)["training pid 3310 (torchrun)"].startswith(held)
    (line,) = details_for(v, 3310)
    assert line.endswith("python3 torchrun")


def test_inside_a_container_with_a_listed_process_is_unchanged():
    v = g6v(snap(job(3310, GIB), inside=True))
    assert v.summary == ("cannot tell: host processes not visible (inside a container, only its own 1 server/job "
                         "process(es) are seen)")
    assert details_for(v, 3310) and "the pool" in ev_of(v)
