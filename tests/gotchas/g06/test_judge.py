"""G6's judge: the facts a user acts on, pinned where mutation testing found them unchecked.

The fix's commands filled from what was seen (the server's own command line with its cap, the pids
to stop), where each piece of evidence comes from, the review of a recording whose snapshots go
back in time, and the smaller guards (the rows' grouping, an unknown server name, the container
reading's keys). Readings are built as in tests/gotchas/g06/test_rules.py, with GB10's numbers
(docs/reference/FACTS.md: MemTotal 121.7 GiB, a VLLM::EngineCore holding 89093 MiB).
"""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.gotchas import g06_contention as g6
from sparktui.gotchas.g06_contention import judge
from tests.gotchas.builders import (ENGINE_CORE, LORA, g6_history as history, g6_readings as readings, g6v, job,
                                    server, snap, vllm)
from tests.gotchas.builders import GIB, T0


def ev_of(v) -> dict:
    return {e.what: e for e in v.evidence}


def vllm_with(pid: int, command: str, fraction: float = 0.9, state: str = "set") -> list[dict]:
    rows = vllm(pid, fraction, ENGINE_CORE, state=state)
    rows[0]["command"] = command
    return rows


# -- the restart line: the server's own command line, its cap replaced ------------------------------

def test_the_restart_line_is_the_servers_own_command_with_its_cap_set_to_the_limit():
    cmd = "/home/spark/.venv/bin/vllm serve Qwen/Qwen3-32B --gpu-memory-utilization 0.9 --max-model-len 8192"
    v = g6v(snap(vllm_with(5120, cmd), job(3310, 16 * GIB)))
    assert v.status is Status.FAIL
    assert ("/home/spark/.venv/bin/vllm serve Qwen/Qwen3-32B --max-model-len 8192 --gpu-memory-utilization 0.5"
            in v.fix.splitlines())


def test_a_cap_given_with_an_equals_sign_is_replaced_not_repeated():
    cmd = "vllm serve m --gpu-memory-utilization=0.95"
    v = g6v(snap(vllm_with(5120, cmd, fraction=0.95), job(3310, 16 * GIB)))
    assert "vllm serve m --gpu-memory-utilization 0.5" in v.fix.splitlines()
    assert "=0.95" not in v.fix


@pytest.mark.parametrize("length,kept", [(399, True), (400, False)])
def test_a_command_line_as_long_as_the_probe_keeps_is_not_trusted_whole(length, kept):
    """probes/processes.py cuts a command line at 400 characters: one that long may be cut, so the
    fix prints the real one from /proc instead of restarting a truncated command."""
    head = "vllm serve m --gpu-memory-utilization 0.9 --served-model-name "
    cmd = head + "x" * (length - len(head))
    assert len(cmd) == length
    v = g6v(snap(vllm_with(5120, cmd), job(3310, 16 * GIB)))
    reprint = "tr '\\0' ' ' < /proc/5120/cmdline; echo"
    if kept:
        assert reprint not in v.fix and any(line.startswith("vllm serve m --served-model-name x") and
                                            line.endswith("--gpu-memory-utilization 0.5") for line in v.fix.splitlines())
    else:
        assert reprint in v.fix.splitlines() and "--gpu-memory-utilization 0.5 in place of any" in v.fix


def test_with_cap_keeps_every_other_word_and_drops_an_earlier_value():
    assert g6.with_cap("vllm serve m --gpu-memory-utilization 0.9 --port 8000", "--gpu-memory-utilization", 0.5) == [
        "vllm", "serve", "m", "--port", "8000", "--gpu-memory-utilization", "0.5"]
    assert g6.with_cap("x" * 399, "--f", 0.5) == ["x" * 399, "--f", "0.5"]
    assert g6.with_cap("x" * 400, "--f", 0.5) is None


# -- the stop blocks: every pid seen, by its label ------------------------------------------------

def test_two_jobs_each_get_a_stop_block_with_their_pid():
    v = g6v(snap(job(3310, 10 * GIB), job(4410, 10 * GIB, name="train_dpo.py")))
    assert v.status is Status.WARN
    lines = v.fix.splitlines()
    assert "  *) kill 3310 ;;" in lines and "  *) kill 4410 ;;" in lines
    assert any("stop training pid 3310 (torchrun)" in line for line in lines)
    assert any("stop training pid 4410 (train_dpo.py)" in line for line in lines)


