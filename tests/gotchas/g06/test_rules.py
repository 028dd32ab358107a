"""G6's judge on hand-built readings: every rule, each threshold just below and just above.

Numbers are GB10's (docs/reference/FACTS.md, docs/reference/FIELD-FACTS.md): MemTotal 121.7 GiB (127,611,700 kB), a vLLM
``VLLM::EngineCore`` holding 89093 MiB, vLLM at 0.5 and at its 0.9 default, a <4 GB LoRA beside a
server capped at 0.5, an idle ``ollama serve``, a llama.cpp server holding a fixed 5 GiB. The real
process scan behind these readings is tested in tests/gotchas/g06/test_process_scan.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.recording import read_recording, readings_from_recording
from sparktui.core.verdict import Status
from sparktui.gotchas import g06_contention as g6
from sparktui.gotchas.g06_contention import judge
from tests.gotchas.builders import DEMO, GIB, T0
from tests.gotchas.builders import (ENGINE_CORE, LORA, MEMTOTAL as TOTAL, MIB, g6_history as history,
                                    g6_readings as readings, g6v, job, ollama, server, snap, vllm, vllm_cap as cap)

SMALL = 512 * MIB  # SMALL_GPU_BYTES: the numbers below are literal, so a changed constant is noticed
HEADROOM = 0.9  # HEADROOM_FRACTION


# -- building readings ---------------------------------------------------------------------------


def status(data: dict | None, **kw: Any) -> str:
    return g6v(data, **kw).status.value


# -- docs/reference/FACTS.md and docs/reference/FIELD-FACTS.md cases (issue 12, class 6) ------------------------------------------

def test_vllm_capped_at_half_beside_a_small_lora_is_fine():
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, LORA)))
    assert v.status is Status.OK, v.summary
    assert v.summary == ("vLLM pid 2141 capped at 0.5 beside training pid 3310 (torchrun): 64.4 GiB of the "
                         "121.7 GiB pool at most (capped coexistence)")
    ev = {e.what: e.value for e in v.evidence}
    assert ev["vLLM pid 2141 holds"] == "58.0 GiB" and ev["vLLM pid 2141 can take"].startswith("60.9 GiB at most")
    assert ev["the pool"] == "MemTotal 121.7 GiB, MemAvailable 100.0 GiB"


def test_uncapped_vllm_at_its_default_beside_training_fails_and_names_both():
    v = g6v(snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), job(3310, 16 * GIB)))
    assert v.status is Status.FAIL
    assert v.summary.startswith("vLLM pid 5120: no cap given (default 0.9), while training pid 3310 (torchrun) runs")
    assert any(e.what == "also" and "more than the 121.7 GiB pool" in e.value for e in v.evidence)


def test_uncapped_vllm_alone_warns():
    v = g6v(snap(vllm(5120, 0.9, ENGINE_CORE)))
    assert v.status is Status.WARN and v.summary == "vLLM pid 5120: capped at 0.9, over 0.5: it competes with anything started next"


def test_sglang_without_its_fraction_is_a_large_share():
    row = server(7000, "sglang", 60 * GIB, name="sglang::scheduler", state="default")
    assert status(snap(row)) == "warn"
    v = g6v(snap(row, job(3310, LORA)))
    assert v.status is Status.FAIL and "SGLang pid 7000: no cap given (default: a large share)" in v.summary


def test_an_idle_ollama_serve_beside_training_is_ok_and_said():
    v = g6v(snap(ollama(4000), job(3310, 70 * GIB)))
    assert v.status is Status.OK, v.summary
    assert v.summary == ("one job on the pool: training pid 3310 (torchrun); "
                         "Ollama pid 4000 holds nothing on the GPU (idle: no model loaded)")


def test_ollama_with_a_loaded_model_counts_what_its_runner_holds():
    assert status(snap(ollama(4000, 20 * GIB, loaded=True), job(3310, 70 * GIB))) == "ok"  # 90 of 121.7
    v = g6v(snap(ollama(4000, 40 * GIB, loaded=True), job(3310, 75 * GIB)))  # 115 of 121.7: over 90%
    assert v.status is Status.WARN
    assert v.summary == ("Ollama pid 4000 holds 40.0 GiB, training pid 3310 (torchrun) holds 75.0 GiB: 115.0 GiB "
                         "of the 121.7 GiB pool, under 10% left")
    v = g6v(snap(ollama(4000, 50 * GIB, loaded=True), job(3310, 75 * GIB)))
    assert v.status is Status.FAIL and "125.0 GiB, more than the 121.7 GiB pool" in v.summary


def test_a_llamacpp_server_holding_a_fixed_5_gib_with_38_available_beside_a_job_is_ok():
    v = g6v(snap(server(6000, "llamacpp", 5 * GIB, name="llama-server"), job(3310, 70 * GIB)), available=38 * GIB)
    assert v.status is Status.OK, v.summary
    assert v.summary.startswith("llama.cpp pid 6000 holding 5.0 GiB beside training pid 3310 (torchrun): 75.0 GiB")
    ev = {e.what: e.value for e in v.evidence}
    assert ev["llama.cpp pid 6000 can take"].startswith("what it holds")


def test_a_server_alone_that_is_not_fractional_is_judged_by_what_it_holds():
    assert g6v(snap(server(6000, "llamacpp", 30 * GIB, name="llama-server"))).summary == \
        "llama.cpp pid 6000 holds 30.0 GiB, alone on the pool"
    assert status(snap(server(6100, "triton", 30 * GIB, name="tritonserver"))) == "ok"


def test_nothing_on_the_pool():
    assert g6v(snap()).summary == "no inference server or other GPU process on the pool"


def test_a_helper_without_gpu_memory_is_not_a_server():
    router = server(8000, "tgi", None, listed=False, name="text-generation-router")
    router["kind"] = "other"
    assert g6v(snap(router, job(3310, 70 * GIB))).summary == "one job on the pool: training pid 3310 (torchrun)"


# -- thresholds: just below and just above ---------------------------------------------------------

@pytest.mark.parametrize("fraction,expected", [(0.5, "ok"), (0.51, "fail")])
def test_server_cap_ok_fraction_boundary(fraction, expected):
    assert status(snap(vllm(2141, fraction, int(fraction * TOTAL) - GIB), job(3310, LORA))) == expected


@pytest.mark.parametrize("fraction,expected", [(0.6, "ok"), (0.61, "fail")])
def test_server_cap_ok_fraction_comes_from_the_config(fraction, expected):
    cfg = Config().with_overrides(memory={"server_cap_ok_fraction": 0.6})
    assert g6v(snap(vllm(2141, fraction, 50 * GIB), job(3310, LORA)), cfg).status.value == expected


@pytest.mark.parametrize("delta,expected", [(-MIB, "ok"), (MIB, "warn")])
def test_headroom_fraction_boundary(delta, expected):
    """vLLM at 0.5 takes half the pool; a job of 40% of it brings the sum to HEADROOM_FRACTION."""
    j = int((HEADROOM - 0.5) * TOTAL) + delta
    assert status(snap(vllm(2141, 0.5, 58 * GIB), job(3310, j))) == expected


@pytest.mark.parametrize("delta,expected", [(-MIB, "warn"), (MIB, "fail")])
def test_pool_boundary(delta, expected):
    j = int(0.5 * TOTAL) + delta
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, j)))
    assert v.status.value == expected, v.summary


def test_a_server_already_holding_more_than_its_cap_counts_what_it_holds():
    """TRT-LLM's fraction is of what the weights leave: it can hold more than fraction x MemTotal."""
    trt = server(9000, "trtllm", 80 * GIB, name="trtllm-serve", state="set", fraction=0.3)
    v = g6v(snap(trt, job(3310, 35 * GIB)))  # 80 + 35 = 115 of 121.7, where 0.3 x MemTotal would say 71.5
    assert v.status is Status.WARN and "TensorRT-LLM pid 9000 up to 80.0 GiB" in v.summary


