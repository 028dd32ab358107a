"""G6's fix blocks, its evidence rows and a few edges, pinned: a mutation run on 2026-12-05 (50%
sample) left these undetected. Fix texts matter here: a wrong block stops the wrong process, or
tells the user to re-cap a server that is already within the cap."""

from __future__ import annotations

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.validate import MEMTOTAL_MAX_BYTES
from sparktui.core.verdict import Status
from sparktui.gotchas import g06_contention as g6
from tests.gotchas.builders import GIB, T0
from tests.gotchas.builders import (ENGINE_CORE, LORA, MEMTOTAL as TOTAL, g6_history as history,
                                    g6_readings as readings, g6v, job, ollama, server, snap, vllm)


def blocks_for(fix: str) -> list[str]:
    return [b for b in fix.split("```") if "kill " in b]


def test_servers_at_the_cap_are_stopped_but_never_told_to_take_the_cap_again():
    v = g6v(snap(vllm(2141, 0.5, 40 * GIB), server(4000, "sglang", 30 * GIB, state="set", fraction=0.5)))
    assert v.status is Status.WARN, v.summary  # two caps of 0.5 add up past 0.5
    assert v.fix.startswith("One heavy job per pool. Stop what you do not need before a long run; each block stops one:\n")
    assert len(blocks_for(v.fix)) == 2
    assert "Or keep a server with an explicit cap" not in v.fix  # at the cap is within it, not over


def test_a_server_over_the_cap_gets_its_stop_block_and_its_restart_with_the_cap():
    v = g6v(snap(vllm(5120, 0.9, ENGINE_CORE), job(3310, LORA)))
    assert v.fix.startswith("One heavy job per pool.")
    assert "Or keep a server with an explicit cap of 0.5 of the pool" in v.fix
    assert "kill 5120" in v.fix and "--gpu-memory-utilization 0.5" in v.fix


def test_a_server_known_to_hold_nothing_gets_no_stop_block():
    v = g6v(snap(ollama(7000), job(3310, LORA), job(3320, LORA, name="accelerate")))
    assert v.status is Status.WARN and "uncapped jobs" in v.summary
    fix = v.fix
    assert "kill 3310" in fix and "kill 3320" in fix and "kill 7000" not in fix
    assert "Ollama holds only the models it has loaded" in fix  # an Ollama server: its unload, not its stop
    assert "llama.cpp allocates" not in fix


def test_llama_cpp_gets_its_sizing_note_and_only_it():
    v = g6v(snap(server(8000, "llamacpp", 20 * GIB, name="llama-server"), job(3310, LORA), job(3320, LORA)))
    assert "llama.cpp allocates its model and context up front and keeps that (`-ngl`, `--ctx-size`)" in v.fix
    assert "Ollama holds only" not in v.fix


def test_memtotal_up_to_the_largest_possible_is_used_and_one_byte_more_is_an_error():
    assert g6.read_pool(readings(None, total=MEMTOTAL_MAX_BYTES)).total == MEMTOTAL_MAX_BYTES
    pool = g6.read_pool(readings(None, total=MEMTOTAL_MAX_BYTES + 1))
    assert pool.total is None and pool.unread == "MemTotal unusable (measurement error)"


def test_a_fraction_server_grows_only_by_what_it_has_yet_to_take():
    full = int(0.5 * TOTAL)
    v = g6v(snap(vllm(2141, 0.5, full)), available=1 * GIB)
    assert v.status is Status.OK, v.summary
    v = g6v(snap(vllm(2141, 0.5, full - GIB)), available=GIB // 2)  # still 1 GiB to take, 0.5 GiB free
    assert v.status is Status.WARN and "MemAvailable" in v.summary, v.summary


def test_the_evidence_of_a_failed_scan_and_of_an_unread_pool():
    v = g6v(snap(scan_error="process scan failed: PermissionError"))
    assert ("process scan", "psutil", "process scan failed: PermissionError") in [
        (e.what, e.source, e.value) for e in v.evidence]
    v = g6v(snap(job(3310, LORA)), meminfo=False)
    assert ("the pool", "/proc/meminfo", "MemTotal unread: probe 'meminfo' was not run") in [
        (e.what, e.source, e.value) for e in v.evidence]


def test_a_finding_keeps_its_detail_lines_in_a_snapshot_and_in_a_review():
    bad = snap(vllm(5120, 0.9, ENGINE_CORE), job(3310, LORA), t=T0)
    v = g6v(bad)
    assert v.status is Status.FAIL and len(v.details) == 2 and v.details[0].startswith("pid 5120    server")
    r = g6v(history(bad, dict(bad, t=T0 + 60)), t0=T0)
    assert r.status is Status.FAIL and r.details == v.details


def test_a_review_blind_for_more_than_a_tenth_gets_the_find_fix():
    blind = snap(t=T0, scan_error="process scan failed: OSError")
    v = g6v(history(blind, snap(job(3310, LORA), t=T0 + 60)), t0=T0)
    assert v.status is Status.UNKNOWN and v.fix == g6.FIND_FIX
    assert [(e.what, e.source) for e in v.evidence][:3] == [
        ("worst moment", "test scan"), ("process snapshots judged", "test scan"), ("snapshot not judged", "test scan")]


def test_a_review_without_meminfo_times_counts_from_the_first_sample():
    r = readings(history(snap(job(3310, LORA), t=T0 + 120), snap(job(3310, LORA), t=T0 + 180)))
    r.add(Reading("telemetry", {"samples": [{"t": T0, "gpus": []}, {"t": T0 + 60, "gpus": []}], "review": True}))
    v = g6.judge(r, Config())
    assert v.status is Status.OK and "(worst at 16:02:00 UTC (+00:02:00);" in v.summary, v.summary


def test_no_process_reading_is_unknown_naming_the_process_list():
    r = Readings()
    r.add(Reading("processes", None, error="psutil missing"))
    v = g6.judge(r, Config())
    assert v.summary == "cannot tell: process list unavailable (psutil missing)"
    assert [(e.what, e.value) for e in v.evidence] == [("process list", "unavailable: psutil missing")]