def test_one_job_beside_an_uncapped_server_is_not_told_to_stop():
    v = g6v(snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), job(3310, 16 * GIB)))
    assert "kill 5120" in v.fix and "kill 3310" not in v.fix


# -- rows: how they are grouped and what they hold --------------------------------------------------

def test_rows_without_a_group_are_each_their_own_instance():
    a, b = job(3310, 10 * GIB), job(4410, 10 * GIB, name="train_dpo.py")
    del a["group"], b["group"]
    v = g6v(snap(a, b))
    assert v.status is Status.WARN and v.summary.startswith("2 uncapped jobs share the pool")


def test_a_row_with_a_gpu_figure_is_on_the_gpu_even_without_the_on_gpu_flag():
    big = job(3310, 62 * GIB)
    del big["on_gpu"]
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), big))  # 60.9 + 62 GiB: more than the 121.7 GiB pool
    assert v.status is Status.FAIL and "training pid 3310 (torchrun) holds 62.0 GiB" in v.summary


def test_an_impossible_holding_beside_another_process_is_unknown_not_added_up():
    """A job NVML says holds more than the whole pool is a measurement error: it is not summed into
    a failure beside a capped server, its holding is unknown."""
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, 200 * GIB)))
    assert v.status is Status.UNKNOWN and v.summary.startswith("cannot tell: measurement error: pid 3310 holds 200.0 GiB")
    assert ev_of(v)["training pid 3310 (torchrun)"].value.startswith("gpu unknown: measurement error")
    assert not any(e.what == "also" and "fail" in e.value for e in v.evidence)


def test_a_gpu_process_with_a_non_numeric_figure_is_a_measurement_error_not_a_crash():
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(9100, "N/A", kind="gpu-process", name="python3")))
    assert v.status is Status.UNKNOWN and "pid 9100 holds 'N/A' bytes" in v.summary


def test_an_unknown_server_name_is_labelled_by_its_name_and_judged_by_what_it_holds():
    idle = server(7700, "exllama", 0, listed=False, name="exllama serve")
    v = g6v(snap(idle, job(3310, LORA)))
    assert v.status is Status.OK
    assert v.summary == "one job on the pool: training pid 3310 (torchrun); exllama pid 7700 holds nothing on the GPU (idle: no model loaded)"
    assert ev_of(v)["exllama pid 7700 can take"].value.startswith("what it holds, plus any model it loads")


def test_a_job_is_named_by_its_process_name_when_it_has_no_name():
    row = job(3310, 16 * GIB)
    row["name"], row["process_name"] = "", "python3"
    assert g6v(snap(row)).summary == "one job on the pool: training pid 3310 (python3)"
    row["process_name"] = None
    assert g6v(snap(row)).summary == "one job on the pool: training pid 3310 (?)"


# -- caps: none, default, a detail ------------------------------------------------------------------

def test_a_fraction_server_with_no_cap_at_all_warns_and_is_not_called_unreadable():
    sg = server(6100, "sglang", 70 * GIB, name="sglang.launch_server", state="none")
    v = g6v(snap(sg))
    assert v.status is Status.WARN and v.summary.startswith("SGLang pid 6100: no memory cap")
    assert not any("unreadable" in str(e.value) for e in v.evidence)


def test_a_set_cap_without_a_figure_is_not_understood():
    sg = server(6100, "sglang", 70 * GIB, name="sglang.launch_server", state="set")
    v = g6v(snap(sg))
    assert v.status is Status.WARN and "SGLang pid 6100: cap not understood" in v.summary
    row = ev_of(v)["SGLang pid 6100 memory cap"]
    assert row.value == "set: sglang's cap (a large share)" and row.source == "test scan"


def test_two_servers_at_small_defaults_that_add_up_past_the_limit_warn():
    a = server(6100, "sglang", 20 * GIB, name="sglang a", state="default", fraction=0.3)
    b = server(6200, "sglang", 20 * GIB, name="sglang b", state="default", fraction=0.3)
    v = g6v(snap(a, b))
    assert v.status is Status.WARN
    assert v.summary == "2 capped servers add up to 0.6 of memory: SGLang pid 6100 at 0.3, SGLang pid 6200 at 0.3"