@pytest.mark.parametrize("held,expected", [(SMALL - 1, "warn"), (SMALL, "fail")])
def test_small_gpu_bytes_boundary(held, expected):
    """An unnamed compute process under 512 MiB is not a job; at 512 MiB it is, and the uncapped
    vLLM beside it fails."""
    other = job(9100, held, kind="gpu-process", name="python3")
    v = g6v(snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), other))
    assert v.status.value == expected, v.summary


def test_graphics_clients_and_na_compute_processes():
    xorg = job(1500, 2 * GIB, kind="gpu-process", name="Xorg", gpu_list="graphics")
    assert status(snap(vllm(5120, 0.9, ENGINE_CORE), xorg)) == "warn"  # a desktop is not a job
    na = job(9100, None, kind="gpu-process", name="python3")  # N/A is not "tiny"
    assert status(snap(vllm(5120, 0.9, ENGINE_CORE), na)) == "fail"


@pytest.mark.parametrize("second,expected", [(0.25, "ok"), (0.26, "warn")])
def test_capped_servers_adding_up_past_the_cap(second, expected):
    v = g6v(snap(vllm(2141, 0.25, 28 * GIB), vllm(2241, second, 28 * GIB)))
    assert v.status.value == expected, v.summary
    if expected == "warn":
        assert v.summary.startswith("2 capped servers add up to 0.51 of memory")