def test_a_cap_over_the_limit_is_said_over_with_the_limit():
    v = g6v(snap(vllm(2141, 0.7, 58 * GIB)))
    row = ev_of(v)["vLLM pid 2141 memory cap"]
    assert row.value == "0.7 (--gpu-memory-utilization 0.7): over 0.5" and row.source == "test scan"


def test_a_fraction_server_without_a_cap_reading_says_not_found_with_its_source():
    rows = vllm(2141, 0.5, 58 * GIB)
    for r in rows:
        r["cap"] = None
    v = g6v(snap(rows))
    assert v.status is Status.UNKNOWN and v.summary == "cannot tell: memory cap unreadable for vLLM pid 2141 (cap not found)"
    row = ev_of(v)["vLLM pid 2141 memory cap"]
    assert row.value == "not found" and row.source == "test scan"


def test_a_non_fraction_servers_cap_detail_is_in_its_evidence():
    ol = server(4000, "ollama", 9 * GIB, name="ollama runner", state="set")
    ol["cap"]["detail"] = "OLLAMA_MAX_LOADED_MODELS=3"
    row = ev_of(g6v(snap(ol, job(3310, LORA))))["Ollama pid 4000 memory cap"]
    assert row.value == "set: ollama's cap; OLLAMA_MAX_LOADED_MODELS=3"


def test_a_llamacpp_server_is_described_by_what_it_holds_even_with_a_fraction_on_its_row():
    ll = server(5500, "llamacpp", 5 * GIB, name="llama-server", state="set", fraction=0.3)
    v = g6v(snap(ll, job(3310, LORA)))
    assert v.status is Status.OK and v.summary.startswith("llama.cpp pid 5500 holding 5.0 GiB beside training pid 3310")


# -- the container reading, NVML's error, the pool -----------------------------------------------

@pytest.mark.parametrize("key", ["inside", "in_container", "containerized"])
def test_each_key_of_the_container_reading_answers(key):
    r = readings(snap(job(491, GIB), inside=None))
    r.add(Reading("container", {key: True}))
    assert judge(r, Config()).summary.startswith("cannot tell: host processes not visible")
    r.add(Reading("container", {key: False}))
    assert judge(r, Config()).status is Status.OK


def test_inside_a_container_the_summary_counts_every_server_and_job_seen():
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, LORA), job(4410, LORA, name="eval.py"), inside=True))
    assert v.status is Status.WARN  # the two jobs; that the host is unseen comes with it
    also = [e.value for e in v.evidence if e.what == "also"]
    assert any("only its own 3 server/job process(es) are seen" in a for a in also)
    assert all(e.source == "G6" for e in v.evidence if e.what == "also")


def test_nvml_unavailable_gives_its_error_in_the_summary_and_the_evidence():
    v = g6v(snap(job(3310, None, listed=False), nv_ok=False))
    assert "NVML process list unavailable (NVML_ERROR_LIBRARY_NOT_FOUND)" in v.summary
    row = ev_of(v)["NVML GPU process list"]
    assert row.value == "unavailable: NVML_ERROR_LIBRARY_NOT_FOUND" and row.source == "NVML"


def test_memtotal_unread_names_what_could_not_be_weighed():
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), job(3310, LORA)), meminfo=False)
    assert v.status is Status.UNKNOWN
    assert v.summary.startswith("cannot tell whether vLLM pid 2141, training pid 3310 (torchrun) fit the pool: MemTotal unread")


def test_the_smallest_positive_memtotal_is_a_reading():
    """0 < MemTotal: one byte is odd but not impossible; zero is impossible."""
    assert g6.read_pool(readings(snap(), total=1, available=None)).total == 1
    assert g6.read_pool(readings(snap(), total=0, available=None)).total is None


def test_skipped_counts_default_to_zero():
    v = g6v(snap(job(3310, LORA), skipped={"denied": 2}))
    row = ev_of(v)["processes skipped mid-scan"]
    assert row.value == "0 exited, 2 denied" and row.source == "psutil"