def test_two_jobs_warn_one_does_not():
    assert status(snap(job(3310, 10 * GIB))) == "ok"
    v = g6v(snap(job(3310, 10 * GIB), job(4410, 10 * GIB, name="train_dpo.py")))
    assert v.status is Status.WARN and v.summary.startswith("2 uncapped jobs share the pool: training pid 3310")


@pytest.mark.parametrize("delta,expected", [(MIB, "ok"), (-MIB, "warn")])
def test_a_starting_server_that_can_take_more_than_is_available_warns(delta, expected):
    """vLLM at 0.5 still starting (10 GiB held) can take 0.5 x MemTotal - 10 GiB more."""
    grow = int(0.5 * TOTAL) - 10 * GIB
    v = g6v(snap(vllm(2141, 0.5, 10 * GIB)), available=grow + delta)
    assert v.status.value == expected, v.summary
    if expected == "warn":
        assert v.summary.startswith("vLLM pid 2141 can still take 50.9 GiB (up to its cap): more than the")


def test_the_growth_rule_is_live_only():
    """In review MemAvailable is the recording's lowest moment, not this snapshot's."""
    s = snap(vllm(2141, 0.5, 10 * GIB), t=T0)
    data = dict(s, history=[s], review=True)
    assert status(data, available=GIB) == "ok"


# -- N/A is never zero (class 1) ---------------------------------------------------------------------

def test_a_job_with_na_memory_beside_a_capped_server_is_unknown():
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3325, None)))
    assert v.status is Status.UNKNOWN
    assert v.summary == ("cannot tell whether it fits the pool: training pid 3325 (torchrun) holds an unknown amount "
                         "(N/A: NVML lists pid 3325 without a figure); the rest add up to 60.9 GiB of 121.7 GiB")


def test_na_does_not_hide_what_the_known_parts_already_decide():
    assert status(snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), job(3325, None))) == "fail"  # by the cap
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, 62 * GIB), ollama(4000, None, loaded=True)))
    assert v.status is Status.FAIL and "more than the 121.7 GiB pool; and Ollama pid 4000 holds an unknown amount" in v.summary
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, 50 * GIB), ollama(4000, None, loaded=True)))
    assert v.status is Status.WARN and "GiB at least of the 121.7 GiB pool" in v.summary


def test_na_that_decides_nothing_stays_out_of_the_way():
    assert g6v(snap(job(3325, None))).summary == "one job on the pool: training pid 3325 (torchrun)"
    # a fraction server's N/A holding is bounded by its cap
    assert status(snap(vllm(2141, 0.5, None), job(3310, LORA))) == "ok"


def test_resident_memory_is_not_gpu_memory():
    """docs/reference/FIELD-FACTS.md: 1.8 GiB RSS while holding 77 GiB. A job NVML does not list holds nothing on
    the GPU, whatever its RSS; the old RSS fallback is gone."""
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, None, listed=False, rss=80 * GIB)))
    assert v.status is Status.OK and "60.9 GiB of the 121.7 GiB pool" in v.summary
    ev = {e.what: e.value for e in v.evidence}
    assert ev["training pid 3310 (torchrun)"].startswith("gpu nothing (not in NVML's list), rss 80.0 GiB")


def test_without_nvml_every_holding_is_unknown():
    v = g6v(snap(vllm(2141, 0.5, None, listed=False), job(3310, None, listed=False), nv_ok=False))
    assert v.status is Status.UNKNOWN and "training pid 3310 (torchrun) holds an unknown amount" in v.summary
    v = g6v(snap(nv_ok=False))
    assert v.status is Status.UNKNOWN and v.summary.startswith("cannot tell: NVML process list unavailable")
    assert status(snap(vllm(5120, 0.9, None, listed=False, state="default"), job(3310, None, listed=False),
                       nv_ok=False)) == "fail"  # the cap decides without NVML


# -- a failed reading is not an empty machine (class 2) ---------------------------------------------

def test_a_scan_error_cannot_see_even_with_an_empty_list():
    for data in ({"nvml": {"ok": True, "count": 0}, "scan_error": "process scan failed: PermissionError(13)"},
                 dict(snap(), scan_error="process scan failed: PermissionError(13)")):
        v = g6v(data)
        assert v.status is Status.UNKNOWN and v.summary == "cannot see the processes: process scan failed: PermissionError(13)"


def test_a_missing_reading_or_field_is_unknown():
    assert status(None) == "unknown"
    assert "has no rows field" in g6v({"nvml": {"ok": True, "count": 0}, "container": {"inside": False}}).summary


@pytest.mark.parametrize("kw,why", [({"meminfo": False}, "MemTotal unread: probe 'meminfo' was not run"),
                                    ({"total": None}, "MemTotal unread: /proc/meminfo has no MemTotal")])
def test_memtotal_unread_is_unknown_when_a_job_must_be_weighed(kw, why):
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, LORA)), **kw)
    assert v.status is Status.UNKNOWN and v.summary.endswith(f"fit the pool: {why}")
    assert status(snap(job(3310, LORA)), **kw) == "ok"  # one job alone needs no MemTotal


# -- values the hardware cannot produce (class 3) ------------------------------------------------------

@pytest.mark.parametrize("held,expected", [(TOTAL, "ok"), (TOTAL + 1, "unknown"), (0, "ok"), (-1, "unknown")])
def test_a_process_holding_more_than_the_pool_or_less_than_nothing(held, expected):
    v = g6v(snap(job(3310, held)))
    assert v.status.value == expected, v.summary
    if expected == "unknown":
        assert v.summary.startswith("cannot tell: measurement error: pid 3310 holds")


@pytest.mark.parametrize("total", [0, -1024, "121 GB", True])
def test_an_impossible_memtotal_is_a_measurement_error(total):
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, LORA)), total=total)
    assert v.status is Status.UNKNOWN and f"measurement error: MemTotal {total!r}" in v.summary


@pytest.mark.parametrize("available,expected", [(TOTAL, "ok"), (TOTAL + 1, "unknown"), (-1, "unknown")])
def test_memavailable_outside_the_pool_is_a_measurement_error(available, expected):
    assert status(snap(vllm(2141, 0.5, 58 * GIB), job(3310, LORA)), available=available) == expected


@pytest.mark.parametrize("fraction,expected", [(1.0, "warn"), (1.5, "unknown"), (0.0, "unknown")])
def test_a_cap_outside_a_share_of_the_pool_is_a_measurement_error(fraction, expected):
    assert status(snap(vllm(2141, fraction, 58 * GIB))) == expected


def test_a_measurement_error_does_not_hide_a_failure_it_does_not_touch():
    v = g6v(snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), job(3310, 16 * GIB)), total=0)
    assert v.status is Status.FAIL
    assert any(e.what == "also" and "measurement error: MemTotal 0" in e.value for e in v.evidence)


# -- what NVML cannot show (class 7) -------------------------------------------------------------------

def test_inside_a_container_it_cannot_see_the_host():
    v = g6v(snap(inside=True))
    assert v.status is Status.UNKNOWN and "host processes not visible" in v.summary
    v = g6v(snap(job(491, GIB), inside=True))  # the container's own process is listed; the host's never are
    assert v.status is Status.UNKNOWN and "host processes not visible" in v.summary
    assert status(snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), job(3310, 16 * GIB), inside=True)) == "fail"


def test_an_empty_list_where_a_container_cannot_be_ruled_out():
    v = g6v(snap(inside=None))
    assert v.status is Status.UNKNOWN and "unclear whether this is a container" in v.summary
    assert status(snap(inside=False)) == "ok"


def test_a_cap_that_cannot_be_read_is_unknown():
    nim = server(7100, "nim", 40 * GIB, name="nim_llm", state="unreadable")
    v = g6v(snap(nim))
    assert v.status is Status.UNKNOWN and v.summary == "cannot tell: memory cap unreadable for NIM pid 7100 (nim's cap)"
    rows = vllm(2141, 0.5, 58 * GIB)
    for r in rows:
        r["cap"] = None
    assert g6v(snap(rows)).summary == "cannot tell: memory cap unreadable for vLLM pid 2141 (cap not found)"


# -- sparktui is not the workload (class 9) ------------------------------------------------------------