def test_own_probe_scripts_in_the_rows_are_counted_in_the_evidence_with_the_reading():
    probe = job(626, None, listed=False, name="python3")
    probe["command"] = "/usr/bin/python3 /opt/sparktui/probes/target_script.py --fd 9"
    row = ev_of(g6v(snap(job(3310, LORA), probe)))["sparktui's own processes"]
    assert row.value == "1 left out (probe scripts, never the workload)" and row.source == "test scan"


def test_a_failed_scan_is_g6_with_the_generic_find_block():
    v = g6v(snap(scan_error="process scan failed: OSError"))
    assert v.id == "G6" and v.status is Status.UNKNOWN and v.fix == g6.FIND_FIX
    assert v.summary == "cannot see the processes: process scan failed: OSError"


def test_a_snapshot_without_the_nvml_field_is_unknown_naming_the_process_list():
    v = g6v({"rows": [], "container": {"inside": False}})
    assert v.id == "G6" and v.status is Status.UNKNOWN
    assert v.summary == "cannot tell: process list: the processes reading has no nvml field"


# -- review: the recording's start, snapshots out of order, nothing readable ------------------------

def test_review_offsets_from_meminfos_start_not_the_first_snapshot():
    v = g6v(history(snap(vllm(5120, 0.9, ENGINE_CORE), t=T0 + 600)), t0=T0)
    assert "(worst at 16:10:00 UTC (+00:10:00); warn in 1 of 1" in v.summary


def test_a_recording_with_no_readable_snapshot_is_unknown_with_the_find_block():
    v = g6v(dict(snap(), history=["x", 1], review=True))
    assert v.id == "G6" and v.status is Status.UNKNOWN and v.fix == g6.FIND_FIX and v.evidence == ()
    assert v.summary == "cannot tell: the recording has no readable process snapshot"


def test_snapshots_going_back_in_time_make_an_ok_recording_unknown():
    ok = [snap(job(3310, LORA), t=T0 + s) for s in (0, 60, 30)]
    v = g6v(history(*ok), t0=T0)
    assert v.id == "G6" and v.status is Status.UNKNOWN and v.fix == g6.FIND_FIX
    said = "the recording's process snapshots are out of order (snapshot 3 of 3, at 16:00:30 UTC (+00:00:30), comes after one 30 s later)"
    assert v.summary == f"cannot tell: {said}"
    row = ev_of(v)["snapshot order"]
    assert row.value == said and row.source == "test scan"
    assert "training pid 3310 (torchrun)" in ev_of(v)  # the worst snapshot's evidence comes with it


def test_snapshots_at_the_same_moment_are_in_order():
    v = g6v(history(snap(job(3310, LORA), t=T0), snap(job(3310, LORA), t=T0)), t0=T0)
    assert v.status is Status.OK and "snapshot order" not in ev_of(v)


def test_out_of_order_snapshots_do_not_hide_a_failure():
    bad = snap(vllm(5120, 0.9, ENGINE_CORE, state="default"), job(3310, 16 * GIB), t=T0 + 60)
    v = g6v(history(snap(job(3310, LORA), t=T0 + 120), bad), t0=T0)
    assert v.status is Status.FAIL and "kill 5120" in v.fix
    assert ev_of(v)["snapshot order"].value.endswith("(snapshot 2 of 2, at 16:01:00 UTC (+00:01:00), comes after one 60 s later)")


def test_review_evidence_comes_from_the_recording():
    v = g6v(history(snap(job(3310, LORA), t=T0)), t0=T0)
    ev = ev_of(v)
    assert ev["worst moment"].source == "test scan" and ev["process snapshots judged"].value == "1 ok"
    assert ev["training pid 3310 (torchrun)"].source == "test scan"


def test_every_pid_listed_without_a_figure_is_named():
    rank0, rank1 = job(3325, None, name="train.py"), job(3326, None, name="train.py")
    rank1["group"] = 3325
    v = g6v(snap(vllm(2141, 0.5, 58 * GIB), rank0, rank1))
    assert v.status is Status.UNKNOWN and "(N/A: NVML lists pid 3325, 3326 without a figure)" in v.summary