def test_sparktuis_own_probe_script_in_an_older_snapshot_is_not_a_job():
    """The H200 snapshot's process list holds sparktui's target probe, classified then as Unsloth training."""
    probe = job(626, None, listed=False, name="unsloth")
    probe["command"] = ("/opt/torch/.venv/bin/python3 /work/main/src/sparktui/probes/target_script.py --fd 9 "
                        "--mode torch --skip  --packages torch,unsloth,vllm")
    v = g6v(snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), probe))
    assert v.status is Status.WARN, v.summary  # alone, not "while training pid 626 runs"
    assert any(e.what == "sparktui's own processes" for e in v.evidence)
    user = job(700, 20 * GIB, name="train.py")
    user["command"] = "/venv/bin/python3 train.py --model unsloth/Llama-3.2-1B"
    assert not g6.is_sparktui_own(user) and g6.is_sparktui_own(probe)


# -- review mode: every snapshot, the worst one and when (class 4) -----------------------------------


def test_review_reports_the_worst_snapshot_and_when():
    ok = snap(vllm(2141, 0.5, 58 * GIB), job(3310, LORA), t=T0)
    bad = snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), job(3310, 16 * GIB), t=T0 + 1080)
    later = snap(job(3310, 16 * GIB), t=T0 + 1500)
    v = g6v(history(ok, bad, later), t0=T0)
    assert v.status is Status.FAIL
    assert v.summary.endswith("(worst at 16:18:00 UTC (+00:18:00); fail in 1 of 3 process snapshots)")
    ev = {e.what: e.value for e in v.evidence}
    assert ev["worst moment"] == "16:18:00 UTC (+00:18:00)" and ev["process snapshots judged"] == "1 fail, 2 ok"


def test_review_picks_the_earliest_of_the_worst_and_fail_over_warn():
    warn = snap(vllm(5120, 0.9, ENGINE_CORE), t=T0 + 60)
    fail1 = snap(vllm(5120, 0.9, ENGINE_CORE), job(3310, GIB), t=T0 + 120)
    fail2 = snap(vllm(5120, 0.9, ENGINE_CORE), job(3310, 2 * GIB), t=T0 + 180)
    v = g6v(history(warn, fail1, fail2))  # no t0 in meminfo: offsets from the first snapshot
    assert v.status is Status.FAIL and "(worst at 16:02:00 UTC (+00:01:00); fail in 2 of 3" in v.summary


def test_review_names_snapshots_that_could_not_be_judged():
    blind = snap(t=T0, scan_error="process scan failed: OSError")
    v = g6v(history(blind, *[snap(job(3310, LORA), t=T0 + 60 * i) for i in range(1, 10)]), t0=T0)
    assert v.status is Status.OK and v.summary.endswith("ok in 9 of 10 process snapshots; 1 could not be judged)")
    ev = {e.what: e.value for e in v.evidence}
    assert ev["snapshot not judged"].startswith("16:00:00 UTC (+00:00:00): cannot see the processes")
    v = g6v(history(blind, dict(blind, t=T0 + 60)), t0=T0)
    assert v.status is Status.UNKNOWN and "unknown in 2 of 2" in v.summary


def test_the_shipped_demo_recording_fails_when_the_uncapped_server_came_up():
    r = readings_from_recording(read_recording(DEMO))
    v = judge(r, Config())
    assert v.status is Status.FAIL and v.summary.startswith("vLLM pid 5120: no cap given (default 0.9")
    assert "while training pid 3310 (torchrun) runs on the same pool (worst at 16:18:00 UTC (+00:18:00); fail in " in v.summary


def test_live_mode_judges_the_latest_snapshot_only():
    s = snap(vllm(5120, 0.9, ENGINE_CORE), job(3310, GIB))
    data = dict(snap(job(3310, GIB)), history=[s])  # a history without "review" is not a review
    assert status(data) == "ok"


# -- exactly at a limit, and the smaller guards ---------------------------------------------------

def test_exactly_at_the_pool_or_the_headroom_is_not_over_it():
    half = int(0.5 * TOTAL)  # vLLM at 0.5 takes exactly this
    assert status(snap(vllm(2141, 0.5, 58 * GIB), job(3310, TOTAL - half))) == "warn"  # the whole pool: not more
    assert status(snap(vllm(2141, 0.5, 58 * GIB), job(3310, int(0.4 * TOTAL)))) == "ok"  # exactly 90%


def test_the_container_reading_answers_when_the_scan_could_not_tell():
    r = readings(snap(job(491, GIB), inside=None))
    r.add(Reading("container", {"in_container": True}))
    v = judge(r, Config())
    assert v.status is Status.UNKNOWN and "host processes not visible" in v.summary
    r.add(Reading("container", {"in_container": False}))
    assert judge(r, Config()).status is Status.OK


def test_absence_from_a_list_nvml_did_read_is_nothing_held():
    # NVML lists others (count > 0) on the host: an unlisted server holds nothing
    assert status(snap(ollama(4000), job(3310, 70 * GIB), inside=False)) == "ok"
    # the container question open: a listed process does not settle it (a container's own job is listed)
    assert g6v(snap(ollama(4000), job(3310, 70 * GIB), inside=None)).summary == (
        "cannot tell: unclear whether this is a container, where the host's processes are not seen")
    # on the host an empty list is read too: a job not in it holds nothing on the GPU
    assert g6v(snap(job(3310, None, listed=False), inside=False)).summary == "one job on the pool: training pid 3310 (torchrun)"


def test_a_worker_whose_launcher_is_gone_still_belongs_to_its_server():
    worker = job(2300, 20 * GIB, kind="gpu-process", name="python3")
    core = vllm(2141, 0.9, ENGINE_CORE, state="default")[1]
    worker["group"] = core["group"] = 2000  # the launcher (pid 2000) exited between the scans
    v = g6v(snap(worker, core))
    assert v.status is Status.WARN and v.summary.startswith("vLLM pid 2000: no cap given (default 0.9)")


def test_evidence_says_what_each_server_holds_and_can_take():
    v = g6v(snap(ollama(4000, 20 * GIB, loaded=True), server(6000, "llamacpp", 5 * GIB, name="llama-server"),
                 job(3310, 10 * GIB), skipped={"vanished": 2, "denied": 1}))
    ev = {e.what: e.value for e in v.evidence}
    assert ev["Ollama pid 4000 holds"] == "20.0 GiB"
    assert ev["Ollama pid 4000 can take"] == "what it holds, plus any model it loads on request (size unknown)"
    assert ev["Ollama pid 4000 memory cap"] == "none: ollama's cap"
    assert ev["llama.cpp pid 6000 can take"] == "what it holds (allocates its model and context up front)"
    assert ev["processes skipped mid-scan"] == "2 exited, 1 denied"


def test_nvml_unavailable_names_what_the_name_scan_found():
    assert g6v(snap(nv_ok=False)).summary.endswith("name scan found no server or training process")
    assert g6v(snap(job(3310, None, listed=False), nv_ok=False)).summary.endswith(
        "name scan found training pid 3310 (torchrun)")


def test_an_nvml_summary_that_is_null_does_not_crash():
    v = g6v({"rows": [], "nvml": None, "container": {"inside": False}})
    assert v.status is Status.UNKNOWN and "NVML process list unavailable" in v.summary


def test_review_offsets_from_the_first_sample_when_meminfo_has_no_start():
    r = readings(history(snap(t=T0 + 600), snap(vllm(5120, 0.9, ENGINE_CORE), t=T0 + 660)))
    r.add(Reading("telemetry", {"samples": [{"t": T0}, {"t": T0 + 660}]}))
    v = judge(r, Config())
    assert v.status is Status.WARN and "(worst at 16:11:00 UTC (+00:11:00); warn in 1 of 2" in v.summary


def test_a_server_capped_exactly_at_the_limit_counts_among_the_capped():
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), vllm(2241, 0.25, 28 * GIB)))
    assert v.status is Status.WARN and v.summary.startswith("2 capped servers add up to 0.75 of memory: vLLM pid 2141 at 0.5")
    ev = {e.what: e.value for e in v.evidence}
    assert ev["vLLM pid 2141 memory cap"] == "0.5 (--gpu-memory-utilization 0.5): at or under 0.5"
    assert g6v(snap(vllm(2141, 0.5, 58 * GIB))).summary == "vLLM pid 2141 capped at 0.5, alone on the pool"


def test_the_most_specific_cap_of_an_instance_wins():
    rows = vllm(2141, 0.45, 52 * GIB)
    rows[1]["cap"] = cap(0.9, state="default")  # the worker's own argv says nothing; its launcher set 0.45
    assert g6v(snap(rows)).summary == "vLLM pid 2141 capped at 0.45, alone on the pool"
    rows[0]["cap"], rows[1]["cap"] = cap(0.9, state="default"), cap(0.3)
    assert g6v(snap(rows)).summary == "vLLM pid 2141 capped at 0.3, alone on the pool"
    nim = [server(7100, "nim", 40 * GIB, name="nim_llm", state="default"),
           server(7101, "nim", None, listed=False, name="nim worker", state="unreadable")]
    nim[1]["group"] = 7100
    v = g6v(snap(nim))  # unreadable is more specific than a default: the share is unknown
    assert v.status is Status.UNKNOWN and v.summary.startswith("cannot tell: memory cap unreadable for NIM pid 7100")
    assert {e.what: e.value for e in v.evidence}["NIM pid 7100 memory cap"] == "unreadable: nim's cap"
    nim[1]["cap"]["state"] = "none"  # default is more specific than none
    assert g6v(snap(nim)).summary == "NIM pid 7100: no cap given (default: a large share): it competes with anything started next"


def test_the_group_head_names_the_job_and_gives_its_details():
    rank = job(3325, 16 * GIB, name="train_lora.py", rss=6 * GIB)
    launcher = job(3310, None, listed=False, name="torchrun", rss=400 * MIB)
    rank["group"] = launcher["group"] = 3310
    v = g6v(snap(rank, launcher))  # the rank is listed first, as NVML's order puts it
    assert v.summary == "one job on the pool: training pid 3310 (torchrun)"
    assert {e.what: e.value for e in v.evidence}["training pid 3310 (torchrun)"].startswith("gpu 16.0 GiB, rss 0.4 GiB")
    assert v.details == ("pid 3310    training    torchrun                     gpu  16.0 GiB  rss   0.4 GiB  python3 torchrun",)
    na = job(3325, None, name="train_lora.py")
    assert g6v(snap(na)).details[0].startswith("pid 3325    training    train_lora.py                gpu       n/a  ")


@pytest.mark.parametrize("growth_delta,expected", [(0, "ok")])
def test_available_exactly_what_a_starting_server_can_take_is_enough(growth_delta, expected):
    grow = int(0.5 * TOTAL) - 10 * GIB
    assert status(snap(vllm(2141, 0.5, 10 * GIB)), available=grow + growth_delta) == expected


def test_memavailable_zero_is_a_reading_not_an_error():
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, LORA)), available=0)
    assert v.status is Status.WARN and "more than the 0.0 GiB still available" in v.summary


def test_list_seen_decides_whether_an_unlisted_process_holds_nothing():
    # an empty list whose container question is open: an unlisted job's holding is unknown
    v = g6v(snap(vllm(2141, 0.5, None, listed=False), job(3310, None, listed=False), inside=None))
    assert v.status is Status.UNKNOWN and v.summary.startswith(
        "cannot tell whether it fits the pool: training pid 3310 (torchrun) holds an unknown amount "
        "(unknown: not in NVML's list, which may not show it here)")
    # the same empty list on the host: nothing is on the GPU yet
    assert status(snap(vllm(2141, 0.5, None, listed=False), job(3310, None, listed=False), inside=False)) == "ok"


def test_malformed_rows_and_summaries_never_crash():
    data = snap(job(3310, LORA))
    data["rows"] = [{}, "x", *data["rows"]]
    assert status(data) == "ok"
    v = g6v({"rows": [], "nvml": {"ok": True}, "container": {"inside": None}})  # no count: none listed
    assert v.status is Status.UNKNOWN and "unclear whether this is a container" in v.summary
    v = g6v({"rows": [], "nvml": {"ok": True}, "container": {"inside": True}})
    assert v.summary == "cannot tell: host processes not visible (inside a container, NVML's process list is empty)"
    assert {e.what: e.value for e in v.evidence}["NVML GPU process list"] == "0 process(es)"
    assert not g6.is_sparktui_own({"command": "python3"}) and not g6.is_sparktui_own({"command": None})


def test_review_without_meminfo_still_says_when():
    r = readings(history(snap(vllm(5120, 0.9, ENGINE_CORE), t=T0 + 120)), meminfo=False)
    v = judge(r, Config())
    assert v.status is Status.WARN and "(worst at 16:02:00 UTC (+00:00:00); warn in 1 of 1" in v.summary


def test_the_gotcha_reads_processes_and_meminfo_every_ten_seconds():
    assert g6.GOTCHA.probes == ("processes", "meminfo") and g6.GOTCHA.cadence_s == 10.0 and not g6.GOTCHA.intrusive
    assert "N/A is an unknown amount" in g6.GOTCHA.check and "idle" in g6.GOTCHA.check


def test_review_of_a_snapshot_without_a_time_says_so():
    v = g6v(history(snap(vllm(5120, 0.9, ENGINE_CORE))))
    assert v.status is Status.WARN and "(worst at an unknown time (the snapshot has no time); warn in 1 of 1" in v.summary


def test_cap_precedence_does_not_depend_on_row_order():
    rows = vllm(2141, 0.3, 28 * GIB)
    rows[0]["cap"] = {"state": "unreadable", "fraction": None, "source": "environment unreadable", "detail": ""}
    rows.reverse()  # the unreadable one first: set still wins over it
    assert g6v(snap(rows)).summary == "vLLM pid 2141 capped at 0.3, alone on the pool"
    nim = [server(7101, "nim", None, listed=False, name="nim worker", state="none"),
           server(7100, "nim", 40 * GIB, name="nim_llm", state="default")]
    nim[0]["group"] = 7100  # "none" listed first: a default still wins over it
    assert g6v(snap(nim)).summary.startswith("NIM pid 7100: no cap given (default: a large share)")


@pytest.mark.parametrize("skipped", [{"vanished": 0, "denied": 3}, {"vanished": 2, "denied": 0}])
def test_any_skipped_process_is_named_and_evidence_names_the_reading(skipped):
    v = g6v(snap(job(3310, LORA), skipped=skipped))
    ev = {e.what: e for e in v.evidence}
    assert ev["processes skipped mid-scan"].value == f"{skipped['vanished']} exited, {skipped['denied']} denied"
    assert ev["training pid 3310 (torchrun)"].source == "test scan"


def test_own_script_with_no_arguments_and_the_pool_evidence_source():
    assert g6.is_sparktui_own({"command": "python3 /opt/sparktui/probes/bandwidth_script.py"})
    r = readings(snap(job(3310, LORA)))
    r.add(Reading("meminfo", {"MemTotal": TOTAL, "MemAvailable": 100 * GIB}, source=""))
    assert {e.what: e.source for e in judge(r, Config()).evidence}["the pool"] == "/proc/meminfo"


# -- every verdict's form: its id, its fix, evidence with a source (mutation survivors) ------------

FORM_CASES = {
    "ok capped beside a LoRA": lambda: snap(vllm(2141, 0.5, 60 * GIB), job(3325, LORA)),
    "fail uncapped beside training": lambda: snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), job(3325, 15 * GIB)),
    "warn uncapped alone": lambda: snap(vllm(5120, 0.9, ENGINE_CORE, state="default")),
    "unknown container": lambda: snap(inside=True),
    "unknown NVML down": lambda: snap(job(3325, None, listed=False), nv_ok=False),
    "ok nothing": lambda: snap(),
    "own processes left out": lambda: snap(job(3325, LORA), own_excluded=2),
}


@pytest.mark.parametrize("name", sorted(FORM_CASES))
def test_every_verdict_is_g6_with_its_fix_and_sourced_evidence(name):
    data = FORM_CASES[name]()
    for v in (g6v(data), g6v(dict(data, t=T0 + 60, history=[dict(data, t=T0 + 60)], review=True))):
        assert v.id == "G6", name
        if v.status is Status.OK:
            assert v.fix == g6.FIX, name  # nothing to do: the generic text, for reference
        elif "5120" in name or "uncapped" in name:
            assert "kill 5120" in v.fix and "--gpu-memory-utilization 0.5" in v.fix, name
        else:
            assert v.fix == g6.FIND_FIX, name
        assert v.evidence, name
        for e in v.evidence:
            assert isinstance(e.what, str) and e.what and isinstance(e.source, str) and e.source, (name, e)


def test_the_container_evidence_names_its_markers_and_says_yes_no_or_cannot_tell():
    for inside, said in ((True, "yes"), (False, "no"), (None, "cannot tell")):
        ev = {e.what: e for e in g6v(snap(job(3325, LORA), inside=inside)).evidence}
        row = ev["inside a container"]
        assert row.value == said and row.source == "/.dockerenv, /run/.containerenv, /proc/1/cgroup"


def test_own_processes_left_out_are_said_with_psutil_as_the_source():
    ev = {e.what: e for e in g6v(snap(job(3325, LORA), own_excluded=2)).evidence}
    row = next(e for w, e in ev.items() if "sparktui" in w)
    assert row.source == "psutil" and "2" in str(row.value)


def test_a_job_with_na_memory_counts_as_a_job_not_a_tiny_context():
    # N/A is not tiny: beside an uncapped vLLM it makes the pair a failure, as a listed job would
    v = g6v(snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), job(3325, None, kind="gpu-process", name="python3")))
    assert v.status.value == "fail" and "pid 3325" in v.summary


def test_a_tiny_gpu_process_is_not_a_job():
    v = g6v(snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), job(3325, SMALL - 1, kind="gpu-process", name="Xorg")))
    assert v.status.value == "warn"  # the uncapped server alone: no job beside it
